//! Reading held queues' URLs: one light query per queue (a term on the key, sorted by due date,
//! size N), all of them in one `_msearch`. Each costs what its queue's URLs cost, never what the
//! whole urls index holds, and one answer gives both a queue's due URLs and, when it has no more,
//! the date its next URL is due.

use chrono::{DateTime, Utc};
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::spout::SpoutError;
use tracing::warn;

use crate::client::{EsClient, RequestBody};
use crate::schema::{KeyField, StoredDocument, format_date, read_document};

/// What to read of one queue.
#[derive(Debug, Clone)]
pub(crate) struct ReadRequest {
    /// The queue's key.
    pub key: String,
    /// URLs to read at most.
    pub size: usize,
    /// Ids of URL documents to leave out (in the topology, or done too recently to show).
    pub skip: Vec<String>,
}

/// One queue's answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueueRead {
    /// Its URLs due now, earliest first.
    pub due: Vec<StoredDocument>,
    /// When nothing more is due: the earliest date among its other URLs (`None`: it has none).
    /// When the page was full of due URLs, unknown and `None`.
    pub next: Option<String>,
    /// Whether the page ended with due URLs, so more may be due.
    pub full: bool,
}

impl QueueRead {
    /// Whether the queue has nothing due beyond what was left out.
    pub fn drained(&self) -> bool {
        self.due.is_empty() && !self.full
    }
}

/// Reads `requests` in one `_msearch` of `urls_index`, one answer per request, in order.
pub(crate) async fn read_queues(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<Vec<QueueRead>, SpoutError> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let field = key_field.query_field();
    let mut lines = Vec::with_capacity(requests.len() * 2);
    for request in requests {
        lines.push(json!({}));
        lines.push(json!({
            "size": request.size.max(1),
            "track_total_hits": false,
            "query": { "bool": {
                "filter": [ { "term": { field.clone(): request.key } } ],
                "must_not": [ { "ids": { "values": request.skip } } ]
            } },
            "sort": [ { "nextFetchDate": { "order": "asc", "missing": "_last" } }, { "url": "asc" } ]
        }));
    }
    let answer = client
        .request(
            Method::Post,
            &format!("/{urls_index}/_msearch"),
            &[],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .map_err(|e| SpoutError::with_source("reading queues' URLs failed", e))?;
    let responses = answer["responses"].as_array().cloned().unwrap_or_default();
    if responses.len() != requests.len() {
        return Err(SpoutError::new(format!(
            "reading queues' URLs: {} answers for {} queues",
            responses.len(),
            requests.len()
        )));
    }
    requests
        .iter()
        .zip(responses)
        .map(|(request, response)| one_queue(request, &response, key_field, now))
        .collect()
}

/// One queue's answer out of its `_msearch` response.
fn one_queue(
    request: &ReadRequest,
    response: &Value,
    key_field: &KeyField,
    now: DateTime<Utc>,
) -> Result<QueueRead, SpoutError> {
    if !response["error"].is_null() {
        return Err(SpoutError::new(format!(
            "reading queue {}: {}",
            request.key, response["error"]
        )));
    }
    let hits = response["hits"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut read = QueueRead::default();
    let mut later = None;
    let mut undated = false;
    for hit in &hits {
        let doc = match read_document(&hit["_source"], key_field) {
            Ok(doc) => doc,
            Err(error) => {
                warn!(key = %request.key, %error, "unreadable URL document left out");
                continue;
            }
        };
        match doc.next_fetch {
            Some(due) if due <= now => read.due.push(doc),
            Some(due) => {
                later.get_or_insert(due);
            }
            None => undated = true,
        }
    }
    read.full = hits.len() >= request.size.max(1) && later.is_none() && !undated;
    if !read.full {
        read.next = later.map(format_date);
    }
    Ok(read)
}
