//! The HTTP side of a [`super::TlsGate`]: the credential check, and forwarding to the upstream.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

/// The body Elasticsearch answers a request whose credentials it does not accept.
const REFUSAL_BODY: &str = r#"{"error":{"root_cause":[{"type":"security_exception","reason":"unable to authenticate with provided credentials"}],"type":"security_exception","reason":"unable to authenticate with provided credentials"},"status":401}"#;

/// Headers never passed on either way: hop-by-hop ones, and the length (the body is re-framed).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// Request headers also kept back: the gate's own, and the encodings, which the forwarding
/// client negotiates (and decodes) itself.
const GATE_REQUEST_HEADERS: &[&str] = &["host", "authorization", "accept-encoding"];

/// Response headers also kept back: the encoding no longer holds once the client has decoded.
const DECODED_RESPONSE_HEADERS: &[&str] = &["content-encoding"];

/// Path parts of Elasticsearch/OpenSearch APIs that may write, whatever the method.
const WRITE_PATH_PARTS: &[&str] = &["_bulk", "_doc", "_update", "_create"];

/// What a gate counted; shared by its connections.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) refused: AtomicU64,
    pub(super) forwarded: AtomicU64,
    pub(super) forwarded_writes: AtomicU64,
    pub(super) handshakes_failed: AtomicU64,
}

/// Checks each request's credentials and forwards the accepted ones to the upstream.
#[derive(Debug)]
pub(super) struct Forwarder {
    upstream: String,
    /// The accepted `Authorization` credentials (the base64 part), when a key is required.
    api_key: Option<String>,
    client: reqwest::Client,
    counters: Arc<Counters>,
}

/// `base64(id:key)`, standard alphabet with padding, as Elasticsearch encodes an API key: the
/// part after `ApiKey ` in an `Authorization` header.
pub fn api_key_credentials(id: &str, key: &str) -> String {
    data_encoding::BASE64.encode(format!("{id}:{key}").as_bytes())
}

impl Forwarder {
    /// A forwarder to `upstream` (a base URL) requiring the API key `(id, key)` if given.
    pub(super) fn new(
        upstream: &str,
        api_key: Option<&(String, String)>,
        counters: Arc<Counters>,
    ) -> Self {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("build the gate's forwarding client");
        Forwarder {
            upstream: upstream.trim_end_matches('/').to_owned(),
            api_key: api_key.map(|(id, key)| api_key_credentials(id, key)),
            client,
            counters,
        }
    }

    /// Answers one request: 401 without the right credentials, else the upstream's answer.
    pub(super) async fn handle(
        &self,
        request: Request<Incoming>,
    ) -> Result<Response<Full<Bytes>>, Infallible> {
        if !self.authorized(request.headers()) {
            self.counters.refused.fetch_add(1, Ordering::SeqCst);
            return Ok(refusal());
        }
        Ok(self.forward(request).await)
    }

    /// Whether `headers` carry the API key required, if one is.
    fn authorized(&self, headers: &HeaderMap) -> bool {
        let Some(expected) = &self.api_key else {
            return true;
        };
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok());
        let Some((scheme, credentials)) = given.and_then(|value| value.split_once(' ')) else {
            return false;
        };
        scheme.eq_ignore_ascii_case("ApiKey") && credentials.trim() == expected
    }

    /// Passes `request` on to the upstream and relays its answer (502 if there is none).
    async fn forward(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        let (parts, body) = request.into_parts();
        let body = match body.collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    format!("gate could not read the body: {error}"),
                );
            }
        };
        self.count_forwarded(&parts.method, parts.uri.path());
        let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
        let sent = self
            .client
            .request(parts.method, format!("{}{path}", self.upstream))
            .headers(kept(&parts.headers, GATE_REQUEST_HEADERS))
            .body(body)
            .send()
            .await;
        match sent {
            Ok(answer) => relay(answer).await,
            Err(error) => plain(
                StatusCode::BAD_GATEWAY,
                format!("gate could not reach the upstream: {error}"),
            ),
        }
    }

    /// Counts a request passed on, and whether it may write.
    fn count_forwarded(&self, method: &Method, path: &str) {
        self.counters.forwarded.fetch_add(1, Ordering::SeqCst);
        if may_write(method, path) {
            self.counters
                .forwarded_writes
                .fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Whether a request may write: any method but GET and HEAD, or a document or bulk API path.
fn may_write(method: &Method, path: &str) -> bool {
    let reads = *method == Method::GET || *method == Method::HEAD;
    !reads || WRITE_PATH_PARTS.iter().any(|part| path.contains(part))
}

/// `headers` without the hop-by-hop ones and those named in `also_dropped`.
fn kept(headers: &HeaderMap, also_dropped: &[&str]) -> HeaderMap {
    let mut kept = headers.clone();
    for name in HOP_BY_HOP.iter().chain(also_dropped) {
        kept.remove(*name);
    }
    kept
}

/// The upstream's answer as the gate's: status, end-to-end headers and body.
async fn relay(answer: reqwest::Response) -> Response<Full<Bytes>> {
    let status = answer.status();
    let headers = kept(answer.headers(), DECODED_RESPONSE_HEADERS);
    let body = match answer.bytes().await {
        Ok(body) => body,
        Err(error) => {
            return plain(
                StatusCode::BAD_GATEWAY,
                format!("gate could not read the upstream's body: {error}"),
            );
        }
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// The 401 Elasticsearch answers for credentials it does not accept.
fn refusal() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(REFUSAL_BODY.as_bytes())));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("ApiKey"));
    response
}

/// A plain-text answer with `status`, for the gate's own failures.
fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}
