//! The connection to Elasticsearch or OpenSearch: one or more nodes, basic auth, TLS, timeouts, and
//! retries with backoff on 429, 5xx and connection errors (the `elasticsearch` crate has none).
//!
//! Requests go through the crate's raw `send`, so the same code serves Elasticsearch 7/8/9 and
//! OpenSearch 1/2; where their APIs differ (point in time), [`EsClient::engine`] tells which is there.

mod access;
mod bulk;
mod error;
pub mod indices;
mod method;
mod nodes;
mod pem;
mod scripting;
mod search;
mod settings;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use elasticsearch::Elasticsearch;
use elasticsearch::http::headers::HeaderMap;
use elasticsearch::http::transport::{SingleNodeConnectionPool, TransportBuilder};
use serde_json::Value;
use squall::frontier::ErrorKind;
use tokio::sync::OnceCell;
use tracing::{info, warn};
use url::Url;

pub use bulk::{BulkAction, BulkItem, BulkItemError, BulkOperation, BulkRequest, BulkResponse};
pub use error::{EsError, is_transient_status};
pub use method::Method;
use nodes::{NodePool, Pick};
pub use pem::PemFile;
pub use scripting::{UpdateMode, Updates};
pub use search::{Hits, MultiSearchResponse, SearchHit, SearchResponse, Shards, buckets};
pub use settings::ConnectionConfig;

/// Which search engine answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Elasticsearch, with its major version.
    Elasticsearch(u32),
    /// OpenSearch, with its major version.
    OpenSearch(u32),
}

/// A request body.
#[derive(Debug, Clone)]
pub enum RequestBody {
    /// One JSON document.
    Json(Value),
    /// Newline-delimited JSON (bulk).
    NdJson(Vec<Value>),
    /// Newline-delimited JSON already written (bulk bodies built line by line).
    NdJsonBytes(Bytes),
}

impl RequestBody {
    /// The body as sent: one JSON document, or one JSON document per line.
    fn to_bytes(&self) -> Result<Bytes, serde_json::Error> {
        match self {
            RequestBody::Json(json) => serde_json::to_vec(json).map(Bytes::from),
            RequestBody::NdJson(lines) => {
                let mut out = Vec::with_capacity(lines.len() * 256);
                for line in lines {
                    serde_json::to_writer(&mut out, line)?;
                    out.push(b'\n');
                }
                Ok(Bytes::from(out))
            }
            RequestBody::NdJsonBytes(bytes) => Ok(bytes.clone()),
        }
    }
}

/// A client for one cluster, with retries.
#[derive(Clone, derive_more::Debug)]
pub struct EsClient {
    #[debug(skip)]
    nodes: Arc<NodePool>,
    settings: ConnectionConfig,
    #[debug(skip)]
    engine: std::sync::Arc<OnceCell<Engine>>,
    #[debug(skip)]
    updates: std::sync::Arc<OnceCell<Updates>>,
}

impl EsClient {
    /// A client for these settings. Nothing is contacted until the first request.
    pub fn new(settings: ConnectionConfig) -> Result<Self, EsError> {
        // One connection per node, so that the client knows which node failed and can leave it out.
        // No sniffing: the crate's sniffing task panics on the first failed `_nodes` request and
        // never sniffs again, so the node list is the one given.
        let mut nodes = Vec::with_capacity(settings.addresses.len());
        for address in &settings.addresses {
            nodes.push((
                address.as_str().trim_end_matches('/').to_string(),
                node_connection(address, &settings)?,
            ));
        }
        let pool = NodePool::new(nodes, settings.node_cooloff, settings.max_node_cooloff);
        Ok(EsClient {
            nodes: Arc::new(pool),
            settings,
            engine: std::sync::Arc::new(OnceCell::new()),
            updates: std::sync::Arc::new(OnceCell::new()),
        })
    }

