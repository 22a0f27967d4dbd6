//! The queue spout's engine calls for many queues at once: conditional updates of queue documents in
//! one `_bulk`, and the earliest due date of many keys in one `_msearch`. One round trip per step,
//! whatever the number of queues held.

use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::spout::SpoutError;
use tracing::warn;

use super::schema::queue_id;
use crate::client::{EsClient, RequestBody};
use crate::schema::KeyField;

/// A partial update of a queue document that applies only if nobody changed it since `seq_no`.
#[derive(Debug, Clone)]
pub(crate) struct ConditionalUpdate {
    /// The queue's key.
    pub key: String,
    /// The document's version as last seen.
    pub seq_no: i64,
    /// The document's primary term as last seen.
    pub primary_term: i64,
    /// The fields to set.
    pub doc: Value,
}

/// Applies `updates` in one `_bulk`: per update, the new version, or `None` when someone changed the
/// document first (or it is gone).
pub(crate) async fn conditional_updates(
    client: &EsClient,
    queues_index: &str,
    updates: &[ConditionalUpdate],
) -> Result<Vec<Option<(i64, i64)>>, SpoutError> {
    if updates.is_empty() {
        return Ok(Vec::new());
    }
    let mut lines = Vec::with_capacity(updates.len() * 2);
    for update in updates {
        lines.push(json!({ "update": {
            "_id": queue_id(&update.key),
            "if_seq_no": update.seq_no,
            "if_primary_term": update.primary_term,
        } }));
        lines.push(json!({ "doc": update.doc }));
    }
    let answer = client
        .request(
            Method::Post,
            &format!("/{queues_index}/_bulk"),
            &[],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .map_err(|e| SpoutError::with_source("queue updates failed", e))?;
    let items = answer["items"].as_array().cloned().unwrap_or_default();
    if items.len() != updates.len() {
        return Err(SpoutError::new(format!(
            "queue updates: the engine answered {} items for {} updates",
            items.len(),
            updates.len()
        )));
    }
    Ok(updates
        .iter()
        .zip(items)
        .map(|(update, item)| {
            let result = &item["update"];
            match result["status"].as_u64() {
                Some(200..=299) => Some((
                    result["_seq_no"].as_i64().unwrap_or(update.seq_no),
                    result["_primary_term"]
                        .as_i64()
                        .unwrap_or(update.primary_term),
                )),
                Some(409) => None,
                _ => {
                    warn!(key = %update.key, error = %result["error"], "queue update refused");
                    None
                }
            }
        })
        .collect())
}

/// The earliest `nextFetchDate` of each key's URLs, in one `_msearch` (`None`: never due again).
pub(crate) async fn earliest_dues(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    keys: &[String],
) -> Result<Vec<Option<String>>, SpoutError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut lines = Vec::with_capacity(keys.len() * 2);
    for key in keys {
        lines.push(json!({ "index": urls_index }));
        lines.push(json!({
            "size": 1,
            "track_total_hits": false,
            "_source": ["nextFetchDate"],
            "query": { "bool": { "filter": [
                { "term": { key_field.query_field(): key } },
                { "exists": { "field": "nextFetchDate" } }
            ] } },
            "sort": [ { "nextFetchDate": "asc" } ]
        }));
    }
    let answer = client
        .request(
            Method::Post,
            "/_msearch",
            &[],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .map_err(|e| SpoutError::with_source("reading queues' next dates failed", e))?;
    let responses = answer["responses"].as_array().cloned().unwrap_or_default();
    if responses.len() != keys.len() {
        return Err(SpoutError::new(format!(
            "reading queues' next dates: {} answers for {} queues",
            responses.len(),
            keys.len()
        )));
    }
    responses
        .iter()
        .zip(keys)
        .map(|(response, key)| {
            if let Some(error) = response.get("error") {
                return Err(SpoutError::new(format!(
                    "reading the next date of queue {key} failed: {error}"
                )));
            }
            Ok(response["hits"]["hits"][0]["_source"]["nextFetchDate"]
                .as_str()
                .map(str::to_string))
        })
        .collect()
}
