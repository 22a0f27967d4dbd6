//! The queue spout's updates of many queue documents at once: conditional or scripted, in one
//! `_bulk`. One round trip per step, whatever the number of queues held.

use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::frontier::SpoutError;
use tracing::warn;

use super::schema::queue_id;
use crate::client::{EsClient, RequestBody};

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
    let items = bulk_items(client, queues_index, lines, updates.len()).await?;
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

/// Sends queue updates in one `_bulk` and returns its items, one per update.
async fn bulk_items(
    client: &EsClient,
    queues_index: &str,
    lines: Vec<Value>,
    expected: usize,
) -> Result<Vec<Value>, SpoutError> {
    let answer = client
        .request(
            Method::Post,
            &format!("/{queues_index}/_bulk"),
            &[],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .map_err(|e| e.for_spout("queue updates failed"))?;
    let items = match answer {
        Value::Object(mut answer) => match answer.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if items.len() != expected {
        return Err(SpoutError::rejected(format!(
            "queue updates: the engine answered {} items for {expected} updates",
            items.len()
        )));
    }
    Ok(items)
}

/// A scripted update of one queue document.
#[derive(Debug, Clone)]
pub(crate) struct ScriptedUpdate {
    /// The queue's key.
    pub key: String,
    /// The script's parameters.
    pub params: Value,
}

/// Runs `script` on each queue in one `_bulk`: per update, whether it changed the document (`false`
/// when the script chose not to, or the document is gone).
pub(crate) async fn scripted_updates(
    client: &EsClient,
    queues_index: &str,
    script: &str,
    updates: &[ScriptedUpdate],
) -> Result<Vec<bool>, SpoutError> {
    if updates.is_empty() {
        return Ok(Vec::new());
    }
    let mut lines = Vec::with_capacity(updates.len() * 2);
    for update in updates {
        lines.push(json!({ "update": { "_id": queue_id(&update.key), "retry_on_conflict": 5 } }));
        lines.push(
            json!({ "script": { "source": script, "lang": "painless", "params": update.params } }),
        );
    }
    let items = bulk_items(client, queues_index, lines, updates.len()).await?;
    updates
        .iter()
        .zip(items)
        .map(|(update, item)| {
            let result = &item["update"];
            match result["status"].as_u64() {
                Some(200..=299) => Ok(result["result"].as_str() != Some("noop")),
                Some(404) => Ok(false),
                _ => Err(SpoutError::rejected(format!(
                    "updating queue {} failed: {}",
                    update.key, result["error"]
                ))),
            }
        })
        .collect()
}
