//! The `_bulk` API, typed: a request built from [`BulkOperation`]s, and a [`BulkResponse`] with one
//! [`BulkItem`] per operation, in order, checked to be as many as were sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use squall::frontier::ErrorKind;

use super::{EsClient, EsError, Method, RequestBody, is_transient_status};

/// What a bulk operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BulkAction {
    /// Write the document, replacing any with the same id.
    Index,
    /// Write the document only if no document has its id (409 otherwise).
    Create,
    /// Change the document: a partial `doc`, or a `script` with an optional `upsert`.
    Update,
    /// Remove the document.
    Delete,
}

/// One operation of a bulk request: its action line, and its body line (none for a delete).
#[derive(Debug, Clone, PartialEq)]
pub struct BulkOperation {
    /// What it does.
    pub action: BulkAction,
    /// The index, when not the one the request is sent to.
    pub index: Option<String>,
    /// The document's id.
    pub id: String,
    /// Its routing, when routed.
    pub routing: Option<String>,
    /// Apply only if the document is still at this version, its (sequence number, primary term):
    /// optimistic concurrency control.
    pub if_version: Option<(i64, i64)>,
    /// How often the engine retries an update that met a concurrent change.
    pub retry_on_conflict: Option<u32>,
    /// The body line: the document (index, create), or the update (`doc`, `script`, `upsert`).
    pub body: Option<Value>,
}

impl BulkOperation {
    fn new(action: BulkAction, id: impl Into<String>, body: Option<Value>) -> Self {
        BulkOperation {
            action,
            index: None,
            id: id.into(),
            routing: None,
            if_version: None,
            retry_on_conflict: None,
            body,
        }
    }

    /// Writes `document` under `id`, replacing any.
    pub fn index(id: impl Into<String>, document: Value) -> Self {
        Self::new(BulkAction::Index, id, Some(document))
    }

    /// Writes `document` under `id` unless a document has that id.
    pub fn create(id: impl Into<String>, document: Value) -> Self {
        Self::new(BulkAction::Create, id, Some(document))
    }

    /// Updates the document `id` with `update` (`{"doc": ..}` or `{"script": .., "upsert": ..}`).
    pub fn update(id: impl Into<String>, update: Value) -> Self {
        Self::new(BulkAction::Update, id, Some(update))
    }

    /// Deletes the document `id`.
    pub fn delete(id: impl Into<String>) -> Self {
        Self::new(BulkAction::Delete, id, None)
    }

    /// The same operation on `index`.
    pub fn in_index(mut self, index: &str) -> Self {
        self.index = Some(index.to_string());
        self
    }

    /// The same operation with this routing (none: the document's id decides its shard).
    pub fn routed(mut self, routing: Option<String>) -> Self {
        self.routing = routing;
        self
    }

    /// The same operation, applied only if the document is still at this version.
    pub fn if_version(mut self, seq_no: i64, primary_term: i64) -> Self {
        self.if_version = Some((seq_no, primary_term));
        self
    }

    /// The same update, retried by the engine up to `times` on a concurrent change.
    pub fn retry_on_conflict(mut self, times: u32) -> Self {
        self.retry_on_conflict = Some(times);
        self
    }

    /// The action line.
    pub fn action_line(&self) -> Value {
        let mut header = json!({ "_id": self.id });
        if let Some(index) = &self.index {
            header["_index"] = json!(index);
        }
        if let Some(routing) = &self.routing {
            header["routing"] = json!(routing);
        }
        if let Some((seq_no, primary_term)) = self.if_version {
            header["if_seq_no"] = json!(seq_no);
            header["if_primary_term"] = json!(primary_term);
        }
        if let Some(times) = self.retry_on_conflict {
            header["retry_on_conflict"] = json!(times);
        }
        let mut line = serde_json::Map::new();
        line.insert(action_name(self.action).to_string(), header);
        Value::Object(line)
    }
}

fn action_name(action: BulkAction) -> &'static str {
    match action {
        BulkAction::Index => "index",
        BulkAction::Create => "create",
        BulkAction::Update => "update",
        BulkAction::Delete => "delete",
    }
}