    /// The addresses, for messages (no credentials).
    pub fn addresses(&self) -> String {
        self.settings
            .addresses
            .iter()
            .map(|u| u.as_str().trim_end_matches('/').to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Which engine answers (asked once, then remembered).
    pub async fn engine(&self) -> Result<Engine, EsError> {
        self.engine
            .get_or_try_init(|| async {
                let info = self.request(Method::Get, "/", &[], None).await?;
                let major = info["version"]["number"]
                    .as_str()
                    .and_then(|v| v.split('.').next())
                    .and_then(|m| m.parse().ok())
                    .ok_or_else(|| EsError::Decode {
                        path: "/".to_string(),
                        message: format!("no version number in {info}"),
                    })?;
                Ok(match info["version"]["distribution"].as_str() {
                    Some("opensearch") => Engine::OpenSearch(major),
                    _ => Engine::Elasticsearch(major),
                })
            })
            .await
            .copied()
    }

    /// Opens a point in time on `index` (OpenSearch's `_search/point_in_time`, Elasticsearch's `_pit`)
    /// and returns its id.
    pub async fn open_point_in_time(
        &self,
        index: &str,
        keep_alive: &str,
    ) -> Result<String, EsError> {
        let (path, field) = match self.engine().await? {
            Engine::OpenSearch(_) => (format!("/{index}/_search/point_in_time"), "pit_id"),
            Engine::Elasticsearch(_) => (format!("/{index}/_pit"), "id"),
        };
        let answer = self
            .request(Method::Post, &path, &[("keep_alive", keep_alive)], None)
            .await?;
        answer[field]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| EsError::Decode {
                path,
                message: format!("no {field} in {}", truncate(&answer.to_string(), 200)),
            })
    }

    /// Closes a point in time.
    pub async fn close_point_in_time(&self, id: &str) -> Result<(), EsError> {
        let (path, body) = match self.engine().await? {
            Engine::OpenSearch(_) => (
                "/_search/point_in_time",
                serde_json::json!({ "pit_id": [id] }),
            ),
            Engine::Elasticsearch(_) => ("/_pit", serde_json::json!({ "id": id })),
        };
        self.request(Method::Delete, path, &[], Some(RequestBody::Json(body)))
            .await
            .map(|_| ())
    }

    /// Sends a request and returns the JSON answer; retries on 429, 5xx and connection errors.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<RequestBody>,
    ) -> Result<Value, EsError> {
        let text = self.request_text(method, path, query, body).await?;
        parse_answer(path, &text)
    }

