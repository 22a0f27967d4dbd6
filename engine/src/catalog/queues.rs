//! The queues of the catalog: listed from the queue frontier's queues index, or, for a status
//! index, from a composite aggregation on the key field.

use serde_json::{Value, json};
use squall::frontier::QueuePage;

use super::query::sorted_hits;
use crate::client::{EsClient, EsError};
use crate::queue::fields::KEY;
use crate::status_index::schema::KeyField;

/// Buckets per request of the composite walk.
const BUCKETS: u64 = 1_000;

/// The queues of the queue frontier: one document per key in `queues_index`, sorted by key.
pub(super) async fn indexed_queues(
    client: &EsClient,
    queues_index: &str,
    start: u64,
    size: u64,
) -> Result<QueuePage, EsError> {
    let body = json!({
        "query": { "match_all": {} },
        "sort": [{ KEY: { "order": "asc" } }],
        "_source": [KEY]
    });
    let hits = sorted_hits(client, queues_index, body, start, size).await?;
    let keys = hits
        .iter()
        .filter_map(|hit| hit.field(KEY).as_str().map(str::to_string))
        .collect();
    let total = client
        .count(queues_index, json!({ "match_all": {} }))
        .await?;
    Ok(QueuePage { keys, total })
}

/// A bucket's key as text.
fn bucket_key(bucket: &Value) -> String {
    match &bucket["key"]["key"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The queues of a status index: the distinct values of the key field, walked in order with a
/// composite aggregation up to the page. The total is exact when the walk reached the last key,
/// else the engine's cardinality estimate (exact up to 40,000 keys, close above).
pub(super) async fn aggregated_queues(
    client: &EsClient,
    index: &str,
    key_field: &KeyField,
    start: u64,
    size: u64,
) -> Result<QueuePage, EsError> {
    let field = key_field.query_field();
    let path = format!("/{index}/_search");
    let end = start.saturating_add(size);
    let mut keys = Vec::new();
    let mut seen: u64 = 0;
    let mut estimate = None;
    let mut after: Option<Value> = None;
    loop {
        let chunk = end.saturating_sub(seen).clamp(1, BUCKETS);
        let mut composite = json!({
            "size": chunk,
            "sources": [{ "key": { "terms": { "field": field } } }]
        });
        if let Some(after) = &after {
            composite["after"] = after.clone();
        }
        let mut aggs = json!({ "keys": { "composite": composite } });
        if estimate.is_none() {
            aggs["total"] =
                json!({ "cardinality": { "field": field, "precision_threshold": 40_000 } });
        }
        let body = json!({ "size": 0, "track_total_hits": false, "aggs": aggs });
        let answer = client.search(&path, &[], body).await?;
        if estimate.is_none() {
            estimate = Some(answer.aggregations["total"]["value"].as_u64().unwrap_or(0));
        }
        let aggregation = &answer.aggregations["keys"];
        let buckets = crate::client::buckets(aggregation);
        for bucket in buckets {
            if seen >= start && (keys.len() as u64) < size {
                keys.push(bucket_key(bucket));
            }
            seen += 1;
        }
        let last = (buckets.len() as u64) < chunk;
        match aggregation.get("after_key") {
            Some(next) if !last && !next.is_null() => after = Some(next.clone()),
            _ => return Ok(QueuePage { keys, total: seen }),
        }
        if seen >= end {
            let total = estimate.unwrap_or(0).max(seen);
            return Ok(QueuePage { keys, total });
        }
    }
}
