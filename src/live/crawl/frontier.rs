//! The frontier's counts for the page: URLs by status, those scheduled, the queues holding them.
//! Counting a large frontier costs the engine (or the embedded store) real work, so the counts are
//! taken in the background, and the pause after each count is fifty times what it took (at least
//! the configured period): counting takes at most 2 % of the time however large the frontier.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::frontier::{Catalog, UrlQuery};
use crate::model::Status;

/// How much longer than a count the pause after it is.
const PAUSE_FACTOR: u32 = 50;

/// What the last count found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FrontierCounts {
    /// URLs by status.
    pub by_status: Vec<(Status, u64)>,
    /// URLs due now or later.
    pub scheduled: u64,
    /// Queues holding URLs due now or later.
    pub queues: u64,
    /// When the count was taken.
    pub at: Option<Instant>,
    /// How long it took.
    pub took: Duration,
    /// Why the last count failed, when it did (the counts before it are kept).
    pub error: Option<String>,
}

/// Counts `catalog` into `counts` until `owner` is dropped.
pub(crate) fn spawn_counter<T: Send + Sync + 'static>(
    catalog: Arc<dyn Catalog>,
    counts: Arc<Mutex<FrontierCounts>>,
    owner: Weak<T>,
    period: Duration,
) {
    tokio::spawn(async move {
        while owner.strong_count() > 0 {
            let started = Instant::now();
            let result = count(catalog.as_ref()).await;
            let took = started.elapsed();
            if let Ok(mut counts) = counts.lock() {
                match result {
                    Ok(found) => *counts = FrontierCounts { took, ..found },
                    Err(error) => counts.error = Some(error),
                }
            }
            tokio::time::sleep(period.max(took * PAUSE_FACTOR)).await;
        }
    });
}

async fn count(catalog: &dyn Catalog) -> Result<FrontierCounts, String> {
    let scheduled = UrlQuery {
        scheduled: Some(true),
        ..UrlQuery::default()
    };
    let by_status = catalog.count_by_status().await.map_err(|e| e.to_string())?;
    let due = catalog.count(&scheduled).await.map_err(|e| e.to_string())?;
    let queues = catalog
        .count_queues(&scheduled)
        .await
        .map_err(|e| e.to_string())?;
    Ok(FrontierCounts {
        by_status,
        scheduled: due,
        queues,
        at: Some(Instant::now()),
        took: Duration::ZERO,
        error: None,
    })
}