    /// [`request`](Self::request), returning the answer's text as it came (for callers that read
    /// it with their own types, without building a JSON tree first).
    pub async fn request_text(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<RequestBody>,
    ) -> Result<String, EsError> {
        // Serialized once: a retry resends the same bytes.
        let body = match body {
            Some(body) => Some(body.to_bytes().map_err(|e| EsError::Decode {
                path: path.to_string(),
                message: format!("the request body could not be written: {e}"),
            })?),
            None => None,
        };
        let mut attempt = 0;
        let mut backoff = self.settings.initial_backoff;
        loop {
            let pick = self.nodes.pick(Instant::now());
            let result = match self.fresh_enough(pick).await {
                Ok(()) => {
                    self.try_on_text(pick.node, method, path, query, body.clone())
                        .await
                }
                Err(error) => Err(error),
            };
            match &result {
                Err(error @ EsError::Unreachable { .. }) => {
                    // A timeout may only mean that the cluster is slow (a write waiting for a
                    // replica on a node that went away): the node is lost only if it does not
                    // answer a plain request either.
                    if !timed_out(error) || !self.answers(pick.node).await {
                        self.node_failed(pick, error);
                    }
                }
                // Any other answer is the node's own: it is there.
                _ => self.node_answered(pick.node),
            }
            match result {
                Ok(value) => return Ok(value),
                Err(error) if retriable(&error) && attempt < self.settings.max_retries => {
                    attempt += 1;
                    warn!(%error, attempt, wait = ?backoff,
                        "Elasticsearch/OpenSearch request failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.settings.max_backoff);
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Puts `node` back in the rotation if it had been lost, saying so.
    fn node_answered(&self, node: usize) {
        if self.nodes.answered(node) {
            let address = self.nodes.address(node);
            info!(
                node = address,
                "Elasticsearch/OpenSearch node {address} answers again; back in the rotation"
            );
        }
    }

    /// Leaves a node out after a connection-level failure; the first failure of a node that was
    /// alive is a warning that names it.
    fn node_failed(&self, pick: Pick, error: &EsError) {
        let failure = self.nodes.failed(pick, Instant::now());
        if !failure.counted || self.nodes.len() == 1 {
            return;
        }
        let address = self.nodes.address(pick.node);
        if failure.newly_lost {
            warn!(node = address, %error, cooloff = ?failure.cooloff,
                "Elasticsearch/OpenSearch node {address} lost; requests go to the other nodes, \
                 and to it again after {:?}", failure.cooloff);
        } else {
            warn!(node = address, %error, cooloff = ?failure.cooloff,
                "Elasticsearch/OpenSearch node {address} still failing; left out for {:?}",
                failure.cooloff);
        }
    }

    /// Whether `node` answers `GET /` within a few seconds.
    async fn answers(&self, node: usize) -> bool {
        let timeout = self.settings.timeout.min(Duration::from_secs(3));
        let sent = self
            .nodes
            .client(node)
            .send::<Bytes, ()>(
                Method::Get.to_transport(),
                "/",
                HeaderMap::new(),
                None,
                None,
                Some(timeout),
            )
            .await;
        matches!(sent, Ok(response) if response.status_code().is_success())
    }

    /// Before a lost node is asked again (its trial): its cluster state must be as new as a live
    /// node's. A node that was paused or cut off answers from its own, possibly dropped, shard
    /// copies until it learns that the cluster moved on; such a node fails this check, as
    /// unreachable (it stays out, and the request is retried elsewhere). When the check cannot be
    /// made (no live node to compare with, or cluster monitoring not allowed), the trial goes on.
    async fn fresh_enough(&self, pick: Pick) -> Result<(), EsError> {
        if !pick.trial {
            return Ok(());
        }
        let node = pick.node;
        let stale = |message: String| EsError::Unreachable {
            addresses: self.nodes.address(node).to_string(),
            message,
        };
        // The reference first: a state read afterwards from a candidate that is in the cluster is
        // then at least as new.
        let mut reference = None;
        for live in self.nodes.alive_except(node) {
            if let Ok(state) = self.cluster_state_on(live).await {
                reference = Some((live, state));
                break;
            }
        }
        let Some((live, reference)) = reference else {
            return Ok(());
        };
        let theirs = match self.cluster_state_on(node).await {
            Ok(state) => state,
            Err(error) if matches!(error.status(), Some(401 | 403)) => return Ok(()),
            Err(error @ EsError::Unreachable { .. }) => return Err(error),
            Err(error) => return Err(stale(format!("its cluster state cannot be read: {error}"))),
        };
        let version = |state: &Value| state["version"].as_u64().unwrap_or(0);
        let same_cluster = theirs["cluster_uuid"] == reference["cluster_uuid"];
        if same_cluster && version(&theirs) >= version(&reference) {
            return Ok(());
        }
        Err(stale(format!(
            "its cluster state (version {}, cluster {}) is behind that of {} (version {}, \
             cluster {}): it has not rejoined yet",
            version(&theirs),
            theirs["cluster_uuid"],
            self.nodes.address(live),
            version(&reference),
            reference["cluster_uuid"]
        )))
    }

    /// The cluster state version and cluster of one node, as that node has it (`local`).
    async fn cluster_state_on(&self, node: usize) -> Result<Value, EsError> {
        const PATH: &str = "/_cluster/state/version";
        let text = self
            .try_on_text(node, Method::Get, PATH, &[("local", "true")], None)
            .await?;
        parse_answer(PATH, &text)
    }

    /// One try of a request on one node: the text of a 2xx answer, or the error.
    async fn try_on_text(
        &self,
        node: usize,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Bytes>,
    ) -> Result<String, EsError> {
        let query = (!query.is_empty()).then_some(query);
        let unreachable = |message: String| EsError::Unreachable {
            addresses: self.nodes.address(node).to_string(),
            message,
        };
        let sent = self
            .nodes
            .client(node)
            .send(
                method.to_transport(),
                path,
                HeaderMap::new(),
                query,
                body,
                None,
            )
            .await;
        let response = sent.map_err(|e| {
            let message = squall::error_text::with_causes(&e);
            if access::is_tls_failure(&message) {
                EsError::Tls {
                    address: self.nodes.address(node).to_string(),
                    message,
                }
            } else {
                unreachable(message)
            }
        })?;
        let status = response.status_code().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| unreachable(squall::error_text::with_causes(&e)))?;
        if (200..300).contains(&status) {
            return Ok(text);
        }
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let (mut reason, cause) = error_reason(&value["error"], &text);
        if status == 401 {
            reason.push_str(
                " (the cluster refused the credentials: the API key, or the user and password)",
            );
        }
        Err(EsError::Status {
            method: method.as_str().to_string(),
            path: path.to_string(),
            status,
            reason,
            cause,
        })
    }
}

/// An error answer's "type: reason", followed by its first root cause when that is another error
/// (a search that failed on every shard says why only there), and that root cause's type.
fn error_reason(error: &Value, text: &str) -> (String, Option<String>) {
    let Value::Object(error) = error else {
        let reason = error
            .as_str()
            .map_or_else(|| truncate(text, 300), str::to_string);
        return (reason, None);
    };
    let field =
        |value: &Value, name: &str| value.get(name).and_then(Value::as_str).map(str::to_string);
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
    let mut reason = format!(
        "{kind}: {}",
        error.get("reason").and_then(Value::as_str).unwrap_or("")
    );
    let root = error
        .get("root_cause")
        .and_then(Value::as_array)
        .and_then(|causes| causes.first());
    let cause = root.and_then(|root| field(root, "type"));
    if let (Some(root), Some(cause)) = (root, &cause)
        && cause != kind
    {
        let why = field(root, "reason").unwrap_or_default();
        reason.push_str(&format!(" (root cause {cause}: {})", truncate(&why, 300)));
    }
    (reason, cause)
}

/// A 2xx answer's JSON (`null` when empty).
fn parse_answer(path: &str, text: &str) -> Result<Value, EsError> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text).map_err(|e| EsError::Decode {
        path: path.to_string(),
        message: format!("{e} in {}", truncate(text, 300)),
    })
}

/// The connection to one node, with the settings' timeout, credentials and TLS choice.
fn node_connection(address: &Url, settings: &ConnectionConfig) -> Result<Elasticsearch, EsError> {
    let builder = TransportBuilder::new(SingleNodeConnectionPool::new(address.clone()))
        .timeout(settings.timeout);
    let transport = access::secure(builder, settings)?
        .build()
        .map_err(|e| EsError::Config(format!("cannot build the transport: {e}")))?;
    Ok(Elasticsearch::new(transport))
}

/// Whether a connection-level error is a timeout (the node may be alive but slow).
fn timed_out(error: &EsError) -> bool {
    matches!(error, EsError::Unreachable { message, .. } if message.contains("timed out"))
}

fn retriable(error: &EsError) -> bool {
    match error {
        EsError::Unreachable { .. } => true,
        EsError::Status { status, .. } => {
            (*status == 429 || *status >= 500) && error.kind() == ErrorKind::Unavailable
        }
        _ => false,
    }
}

/// At most `max` bytes of `text` (cut at a character boundary), for messages.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status_error(status: u16, answer: &Value) -> EsError {
        let (reason, cause) = error_reason(&answer["error"], &answer.to_string());
        EsError::Status {
            method: "POST".to_string(),
            path: "/urls/_search".to_string(),
            status,
            reason,
            cause,
        }
    }

