//! Serving the hostile site: the route of each path, the endless and dripping bodies that stop
//! when the site does, and the request log.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use crate::RequestRecord;
use crate::server::request_host;

use super::HOSTILE_HOST;
use super::content::{Content, HTML, page};

/// Interval between two bytes of `/drip`.
pub const DRIP_INTERVAL: Duration = Duration::from_secs(1);

/// Decrements the active-stream counter when a streaming body is dropped.
pub(super) struct StreamGuard(Arc<AtomicUsize>);

impl StreamGuard {
    fn new(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        StreamGuard(Arc::clone(counter))
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(super) struct Shared {
    pub(super) port: u16,
    pub(super) content: &'static Content,
    pub(super) active_streams: Arc<AtomicUsize>,
    pub(super) streams_started: AtomicUsize,
    pub(super) cancel: CancellationToken,
    pub(super) log: Mutex<Vec<RequestRecord>>,
}

impl Shared {
    pub(super) fn log(&self) -> MutexGuard<'_, Vec<RequestRecord>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn url(&self, path: &str) -> String {
        crate::url_for(HOSTILE_HOST, self.port, path)
    }
}

pub(super) fn shutdown_error() -> std::io::Error {
    std::io::Error::other("hostile site shutting down")
}

/// `/drip`: one byte per [`DRIP_INTERVAL`], forever.
pub(super) fn drip_body(shared: &Shared) -> Body {
    const TEXT: &[u8] = b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Drip</title></head>\n<body><p>";
    struct St {
        n: usize,
        done: bool,
        cancel: CancellationToken,
        _guard: StreamGuard,
    }
    let st = St {
        n: 0,
        done: false,
        cancel: shared.cancel.clone(),
        _guard: StreamGuard::new(&shared.active_streams),
    };
    Body::from_stream(futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        if st.n > 0 {
            tokio::select! {
                () = tokio::time::sleep(DRIP_INTERVAL) => {}
                () = st.cancel.cancelled() => {
                    st.done = true;
                    return Some((Err(shutdown_error()), st));
                }
            }
        }
        let byte = TEXT.get(st.n).copied().unwrap_or(b'.');
        st.n += 1;
        Some((Ok::<_, std::io::Error>(Bytes::copy_from_slice(&[byte])), st))
    }))
}

/// `/endless`: the head, then [`ENDLESS_CHUNK_LEN`] chunks forever.
pub(super) fn endless_body(shared: &Shared) -> Body {
    struct St {
        first: bool,
        done: bool,
        head: Bytes,
        chunk: Bytes,
        cancel: CancellationToken,
        _guard: StreamGuard,
    }
    let st = St {
        first: true,
        done: false,
        head: shared.content.endless_head.clone(),
        chunk: shared.content.endless_chunk.clone(),
        cancel: shared.cancel.clone(),
        _guard: StreamGuard::new(&shared.active_streams),
    };
    Body::from_stream(futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        if st.cancel.is_cancelled() {
            st.done = true;
            return Some((Err(shutdown_error()), st));
        }
        let b = if st.first {
            st.first = false;
            st.head.clone()
        } else {
            st.chunk.clone()
        };
        Some((Ok::<_, std::io::Error>(b), st))
    }))
}

pub(super) fn respond(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

pub(super) fn ok_html(body: &Bytes) -> Response {
    respond(StatusCode::OK, HTML, Body::from(body.clone()))
}

pub(super) fn not_found(shared: &Shared) -> Response {
    respond(
        StatusCode::NOT_FOUND,
        HTML,
        Body::from(shared.content.not_found.clone()),
    )
}

pub(super) fn redirect(shared: &Shared, to: &str) -> Response {
    let url = shared.url(to);
    let mut resp = respond(
        StatusCode::MOVED_PERMANENTLY,
        HTML,
        Body::from(page("Moved", &format!("<p>Moved to {url}</p>\n"))),
    );
    if let Ok(v) = HeaderValue::from_str(&url) {
        resp.headers_mut().insert(LOCATION, v);
    }
    resp
}

/// `N` of `/{prefix}N` if N is a decimal number.
pub(super) fn numbered(path: &str, prefix: &str) -> Option<u64> {
    let n = path.strip_prefix(prefix)?;
    if n.is_empty() || n.len() > 18 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

pub(super) fn route(shared: &Shared, method: &Method, path: &str) -> Response {
    let c = shared.content;
    if method != Method::GET && method != Method::HEAD {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            HTML,
            Body::from(c.not_allowed.clone()),
        );
    }
    match path {
        "/" => ok_html(&c.index),
        "/drip" => respond(StatusCode::OK, HTML, drip_body(shared)),
        "/endless" => respond(StatusCode::OK, HTML, endless_body(shared)),
        "/gzip-bomb" => {
            let mut r = ok_html(&c.gzip_bomb);
            r.headers_mut()
                .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            r
        }
        "/loop/a" => redirect(shared, "/loop/b"),
        "/loop/b" => redirect(shared, "/loop/a"),
        "/loop/self" => redirect(shared, "/loop/self"),
        "/invalid-utf8" => ok_html(&c.invalid_utf8),
        "/lying-type" => ok_html(&c.lying_type),
        "/lying-type-2" => respond(
            StatusCode::OK,
            "image/png",
            Body::from(c.lying_type_2.clone()),
        ),
        "/many-links" => ok_html(&c.many_links),
        "/broken-html" => ok_html(&c.broken_html),
        _ => {
            if let Some(n) = numbered(path, "/ok/") {
                let body = page(
                    &format!("OK {n}"),
                    &format!("<h1>OK {n}</h1>\n<p>A small valid page.</p>\n"),
                );
                respond(StatusCode::OK, HTML, Body::from(body))
            } else {
                not_found(shared)
            }
        }
    }
}

pub(super) async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let at = Instant::now();
    let host = request_host(&req);
    let resp = route(&shared, req.method(), req.uri().path());
    if matches!(req.uri().path(), "/drip" | "/endless") && req.method() == Method::GET {
        shared.streams_started.fetch_add(1, Ordering::SeqCst);
    }
    let record = RequestRecord::of(&req, host, shared.port, resp.status(), at);
    shared.log().push(record);
    resp
}
