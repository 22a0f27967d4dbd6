//! The migration's bulk writes: every item must succeed; those refused with 429 (the engine's
//! write queue full) are sent again, with a growing wait, a few times.

use std::time::Duration;

use crate::client::{BulkOperation, BulkRequest, EsClient};

use super::MigrateError;

/// How bulk items refused with 429 are retried.
const BULK_RETRIES: u32 = 6;

/// What a bulk did.
#[derive(Debug, Default)]
pub(crate) struct BulkOutcome {
    /// Documents created (not replaced or updated).
    pub created: u64,
}

/// Sends `operations` (on `index`, named in messages), retrying the items refused with 429; fails
/// on any other item error.
pub(crate) async fn bulk(
    client: &EsClient,
    index: &str,
    operations: Vec<BulkOperation>,
) -> Result<BulkOutcome, MigrateError> {
    let mut outcome = BulkOutcome::default();
    let total = operations.len();
    let mut pending = operations;
    let mut wait = Duration::from_millis(500);
    let mut attempt = 0;
    while !pending.is_empty() {
        let request: BulkRequest = pending.iter().cloned().collect();
        let answer = client.bulk(None, &request, None).await?;
        let mut retry = Vec::new();
        let mut failed = 0;
        let mut first = None;
        for (item, operation) in answer.items.iter().zip(pending) {
            if item.is_success() {
                outcome.created += u64::from(item.is_created());
            } else if item.status == 429 && attempt < BULK_RETRIES {
                retry.push(operation);
            } else {
                failed += 1;
                first.get_or_insert_with(|| {
                    format!(
                        "{}: {} (HTTP {}, id {})",
                        item.error_type(),
                        item.reason().unwrap_or(""),
                        item.status,
                        item.id.as_deref().unwrap_or("?")
                    )
                });
            }
        }
        if failed > 0 {
            return Err(MigrateError::Bulk {
                index: index.to_string(),
                failed,
                total,
                first: first.unwrap_or_default(),
            });
        }
        pending = retry;
        if !pending.is_empty() {
            attempt += 1;
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(10));
        }
    }
    Ok(outcome)
}