    #[test]
    fn a_search_refused_for_its_shape_names_the_root_cause_and_is_not_retried() {
        let answer = json!({ "error": {
            "root_cause": [{ "type": "too_many_nested_clauses",
                             "reason": "Query contains too many nested clauses; maxClauseCount is set to 1024" }],
            "type": "search_phase_execution_exception", "reason": "all shards failed" },
            "status": 500 });
        let error = status_error(500, &answer);
        assert!(
            error.to_string().contains("all shards failed (root cause too_many_nested_clauses: Query contains too many nested clauses"),
            "{error}"
        );
        assert_eq!(error.kind(), ErrorKind::Rejected);
        assert!(!retriable(&error));
    }

    #[test]
    fn a_failing_or_busy_engine_stays_retryable() {
        let answer = json!({ "error": {
            "root_cause": [{ "type": "node_not_connected_exception", "reason": "[n2] not connected" }],
            "type": "search_phase_execution_exception", "reason": "all shards failed" } });
        let error = status_error(503, &answer);
        assert_eq!(error.kind(), ErrorKind::Unavailable);
        assert!(retriable(&error));
        let plain = status_error(429, &json!({ "error": "too many requests" }));
        assert_eq!(
            plain.to_string(),
            "POST /urls/_search failed with HTTP 429: too many requests"
        );
        assert_eq!(plain.kind(), ErrorKind::Unavailable);
    }
}