/// A bulk request: operations, sent in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BulkRequest {
    operations: Vec<BulkOperation>,
}

impl BulkRequest {
    /// An empty request.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an operation.
    pub fn push(&mut self, operation: BulkOperation) {
        self.operations.push(operation);
    }

    /// The operations.
    pub fn operations(&self) -> &[BulkOperation] {
        &self.operations
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.operations.len()
    }

    /// Whether there is no operation.
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }

    /// The newline-delimited body: per operation, its action line and its body line.
    pub fn lines(&self) -> Vec<Value> {
        let mut lines = Vec::with_capacity(self.operations.len() * 2);
        for operation in &self.operations {
            lines.push(operation.action_line());
            if let Some(body) = &operation.body {
                lines.push(body.clone());
            }
        }
        lines
    }
}

impl FromIterator<BulkOperation> for BulkRequest {
    fn from_iter<I: IntoIterator<Item = BulkOperation>>(operations: I) -> Self {
        BulkRequest {
            operations: operations.into_iter().collect(),
        }
    }
}

/// An item's failure, as the engine gave it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BulkItemError {
    /// The engine's error type (`version_conflict_engine_exception`, ...).
    #[serde(rename = "type", default = "unknown_type")]
    pub kind: String,
    /// Why, in the engine's words.
    #[serde(default)]
    pub reason: Option<String>,
}

fn unknown_type() -> String {
    "error".to_string()
}

impl std::fmt::Display for BulkItemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.reason.as_deref().unwrap_or(""))
    }
}

/// The outcome of one bulk operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkItem {
    /// The operation's action.
    pub action: BulkAction,
    /// Its HTTP status (0 when the answer had none).
    pub status: u16,
    /// The document's id, when the answer gave it.
    pub id: Option<String>,
    /// `created`, `updated`, `deleted`, `noop`, `not_found`, when the answer gave it.
    pub result: Option<String>,
    /// Why it failed.
    pub error: Option<BulkItemError>,
    /// The document's version after the operation: its (sequence number, primary term).
    pub version: Option<(i64, i64)>,
}

impl BulkItem {
    /// Whether the operation was applied (2xx).
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Whether it met a version conflict (409): for a create, the document exists.
    pub fn is_conflict(&self) -> bool {
        self.status == 409
    }

    /// Whether its document does not exist (404).
    pub fn is_not_found(&self) -> bool {
        self.status == 404
    }

    /// Whether it was applied and created a document.
    pub fn is_created(&self) -> bool {
        self.is_success() && self.result.as_deref() == Some("created")
    }

    /// Whether an update was applied but changed nothing (its script chose `noop`).
    pub fn is_noop(&self) -> bool {
        self.result.as_deref() == Some("noop")
    }

    /// A failure's kind: the engine too busy for it (429) or failing (5xx) may take it later;
    /// anything else (a mapping conflict, an invalid document) it will refuse again.
    pub fn error_kind(&self) -> ErrorKind {
        if is_transient_status(self.status) {
            ErrorKind::Unavailable
        } else {
            ErrorKind::Rejected
        }
    }

    /// The engine's error type, `error` when it gave none.
    pub fn error_type(&self) -> &str {
        self.error.as_ref().map_or("error", |e| e.kind.as_str())
    }

    /// The engine's reason, when it gave one.
    pub fn reason(&self) -> Option<&str> {
        self.error.as_ref().and_then(|e| e.reason.as_deref())
    }
}

/// What the engine says of one item (the object under its action).
#[derive(Debug, Default, Deserialize)]
struct RawItem {
    #[serde(default)]
    status: u16,
    #[serde(rename = "_id", default)]
    id: Option<String>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    error: Option<BulkItemError>,
    #[serde(rename = "_seq_no", default)]
    seq_no: Option<i64>,
    #[serde(rename = "_primary_term", default)]
    primary_term: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
struct RawResponse {
    #[serde(default)]
    items: Vec<BTreeMap<BulkAction, RawItem>>,
}

/// The answer to a bulk request: one item per operation, in the order sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkResponse {
    /// The items.
    pub items: Vec<BulkItem>,
}

