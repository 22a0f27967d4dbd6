//! The queue spout's claims of many queue documents at once: conditional partial updates in one
//! `_bulk`, one round trip whatever the number of queues claimed. (Edits that depend on what a queue
//! holds are in `edit_writes`.)

use serde_json::{Value, json};
use squall::frontier::SpoutError;
use tracing::warn;

use super::schema::queue_id;
use crate::client::{BulkItem, BulkOperation, BulkRequest, EsClient};

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
    let request = updates
        .iter()
        .map(|update| {
            BulkOperation::update(queue_id(&update.key), json!({ "doc": update.doc }))
                .if_version(update.seq_no, update.primary_term)
        })
        .collect();
    let items = bulk_items(client, queues_index, request).await?;
    Ok(updates
        .iter()
        .zip(items)
        .map(|(update, item)| {
            if item.is_success() {
                Some(item.version.unwrap_or((update.seq_no, update.primary_term)))
            } else {
                if !item.is_conflict() {
                    warn!(key = %update.key, error = ?item.error, status = item.status,
                        "queue update refused");
                }
                None
            }
        })
        .collect())
}

/// Sends queue updates in one `_bulk` and returns its items, one per update.
async fn bulk_items(
    client: &EsClient,
    queues_index: &str,
    request: BulkRequest,
) -> Result<Vec<BulkItem>, SpoutError> {
    if request.is_empty() {
        return Ok(Vec::new());
    }
    client
        .bulk(Some(queues_index), &request, None)
        .await
        .map(|answer| answer.items)
        .map_err(|e| e.for_spout("queue updates failed"))
}
