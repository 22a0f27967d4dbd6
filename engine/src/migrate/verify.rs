//! The checks at the end of a migration: status counts, one queue per key, and the invariant.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use super::MigrateError;
use super::document::parse_date;
use crate::client::EsClient;
use crate::queue::fields::{KEY, NEXT_DUE};
use crate::queue::schema::queue_id;
use crate::status_index::schema::{KeyField, format_date};

/// How many keys each list of problems shows at most (the counts are exact).
pub const MAX_LISTED: usize = 100;

/// The bucket name for documents without a `status`.
pub const NO_STATUS: &str = "(none)";

/// A queue whose `nextDue` is later than the earliest `nextFetchDate` of its URLs (or missing while
/// its URLs have dates).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvariantViolation {
    /// The queue key.
    pub key: String,
    /// Its `nextDue` (`None`: missing).
    pub next_due: Option<String>,
    /// The earliest `nextFetchDate` of its URLs.
    pub earliest_next_fetch_date: String,
}

/// What the checks found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Whether the checks ran (not in a dry run, nor when a run stopped early).
    pub performed: bool,
    /// Documents per status in the source (`(none)` for documents without one).
    pub status_counts_source: BTreeMap<String, u64>,
    /// Documents per status in the urls index.
    pub status_counts_urls: BTreeMap<String, u64>,
    /// Distinct keys in the urls index.
    pub distinct_keys: u64,
    /// Documents in the queues index.
    pub queue_docs: u64,
    /// How many keys of the urls index have no queue document.
    pub keys_without_queue_count: u64,
    /// Some of them (at most [`MAX_LISTED`]).
    pub keys_without_queue: Vec<String>,
    /// How many queue documents have no URL in the urls index (or an id that is not their key's).
    pub queues_without_urls_count: u64,
    /// Some of them (at most [`MAX_LISTED`]).
    pub queues_without_urls: Vec<String>,
    /// How many queues break the invariant.
    pub invariant_violation_count: u64,
    /// Some of them (at most [`MAX_LISTED`]).
    pub invariant_violations: Vec<InvariantViolation>,
    /// True when every check passed.
    pub ok: bool,
}

impl Verification {
    /// One line per failed check, for messages.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.status_counts_source != self.status_counts_urls {
            problems.push(format!(
                "status counts differ: source {:?}, urls {:?}",
                self.status_counts_source, self.status_counts_urls
            ));
        }
        if self.distinct_keys != self.queue_docs {
            problems.push(format!(
                "{} distinct keys in urls but {} queue documents",
                self.distinct_keys, self.queue_docs
            ));
        }
        if self.keys_without_queue_count > 0 {
            problems.push(format!(
                "{} keys have no queue document, e.g. {:?}",
                self.keys_without_queue_count, self.keys_without_queue
            ));
        }
        if self.queues_without_urls_count > 0 {
            problems.push(format!(
                "{} queue documents have no URLs, e.g. {:?}",
                self.queues_without_urls_count, self.queues_without_urls
            ));
        }
        if self.invariant_violation_count > 0 {
            problems.push(format!(
                "{} queues have nextDue later than their earliest nextFetchDate, e.g. {:?}",
                self.invariant_violation_count, self.invariant_violations
            ));
        }
        problems
    }
}

/// Runs the three checks on indices that are refreshed: counts per status equal in `source` and
/// `urls`; exactly one queue document (id = SHA-256 of the key) per distinct key of `urls`; and
/// for every queue, `nextDue` <= the earliest `nextFetchDate` of its URLs.
pub async fn verify(
    client: &EsClient,
    source: &str,
    urls: &str,
    queues: &str,
    key_field: &KeyField,
) -> Result<Verification, MigrateError> {
    let status_counts_source = status_counts(client, source).await?;
    let status_counts_urls = status_counts(client, urls).await?;
    let minimums = key_minimums(client, urls, key_field).await?;
    let queue_docs = queue_documents(client, queues).await?;
    let queues_without_key = count(
        client,
        queues,
        json!({ "bool": { "must_not": { "exists": { "field": "key" } } } }),
    )
    .await?;

    let mut verification = Verification {
        performed: true,
        status_counts_source,
        status_counts_urls,
        distinct_keys: minimums.len() as u64,
        queue_docs: queue_docs.len() as u64 + queues_without_key,
        queues_without_urls_count: queues_without_key,
        ..Verification::default()
    };
    let mut by_key: HashMap<&str, &QueueDocument> = HashMap::new();
    for queue in &queue_docs {
        let known = minimums.contains_key(queue.key.as_str());
        if !known || queue.id != queue_id(&queue.key) || by_key.contains_key(queue.key.as_str()) {
            verification.queues_without_urls_count += 1;
            push_limited(&mut verification.queues_without_urls, queue.key.clone());
            continue;
        }
        by_key.insert(queue.key.as_str(), queue);
    }
    let mut keys: Vec<&String> = minimums.keys().collect();
    keys.sort();
    for key in keys {
        let Some(queue) = by_key.get(key.as_str()) else {
            verification.keys_without_queue_count += 1;
            push_limited(&mut verification.keys_without_queue, key.clone());
            continue;
        };
        let Some(Some(earliest)) = minimums.get(key) else {
            continue;
        };
        let due = queue.next_due.as_ref().and_then(|d| parse_date(&json!(d)));
        if due.is_none_or(|due| due.timestamp_millis() > earliest.timestamp_millis()) {
            verification.invariant_violation_count += 1;
            if verification.invariant_violations.len() < MAX_LISTED {
                verification.invariant_violations.push(InvariantViolation {
                    key: key.clone(),
                    next_due: queue.next_due.clone(),
                    earliest_next_fetch_date: format_date(*earliest),
                });
            }
        }
    }
    verification.ok = verification.problems().is_empty();
    Ok(verification)
}

