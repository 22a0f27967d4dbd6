//! The app site's HTTP handler: which path of which host answers what.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use serde::Serialize;

use super::AppSpec;
use super::pages::{APP_JS, LOGO_PNG, home_html, never_settles_html, post_html, scroll_html};
use super::posts::{PostJson, PostsPage};
use crate::RequestRecord;
use crate::server::{request_host, status_page_html};

const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json";
const JS: &str = "text/javascript; charset=utf-8";

/// State shared by every request of one app site.
pub(crate) struct Shared {
    /// The spec the site serves.
    pub(crate) spec: AppSpec,
    /// The port of the server, part of every logged URL.
    pub(crate) port: u16,
    hosts: HashSet<String>,
    log: Mutex<Vec<RequestRecord>>,
}

impl Shared {
    /// State for `spec` served on `port`.
    pub(crate) fn new(spec: AppSpec, port: u16) -> Shared {
        Shared {
            hosts: spec.host_names().into_iter().collect(),
            spec,
            port,
            log: Mutex::new(Vec::new()),
        }
    }

    /// The request log.
    pub(crate) fn log(&self) -> MutexGuard<'_, Vec<RequestRecord>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The router answering every request of the site.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let at = Instant::now();
    let host = request_host(&req);
    let resp = route(&shared, &host, req.method(), req.uri());
    let api = shared.hosts.contains(&host) && req.uri().path().starts_with("/api/");
    let record = RequestRecord::of(&req, host, shared.port, resp.status(), at);
    shared.log().push(record);
    if api && !shared.spec.api_delay.is_zero() {
        tokio::time::sleep(shared.spec.api_delay).await;
    }
    resp
}

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response {
    let mut resp = Response::new(body.into());
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn status_page(status: StatusCode) -> Response {
    respond(status, HTML, status_page_html(status))
}

fn json(status: StatusCode, value: &impl Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => respond(status, JSON, body),
        Err(_) => status_page(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

fn json_error(status: StatusCode, error: &str) -> Response {
    json(status, &serde_json::json!({ "error": error }))
}

/// `N` of `{prefix}N` if N is a canonical decimal number (no sign, no
/// leading zero).
fn numbered(path: &str, prefix: &str) -> Option<usize> {
    let n = path.strip_prefix(prefix)?;
    let canonical = !n.is_empty()
        && n.len() <= 18
        && n.bytes().all(|b| b.is_ascii_digit())
        && (n == "0" || !n.starts_with('0'));
    if canonical { n.parse().ok() } else { None }
}

/// The page number of `/api/posts?page=N`: 0 without a `page` parameter,
/// `None` if it is not a number.
fn page_param(query: Option<&str>) -> Option<usize> {
    let value = query
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("page="));
    match value {
        None => Some(0),
        Some(v) if !v.is_empty() && v.len() <= 18 && v.bytes().all(|b| b.is_ascii_digit()) => {
            v.parse().ok()
        }
        Some(_) => None,
    }
}

fn route(shared: &Shared, host: &str, method: &Method, uri: &axum::http::Uri) -> Response {
    if !shared.hosts.contains(host) {
        return status_page(StatusCode::NOT_FOUND);
    }
    if method != Method::GET && method != Method::HEAD {
        return status_page(StatusCode::METHOD_NOT_ALLOWED);
    }
    let path = uri.path();
    match path {
        "/" => respond(StatusCode::OK, HTML, home_html()),
        "/scroll" => respond(StatusCode::OK, HTML, scroll_html()),
        "/never-settles" => respond(StatusCode::OK, HTML, never_settles_html()),
        "/static/app.js" => respond(StatusCode::OK, JS, APP_JS),
        "/static/logo.png" => respond(StatusCode::OK, "image/png", LOGO_PNG),
        "/api/tick" => json(StatusCode::OK, &serde_json::json!({ "ok": true })),
        "/api/posts" => match page_param(uri.query()) {
            Some(page) => json(StatusCode::OK, &PostsPage::of(&shared.spec, host, page)),
            None => json_error(StatusCode::BAD_REQUEST, "bad page"),
        },
        _ => {
            if numbered(path, "/post/").is_some() {
                respond(StatusCode::OK, HTML, post_html())
            } else if let Some(id) = numbered(path, "/go/") {
                redirect(shared, host, &format!("/post/{id}"))
            } else if path.starts_with("/api/post/") {
                numbered(path, "/api/post/")
                    .and_then(|id| PostJson::of(&shared.spec, host, id))
                    .map_or_else(
                        || json_error(StatusCode::NOT_FOUND, "not found"),
                        |post| json(StatusCode::OK, &post),
                    )
            } else if path.starts_with("/api/") {
                json_error(StatusCode::NOT_FOUND, "not found")
            } else {
                status_page(StatusCode::NOT_FOUND)
            }
        }
    }
}

/// A 301 to `path` on the same host, as an absolute URL with the port.
fn redirect(shared: &Shared, host: &str, path: &str) -> Response {
    let url = crate::url_for(host, shared.port, path);
    let mut resp = respond(
        StatusCode::MOVED_PERMANENTLY,
        HTML,
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Moved</title></head>\n<body><p>Moved to {url}</p></body></html>\n"
        ),
    );
    if let Ok(v) = HeaderValue::from_str(&url) {
        resp.headers_mut().insert(LOCATION, v);
    }
    resp
}
