//! One request a site received, as its request log keeps it.

use std::time::Instant;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::USER_AGENT;

/// One request received by the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// HTTP method (`GET`, `HEAD`, ...).
    pub method: String,
    /// Host name from the `Host` header (or the URI authority), lowercase,
    /// without the port.
    pub host: String,
    /// Path and query as requested, e.g. `/p/17.html`.
    pub path: String,
    /// `http://{host}:{port}{path}`, with the site's port: directly
    /// comparable with the URLs of an [`Expectation`](crate::Expectation).
    pub url: String,
    /// Status code served.
    pub status: u16,
    /// `User-Agent` header, if any.
    pub user_agent: Option<String>,
    /// When the request was received (monotonic clock).
    pub at: Instant,
}

impl RequestRecord {
    /// The record of `req` to `host` (see `server::request_host`) on a site served on `port`, answered
    /// with `status`, received `at`.
    pub(crate) fn of(
        req: &Request,
        host: String,
        port: u16,
        status: StatusCode,
        at: Instant,
    ) -> RequestRecord {
        let path = req
            .uri()
            .path_and_query()
            .map_or_else(|| req.uri().path().to_owned(), |pq| pq.as_str().to_owned());
        RequestRecord {
            method: req.method().as_str().to_owned(),
            url: crate::url_for(&host, port, &path),
            host,
            path,
            status: status.as_u16(),
            user_agent: req
                .headers()
                .get(USER_AGENT)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            at,
        }
    }
}
