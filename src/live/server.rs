//! The status page's HTTP server: `GET /` is the page, `GET /status.json` the document it draws.
//! Nothing else is served, and nothing is fetched from elsewhere: the page works offline.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use futures::future::BoxFuture;
use tokio::task::JoinHandle;

use super::document::StatusDocument;

/// The page: one HTML file with its styles and script inline.
pub const PAGE: &str = include_str!("page.html");

/// What a status page shows: a document made when asked (cached as its maker sees fit).
pub trait DocumentSource: Send + Sync + 'static {
    /// Gathers, before a document is asked for, what making it takes waiting for (the crawl's
    /// view asks the fetcher for its queues). By default there is nothing to wait for.
    fn prepare(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The document as of now.
    fn document(&self) -> Arc<StatusDocument>;

    /// The same document as JSON, what `/status.json` serves. By default the document is written
    /// out on every call; a source with a [`DocumentCache`](super::DocumentCache) hands out the
    /// bytes it wrote once.
    fn json(&self) -> Result<Bytes, serde_json::Error> {
        serde_json::to_vec(self.document().as_ref()).map(Bytes::from)
    }
}

/// Why the status page could not be served.
#[derive(Debug, thiserror::Error)]
#[error("cannot serve the status page on {addr}: {source}")]
pub struct ServeError {
    /// The address asked for.
    pub addr: SocketAddr,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

/// A status page being served; dropping it stops the server.
#[derive(Debug)]
pub struct StatusServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl StatusServer {
    /// The address it listens on (with the port the system chose, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for StatusServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `source`'s page and JSON on `addr` until the returned server is dropped.
pub async fn serve(
    addr: SocketAddr,
    source: Arc<dyn DocumentSource>,
) -> Result<StatusServer, ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError { addr, source })?;
    let app = Router::new()
        .route("/", get(page))
        .route("/status.json", get(status))
        .with_state(source);
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::warn!(%error, "the status page stopped");
        }
    });
    Ok(StatusServer { addr: bound, task })
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; img-src 'self'",
            ),
        ],
        PAGE,
    )
        .into_response()
}

async fn status(State(source): State<Arc<dyn DocumentSource>>) -> Response {
    source.prepare().await;
    let body = match source.json() {
        Ok(body) => body,
        Err(error) => {
            let message = format!("cannot write the status document: {error}");
            return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, message).into_response();
        }
    };
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}
