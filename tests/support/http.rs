//! Small HTTP servers on loopback for the tests that need answers the generated site does not give.
#![allow(dead_code)]

use std::net::SocketAddr;

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// Serves `app` on a fresh loopback port, in the background; returns the address.
pub async fn serve(app: Router) -> SocketAddr {
    squall_testsite::serve_router(app)
        .await
        .expect("a loopback port")
}

/// An HTML page with `body`.
pub fn html(body: impl Into<String>) -> Response {
    ([(header::CONTENT_TYPE, "text/html")], body.into()).into_response()
}
