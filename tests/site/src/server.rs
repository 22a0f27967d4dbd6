//! The HTTP server.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, HOST, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::model::{Doc, Model, ROBOTS_TXT};
use crate::render::{render_page, render_pdf};
use crate::request::RequestRecord;
use crate::{Expectation, Scope, SiteSpec};

/// A pre-rendered response.
struct Resource {
    status: StatusCode,
    content_type: &'static str,
    location: Option<HeaderValue>,
    body: Bytes,
}

const HTML: &str = "text/html; charset=utf-8";

impl Resource {
    fn new(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Self {
        Resource {
            status,
            content_type,
            location: None,
            body: body.into(),
        }
    }

    fn status_page(status: StatusCode) -> Self {
        Resource::new(status, HTML, status_page_html(status))
    }

    fn response(&self) -> Response {
        let mut resp = Response::new(Body::from(self.body.clone()));
        *resp.status_mut() = self.status;
        let headers = resp.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        if let Some(loc) = &self.location {
            headers.insert(LOCATION, loc.clone());
        }
        resp
    }
}

/// The short HTML page every site of the crate answers a status with ("404 Not Found", ...).
pub(crate) fn status_page_html(status: StatusCode) -> String {
    let reason = status.canonical_reason().unwrap_or("Error");
    let code = status.as_u16();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{code} {reason}</title></head>\n<body><h1>{code} {reason}</h1></body></html>\n"
    )
}

struct Shared {
    port: u16,
    hosts: HashMap<String, HashMap<String, Resource>>,
    not_found: Resource,
    not_allowed: Resource,
    log: Mutex<Vec<RequestRecord>>,
}

impl Shared {
    fn build(model: &Model, port: u16) -> Shared {
        let mut hosts: HashMap<String, HashMap<String, Resource>> = HashMap::new();
        for host in model.in_scope.iter().chain(&model.outside) {
            hosts.entry(host.clone()).or_default();
        }
        for (loc, doc) in &model.docs {
            let res = match doc {
                Doc::Html(page) => {
                    Resource::new(StatusCode::OK, HTML, render_page(loc, page, port))
                }
                Doc::Redirect(target) => {
                    let url = target.url(port);
                    let mut r = Resource::new(
                        StatusCode::MOVED_PERMANENTLY,
                        HTML,
                        format!(
                            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Moved</title></head>\n<body><p>Moved to {url}</p></body></html>\n"
                        ),
                    );
                    r.location = HeaderValue::from_str(&url).ok();
                    r
                }
                Doc::Pdf(k) => Resource::new(StatusCode::OK, "application/pdf", render_pdf(*k)),
                Doc::Status(code) => Resource::status_page(
                    StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                ),
                Doc::Robots => Resource::new(
                    StatusCode::OK,
                    "text/plain; charset=utf-8",
                    ROBOTS_TXT.as_bytes(),
                ),
            };
            hosts
                .entry(loc.host.clone())
                .or_default()
                .insert(loc.path.clone(), res);
        }
        Shared {
            port,
            hosts,
            not_found: Resource::status_page(StatusCode::NOT_FOUND),
            not_allowed: Resource::status_page(StatusCode::METHOD_NOT_ALLOWED),
            log: Mutex::new(Vec::new()),
        }
    }

    fn log(&self) -> MutexGuard<'_, Vec<RequestRecord>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Host name of a request, lowercase, without port or trailing dot.
pub(crate) fn request_host(req: &Request) -> String {
    let raw = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| req.uri().host())
        .unwrap_or("");
    let host = match raw.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => raw,
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let at = Instant::now();
    let host = request_host(&req);
    let method = req.method();
    let res = if method != Method::GET && method != Method::HEAD {
        &shared.not_allowed
    } else {
        shared
            .hosts
            .get(&host)
            .and_then(|paths| paths.get(req.uri().path()))
            .unwrap_or(&shared.not_found)
    };
    shared
        .log()
        .push(RequestRecord::of(&req, host, shared.port, res.status, at));
    res.response()
}

/// A running site: one HTTP server on loopback serving every host of a
/// [`SiteSpec`], chosen by the `Host` header. Stops on [`Site::shutdown`] or
/// when dropped.
#[derive(derive_more::Debug)]
pub struct Site {
    spec: SiteSpec,
    #[debug(skip)]
    model: Model,
    served: Served<Shared>,
}

impl Site {
    /// Generates the site and serves it on `127.0.0.1:0` (a free port), on
    /// the current tokio runtime.
    pub async fn start(spec: SiteSpec) -> std::io::Result<Site> {
        Site::start_on(spec, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Like [`Site::start`], on a given loopback address (e.g. a fixed port
    /// for a demo). Non-loopback addresses are refused.
    pub async fn start_on(spec: SiteSpec, addr: SocketAddr) -> std::io::Result<Site> {
        let listener = Server::bind_loopback(addr, "test site").await?;
        Site::start_with(spec, listener)
    }

    /// Like [`Site::start`], on `listener`, which must listen on a loopback address: a caller
    /// that bounds its connections (the crawl binary's demo) hands its own.
    pub fn start_with<L>(spec: SiteSpec, listener: L) -> std::io::Result<Site>
    where
        L: axum::serve::Listener<Addr = SocketAddr>,
    {
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the test site only listens on loopback",
            ));
        }
        let model = Model::generate(&spec);
        let shared = |port| Shared::build(&model, port);
        let served = Served::start(listener, shared, |shared| Server::fallback(handle, shared))?;
        Ok(Site {
            spec,
            model,
            served,
        })
    }

