//! The capacity site served: one listener on 127.0.0.0/8, each host's gate asked with the
//! real clock, the answer held for its latency, and the request log.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;

use crate::RequestRecord;
use crate::server::{Served, Server, request_host, status_page_html};

use super::gate::{Answer, CapacityRecord, HostGate};
use super::pages::render;
use super::spec::CapacitySpec;

/// What the handlers share: the spec, each host's gate and the log.
struct Shared {
    spec: CapacitySpec,
    port: u16,
    gates: HashMap<String, Mutex<HostGate>>,
    log: Mutex<Vec<CapacityRecord>>,
}

impl Shared {
    fn log(&self) -> MutexGuard<'_, Vec<CapacityRecord>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The gate's answer for `path` on `host` at `at`; `None` for a host the site does not have
    /// or a method other than GET and HEAD, answered at once without a gate.
    fn answer(&self, host: &str, method: &Method, path: &str, at: Instant) -> Option<Answer> {
        let gate = self.gates.get(host).filter(|_| is_read(method))?;
        let mut gate = gate.lock().unwrap_or_else(|e| e.into_inner());
        Some(gate.answer(path, at))
    }

    /// The status and page of `answer` to a request for `path` on `host`.
    fn reply(&self, host: &str, method: &Method, path: &str, answer: Option<Answer>) -> Reply {
        match answer {
            None if !is_read(method) => (StatusCode::METHOD_NOT_ALLOWED, None),
            None | Some(Answer::NoRobots) => (StatusCode::NOT_FOUND, None),
            Some(Answer::Refuse { over, .. }) => (status_of(over.status()), None),
            Some(Answer::Serve { .. }) => match render(&self.spec, host, path, self.port) {
                Some(page) => (StatusCode::OK, Some(page)),
                None => (StatusCode::NOT_FOUND, None),
            },
        }
    }
}

/// A status and the page to send with it (a short status page when `None`).
type Reply = (StatusCode, Option<String>);

fn is_read(method: &Method) -> bool {
    method == Method::GET || method == Method::HEAD
}

/// Answers one request: asks the host's gate, logs the answer on arrival, holds a served page
/// for its latency.
async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let at = Instant::now();
    let host = request_host(&req);
    let path = req.uri().path().to_owned();
    let answer = shared.answer(&host, req.method(), &path, at);
    let (status, body) = shared.reply(&host, req.method(), &path, answer);
    let answer = answer.unwrap_or(Answer::Serve {
        after: Duration::ZERO,
        load: 1.0,
    });
    let request = RequestRecord::of(&req, host, shared.port, status, at);
    shared.log().push(CapacityRecord::of(request, &answer));
    if let Answer::Serve { after, .. } = answer
        && !after.is_zero()
    {
        tokio::time::sleep(after).await;
    }
    respond(status, body, &answer)
}

fn status_of(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
}

/// The response: `body` (a page) or a short status page, with `Retry-After` when the answer
/// announces one.
fn respond(status: StatusCode, body: Option<String>, answer: &Answer) -> Response {
    let body = body.unwrap_or_else(|| status_page_html(status));
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Answer::Refuse {
        retry_after: Some(wait),
        ..
    } = answer
    {
        headers.insert(RETRY_AFTER, HeaderValue::from(wait.as_secs()));
    }
    response
}

/// A running capacity site: every host of a [`CapacitySpec`] on one HTTP server on
/// `127.0.0.x`, chosen by the `Host` header. Stops on [`CapacitySite::shutdown`] or when dropped.
#[derive(derive_more::Debug)]
pub struct CapacitySite {
    started: Instant,
    served: Served<Shared>,
}

impl CapacitySite {
    /// Serves `spec` on `127.0.0.1:0` (a free port), on the current tokio runtime. Every bucket
    /// starts full now.
    pub async fn start(spec: CapacitySpec) -> std::io::Result<CapacitySite> {
        CapacitySite::start_on(spec, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Like [`CapacitySite::start`], on `addr`, which must be in 127.0.0.0/8.
    pub async fn start_on(spec: CapacitySpec, addr: SocketAddr) -> std::io::Result<CapacitySite> {
        if !matches!(addr.ip(), IpAddr::V4(ip) if ip.is_loopback()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the capacity site only listens on 127.0.0.0/8",
            ));
        }
        let listener = Server::bind_loopback(addr, "capacity site").await?;
        let started = Instant::now();
        let gates = spec
            .hosts
            .iter()
            .map(|h| (h.name.clone(), Mutex::new(HostGate::new(h, started))))
            .collect();
        let shared = |port| Shared {
            spec,
            port,
            gates,
            log: Mutex::new(Vec::new()),
        };
        let served = Served::start(listener, shared, |shared| Server::fallback(handle, shared))?;
        Ok(CapacitySite { started, served })
    }

    /// The spec the site serves.
    pub fn spec(&self) -> &CapacitySpec {
        &self.served.shared.spec
    }

    /// The address the server listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.served.addr
    }

    /// The port of the server, part of every URL of the site.
    pub fn port(&self) -> u16 {
        self.served.port()
    }

    /// When the site started, its buckets full: the start of its log.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Every host name; a crawler must resolve them all to [`CapacitySite::addr`].
    pub fn host_names(&self) -> Vec<String> {
        self.served.shared.spec.host_names()
    }

    /// The home page of every host (`http://cap-000.test:PORT/`, ...): the crawl seeds.
    pub fn seeds(&self) -> Vec<String> {
        let names = self.host_names();
        names.iter().map(|host| self.url(host, "/")).collect()
    }

    /// `http://{host}:{port}{path}` for this site's port.
    pub fn url(&self, host: &str, path: &str) -> String {
        crate::url_for(host, self.port(), path)
    }

    /// Every request received so far, in order of arrival, with how it was answered.
    pub fn records(&self) -> Vec<CapacityRecord> {
        self.served.shared.log().clone()
    }

    /// Every request received so far, as the crate's other sites log them.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.served
            .shared
            .log()
            .iter()
            .map(|r| r.request.clone())
            .collect()
    }

    /// Stops the server: no new connections, in-flight requests complete (waits up to 5
    /// seconds, then aborts).
    pub async fn shutdown(mut self) {
        self.served.shutdown().await;
    }
}