fn push_limited(list: &mut Vec<String>, item: String) {
    if list.len() < MAX_LISTED {
        list.push(item);
    }
}

/// Documents per status (a terms aggregation on `status`; `(none)` counts those without one).
pub async fn status_counts(
    client: &EsClient,
    index: &str,
) -> Result<BTreeMap<String, u64>, MigrateError> {
    let body = json!({
        "size": 0,
        "track_total_hits": true,
        "aggs": { "status": { "terms": { "field": "status", "size": 1000, "missing": NO_STATUS } } }
    });
    let answer = client
        .search(&format!("/{index}/_search"), &[], body)
        .await?;
    let mut counts = BTreeMap::new();
    for bucket in crate::client::buckets(&answer.aggregations["status"]) {
        let name = match &bucket["key"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        counts.insert(name, bucket["doc_count"].as_u64().unwrap_or(0));
    }
    let other = answer.aggregations["status"]["sum_other_doc_count"]
        .as_u64()
        .unwrap_or(0);
    if other > 0 {
        counts.insert("(other)".to_string(), other);
    }
    Ok(counts)
}

/// Every distinct key of `index` with the earliest `nextFetchDate` of its documents (`None` when
/// none has one): a composite aggregation, paged.
pub async fn key_minimums(
    client: &EsClient,
    index: &str,
    key_field: &KeyField,
) -> Result<HashMap<String, Option<DateTime<Utc>>>, MigrateError> {
    let field = key_field.query_field();
    let mut minimums = HashMap::new();
    let mut after: Option<Value> = None;
    loop {
        let mut composite = json!({
            "size": 1000,
            "sources": [{ "key": { "terms": { "field": field } } }]
        });
        if let Some(after) = &after {
            composite["after"] = after.clone();
        }
        let body = json!({
            "size": 0,
            "aggs": { "keys": {
                "composite": composite,
                "aggs": { "earliest": { "min": { "field": "nextFetchDate" } } }
            } }
        });
        let answer = client
            .search(&format!("/{index}/_search"), &[], body)
            .await?;
        let aggregation = &answer.aggregations["keys"];
        let buckets = crate::client::buckets(aggregation);
        for bucket in buckets {
            let key = match &bucket["key"]["key"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let earliest = bucket["earliest"]["value"]
                .as_f64()
                .and_then(|millis| Utc.timestamp_millis_opt(millis as i64).single());
            minimums.insert(key, earliest);
        }
        match aggregation.get("after_key") {
            Some(next) if !buckets.is_empty() && !next.is_null() => after = Some(next.clone()),
            _ => return Ok(minimums),
        }
    }
}

/// How many documents of `index` match `query`.
pub async fn count(client: &EsClient, index: &str, query: Value) -> Result<u64, MigrateError> {
    Ok(client.count(index, query).await?)
}

/// A queue document, as the checks read it.
#[derive(Debug, Clone)]
struct QueueDocument {
    id: String,
    key: String,
    next_due: Option<String>,
}

/// Every document of the queues index (sorted by key, paged with `search_after`).
async fn queue_documents(
    client: &EsClient,
    index: &str,
) -> Result<Vec<QueueDocument>, MigrateError> {
    let mut documents = Vec::new();
    let mut after: Option<Value> = None;
    loop {
        let mut body = json!({
            "size": 1000,
            "_source": [KEY, NEXT_DUE],
            "sort": [{ KEY: "asc" }],
            "query": { "exists": { "field": KEY } }
        });
        if let Some(after) = &after {
            body["search_after"] = after.clone();
        }
        let answer = client
            .search(&format!("/{index}/_search"), &[], body)
            .await?;
        let hits = answer.hits.hits;
        if hits.is_empty() {
            return Ok(documents);
        }
        after = hits.last().map(|hit| json!(hit.sort));
        for hit in hits {
            documents.push(QueueDocument {
                key: hit.field(KEY).as_str().unwrap_or_default().to_string(),
                next_due: hit.field(NEXT_DUE).as_str().map(str::to_string),
                id: hit.id,
            });
        }
    }
}