impl BulkResponse {
    /// Reads a bulk answer, which must have `expected` items (one per operation sent).
    pub fn parse(answer: Value, expected: usize, path: &str) -> Result<Self, EsError> {
        let decode = |message: String| EsError::Decode {
            path: path.to_string(),
            message,
        };
        let raw: RawResponse =
            serde_json::from_value(answer).map_err(|e| decode(format!("bulk answer: {e}")))?;
        let mut items = Vec::with_capacity(raw.items.len());
        for item in raw.items {
            let Some((action, raw)) = item.into_iter().next() else {
                return Err(decode("a bulk item without an action".to_string()));
            };
            items.push(BulkItem {
                action,
                status: raw.status,
                id: raw.id,
                result: raw.result,
                error: raw.error,
                version: raw.seq_no.zip(raw.primary_term),
            });
        }
        if items.len() != expected {
            return Err(decode(format!(
                "the engine answered {} items for {expected} operations",
                items.len()
            )));
        }
        Ok(BulkResponse { items })
    }
}

impl EsClient {
    /// Sends `request` to `index`'s `_bulk` (or `/_bulk` when every operation names its index),
    /// with the engine's `filter_path` when given, and returns one item per operation. The request
    /// itself is retried as [`request`](Self::request) does; failed items are the caller's to judge.
    pub async fn bulk(
        &self,
        index: Option<&str>,
        request: &BulkRequest,
        filter_path: Option<&str>,
    ) -> Result<BulkResponse, EsError> {
        let path = match index {
            Some(index) => format!("/{index}/_bulk"),
            None => "/_bulk".to_string(),
        };
        let query: Vec<(&str, &str)> = filter_path
            .map(|f| ("filter_path", f))
            .into_iter()
            .collect();
        let answer = self
            .request(
                Method::Post,
                &path,
                &query,
                Some(RequestBody::NdJson(request.lines())),
            )
            .await?;
        BulkResponse::parse(answer, request.len(), &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_write_their_lines() {
        let request: BulkRequest = [
            BulkOperation::create("a", json!({ "url": "u" })).routed(Some("k".into())),
            BulkOperation::update("b", json!({ "doc": {} }))
                .in_index("queues")
                .if_version(3, 1),
            BulkOperation::delete("c"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            request.lines(),
            vec![
                json!({ "create": { "_id": "a", "routing": "k" } }),
                json!({ "url": "u" }),
                json!({ "update": { "_id": "b", "_index": "queues", "if_seq_no": 3, "if_primary_term": 1 } }),
                json!({ "doc": {} }),
                json!({ "delete": { "_id": "c" } }),
            ]
        );
    }

    #[test]
    fn answers_are_read_item_by_item_and_counted() {
        let answer = json!({ "errors": true, "items": [
            { "create": { "status": 409, "error": { "type": "version_conflict_engine_exception", "reason": "exists" } } },
            { "update": { "_id": "b", "status": 200, "result": "noop", "_seq_no": 4, "_primary_term": 1 } },
            { "index": { "status": 429 } },
        ] });
        let response = BulkResponse::parse(answer.clone(), 3, "/_bulk").expect("typed");
        let [create, update, index] = &response.items[..] else {
            panic!("three items");
        };
        assert!(create.is_conflict() && !create.is_success());
        assert_eq!(create.error_type(), "version_conflict_engine_exception");
        assert_eq!(create.error_kind(), ErrorKind::Rejected);
        assert!(update.is_success() && update.is_noop());
        assert_eq!(update.version, Some((4, 1)));
        assert_eq!(index.error_kind(), ErrorKind::Unavailable);
        let error = BulkResponse::parse(answer, 4, "/_bulk").expect_err("a missing item");
        assert!(
            error.to_string().contains("3 items for 4 operations"),
            "{error}"
        );
    }
}