    /// The spec the site was generated from.
    pub fn spec(&self) -> &SiteSpec {
        &self.spec
    }

    /// The address the server listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.served.addr
    }

    /// The port of the server, part of every URL of the site.
    pub fn port(&self) -> u16 {
        self.served.port()
    }

    /// Home page URL of every in-scope host (`http://host-00.test:PORT/`, ...):
    /// the crawl seeds.
    pub fn seeds(&self) -> Vec<String> {
        self.spec.seeds(self.port())
    }

    /// Every host name the site serves (in-scope hosts, then out-of-scope
    /// ones); a crawler must resolve them all to 127.0.0.1.
    pub fn host_names(&self) -> Vec<String> {
        self.spec.host_names()
    }

    /// Names of the in-scope hosts (the seeds' hosts).
    pub fn in_scope_host_names(&self) -> Vec<String> {
        self.spec.in_scope_host_names()
    }

    /// `http://{host}:{port}{path}` for this site's port.
    pub fn url(&self, host: &str, path: &str) -> String {
        crate::url_for(host, self.port(), path)
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.served.shared.log().clone()
    }

    /// Number of requests received so far.
    pub fn request_count(&self) -> usize {
        self.served.shared.log().len()
    }

    /// Forgets the requests received so far.
    pub fn clear_requests(&self) {
        self.served.shared.log().clear();
    }

    /// What a correct crawl from [`Site::seeds`] does.
    pub fn expected(&self) -> Expectation {
        Expectation::compute(&self.model, self.port(), Scope::SiteHosts)
    }

    /// What a correct crawl following links as `scope` says does (see [`Scope`]).
    pub fn expected_with(&self, scope: Scope) -> Expectation {
        Expectation::compute(&self.model, self.port(), scope)
    }

    /// The body this site serves for `host` and `path` (exact path, no
    /// query), if any: to inspect pages in tests.
    pub fn body(&self, host: &str, path: &str) -> Option<&[u8]> {
        self.served
            .shared
            .hosts
            .get(host)
            .and_then(|paths| paths.get(path))
            .map(|r| r.body.as_ref())
    }

    /// Stops the server: no new connections, in-flight requests complete
    /// (waits up to 5 seconds, then aborts).
    pub async fn shutdown(mut self) {
        self.served.shutdown().await;
    }
}

/// A site's running server, where it listens and the state its handler shares: what each of the
/// crate's sites holds.
#[derive(derive_more::Debug)]
#[debug("{addr}")]
pub(crate) struct Served<S> {
    /// The address the server listens on.
    pub(crate) addr: SocketAddr,
    /// The state the handler shares.
    pub(crate) shared: Arc<S>,
    server: Server,
}

impl<S> Served<S> {
    /// Serves on `listener` the app `app` makes of the state `shared` makes of the listener's
    /// port, on the current tokio runtime.
    pub(crate) fn start<L>(
        listener: L,
        shared: impl FnOnce(u16) -> S,
        app: impl FnOnce(Arc<S>) -> Router,
    ) -> std::io::Result<Served<S>>
    where
        L: axum::serve::Listener<Addr = SocketAddr>,
    {
        let addr = listener.local_addr()?;
        let shared = Arc::new(shared(addr.port()));
        let server = Server::spawn(listener, app(Arc::clone(&shared)));
        Ok(Served {
            addr,
            shared,
            server,
        })
    }

    /// The port of the server, part of every URL of the site.
    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Stops the server and waits for it to end (at most 5 s, then it is aborted).
    pub(crate) async fn shutdown(&mut self) {
        self.server.shutdown().await;
    }
}

/// A running axum server: stopped gracefully by [`Server::shutdown`], signalled to stop (without
/// waiting) when dropped. Held by each site through [`Served`].
pub(crate) struct Server {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Server {
    /// A listener on `addr`, refused unless it is a loopback address: `site` (its name, for the
    /// error) never listens anywhere else.
    pub(crate) async fn bind_loopback(
        addr: SocketAddr,
        site: &str,
    ) -> std::io::Result<tokio::net::TcpListener> {
        if !addr.ip().is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the {site} only listens on loopback"),
            ));
        }
        tokio::net::TcpListener::bind(addr).await
    }

    /// An app that answers every request with `handler`, given `state`.
    pub(crate) fn fallback<H, T, S>(handler: H, state: S) -> Router
    where
        H: axum::handler::Handler<T, S>,
        T: 'static,
        S: Clone + Send + Sync + 'static,
    {
        Router::new().fallback(handler).with_state(state)
    }

    /// Serves `app` on `listener` (a TCP listener, or any that bounds its connections), on the
    /// current tokio runtime.
    pub(crate) fn spawn<L>(listener: L, app: Router) -> Server
    where
        L: axum::serve::Listener,
        L::Addr: std::fmt::Debug,
    {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Server {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops the server and waits for it to end (at most 5 s, then it is aborted).
    pub(crate) async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}

impl Drop for Server {
    /// Best effort: signals the server to stop, without waiting.
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
