//! The status page's HTTP server: `GET /` is the page, `GET /status.json` the document it draws.
//! Nothing else is served, and nothing is fetched from elsewhere: the page works offline.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::task::JoinHandle;

use super::source::DocumentSource;
use crate::listen::{GuardedListener, ListenLimits};

/// The page: one HTML file with its styles and script inline.
pub const PAGE: &str = include_str!("page.html");

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

/// Serves `source`'s page and JSON on `addr` until the returned server is dropped, with the
/// default [`ListenLimits`].
pub async fn serve(
    addr: SocketAddr,
    source: Arc<dyn DocumentSource>,
) -> Result<StatusServer, ServeError> {
    serve_with(addr, source, ListenLimits::default()).await
}

/// [`serve`] within `limits`. The page answers only requests whose `Host` is an IP address or
/// `localhost` (what a browser sends for the address the page was opened at): a web page
/// elsewhere cannot read it through a host name of its own that resolves to this address (DNS
/// rebinding). Off loopback the page is open to whoever reaches it, which is said in a warning.
pub async fn serve_with(
    addr: SocketAddr,
    source: Arc<dyn DocumentSource>,
    limits: ListenLimits,
) -> Result<StatusServer, ServeError> {
    let app = Router::new()
        .route("/", get(page))
        .route("/status.json", get(status))
        .with_state(source);
    serve_router(addr, "status page", app, limits).await
}

/// Installs a Prometheus recorder as the process's `metrics` recorder and serves what it
/// records at `/metrics` on `addr` (Prometheus' text format), within the default
/// [`ListenLimits`], until the returned server is dropped.
pub async fn serve_metrics(addr: SocketAddr) -> Result<StatusServer, ServeError> {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .map_err(|error| ServeError {
            addr,
            source: std::io::Error::other(error),
        })?;
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    let render = move || handle.render();
    let app = Router::new().route(
        "/metrics",
        get(move || {
            let text = render();
            async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text) }
        }),
    );
    serve_router(addr, "metrics", app, ListenLimits::default()).await
}

/// Serves `app` on `addr`, its requests checked for their `Host` first.
async fn serve_router(
    addr: SocketAddr,
    name: &'static str,
    app: Router,
    limits: ListenLimits,
) -> Result<StatusServer, ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError { addr, source })?;
    if !bound.ip().is_loopback() {
        tracing::warn!(%bound, "the {name} is served to every machine that reaches {bound}, with no password");
    }
    let app = app.layer(axum::middleware::from_fn(host_check));
    let listener = GuardedListener::new(listener, name, limits);
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::warn!(%error, "the {name} stopped");
        }
    });
    Ok(StatusServer { addr: bound, task })
}

/// Answers 421 to a request whose `Host` names neither an IP address nor `localhost`.
async fn host_check(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if host_is_direct(host) {
        return next.run(request).await;
    }
    let message = "this server answers requests for an IP address or localhost only: open it by \
                   its address (a host name of another site that resolves here is refused)";
    (StatusCode::MISDIRECTED_REQUEST, message).into_response()
}

/// Whether `host` (a `Host` header: name or address, with or without a port) is an IP address or
/// `localhost`.
fn host_is_direct(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost") || name.parse::<std::net::IpAddr>().is_ok()
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

#[cfg(test)]
mod tests {
    use super::host_is_direct;

    #[test]
    fn only_addresses_and_localhost_are_direct() {
        for direct in [
            "127.0.0.1:9899",
            "127.0.0.1",
            "[::1]:9899",
            "localhost:9899",
            "LOCALHOST",
            "10.0.0.7:80",
            "app.localhost:1",
        ] {
            assert!(host_is_direct(direct), "{direct}");
        }
        for other in [
            "evil.example:9899",
            "evil.example",
            "",
            "127.0.0.1.evil.example:80",
        ] {
            assert!(!host_is_direct(other), "{other}");
        }
    }
}
