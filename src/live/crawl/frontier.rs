//! The frontier's counts for the page: URLs by status, those scheduled, the queues holding them.
//! Counting a large frontier costs the engine (or the embedded store) real work, so the counts are
//! taken in the background ([`Catalog::census`]: one pass where the frontier can) while someone
//! reads them (in the last minute), and the pause after each count is a hundred times what it took
//! (at least the configured period): counting takes at most 1 % of a thread's time however large
//! the frontier.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::frontier::Catalog;
use crate::model::Status;

/// How much longer than a count the pause after it is.
const PAUSE_FACTOR: u32 = 100;

/// What the last count found.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FrontierCounts {
    /// URLs by status.
    pub by_status: Vec<(Status, u64)>,
    /// URLs due now or later.
    pub scheduled: u64,
    /// Queues holding URLs due now or later.
    pub queues: u64,
    /// Queues whose earliest URL is due now, when the frontier counts them.
    pub queues_due_now: Option<u64>,
    /// When the count was taken.
    pub at: Option<Instant>,
    /// How long it took.
    pub took: Duration,
    /// Why the last count failed, when it did (the counts before it are kept).
    pub error: Option<String>,
}

/// While the counts are read lately: a frontier nobody looks at is not counted.
const READ_WITHIN: Duration = Duration::from_secs(60);

/// When the counts were last read; shared by the counter and their readers.
#[derive(Debug, Default)]
pub(crate) struct Readers {
    last: Mutex<Option<Instant>>,
    /// Wakes the counter, asleep while nobody read.
    woken: Notify,
    /// Ends the counter: its view is gone.
    closed: CancellationToken,
}

impl Readers {
    /// Someone reads the counts now.
    pub fn read(&self) {
        if let Ok(mut last) = self.last.lock() {
            *last = Some(Instant::now());
        }
        self.woken.notify_one();
    }

    fn lately(&self) -> bool {
        self.last
            .lock()
            .ok()
            .and_then(|last| *last)
            .is_some_and(|last| last.elapsed() < READ_WITHIN)
    }

    /// Resolves at the next read (at once if one came since the last call).
    async fn next_read(&self) {
        self.woken.notified().await;
    }

    /// Nobody will read again: the counter ends at once.
    pub fn close(&self) {
        self.closed.cancel();
    }
}

/// Counts `catalog` into `counts` while `readers` read them (at least `period` apart), until
/// they are closed. Asleep, with no timer, while nobody reads.
pub(crate) fn spawn_counter(
    catalog: Arc<dyn Catalog>,
    counts: Arc<Mutex<FrontierCounts>>,
    readers: Arc<Readers>,
    period: Duration,
) {
    let closed = readers.closed.clone();
    tokio::spawn(
        closed.run_until_cancelled_owned(count_while_read(catalog, counts, readers, period)),
    );
}

/// The counter's loop: a count, then a pause; asleep until the next read while nobody reads.
async fn count_while_read(
    catalog: Arc<dyn Catalog>,
    counts: Arc<Mutex<FrontierCounts>>,
    readers: Arc<Readers>,
    period: Duration,
) {
    loop {
        if !readers.lately() {
            readers.next_read().await;
            continue;
        }
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
}

async fn count(catalog: &dyn Catalog) -> Result<FrontierCounts, String> {
    let census = catalog.census().await.map_err(|e| e.to_string())?;
    Ok(FrontierCounts {
        by_status: census.by_status,
        scheduled: census.scheduled,
        queues: census.queues_scheduled,
        queues_due_now: census.queues_due_now,
        at: Some(Instant::now()),
        took: Duration::ZERO,
        error: None,
    })
}
