//! What a migration did: [`MigrationReport`] (also the `--report-json` file).

use serde::Serialize;

use super::checkpoint::SlicePosition;
use super::verify::Verification;

/// Where a resumed run started.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResumedFrom {
    /// Documents done by earlier runs.
    pub documents: u64,
    /// Batches done by earlier runs.
    pub batches: u64,
    /// Where each slice's reading stood.
    pub slices: Vec<SlicePosition>,
    /// When the checkpoint was written.
    pub checkpoint_written: String,
}

/// What a migration did (also the `--report-json` file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MigrationReport {
    /// The source index.
    pub source: String,
    /// The urls index.
    pub urls: String,
    /// The queues index.
    pub queues: String,
    /// Nothing was written.
    pub dry_run: bool,
    /// Every document was copied (false when stopped by `stop_after_batches`).
    pub completed: bool,
    /// Documents in the source when this run began.
    pub documents_total: u64,
    /// Documents copied, over all runs (in a dry run: that would be copied).
    pub documents: u64,
    /// Documents copied by this run.
    pub documents_this_run: u64,
    /// Documents of this run that had no key and got one computed from their URL.
    pub keys_added: u64,
    /// Documents of this run with neither a key nor a URL to compute one from (copied, no queue).
    pub documents_without_key: u64,
    /// Documents of this run without `nextFetchDate` (never due; they do not lower `nextDue`).
    pub documents_without_next_fetch_date: u64,
    /// Documents of this run whose `nextFetchDate` could not be read (their queue is made due).
    pub unreadable_dates: u64,
    /// Distinct keys seen by this run.
    pub distinct_keys_seen: u64,
    /// Queue updates sent, over all runs (in a dry run: that would be sent).
    pub queues_written: u64,
    /// Queue documents created by this run.
    pub queues_created: u64,
    /// Pages written, over all runs.
    pub batches: u64,
    /// Duration of this run.
    pub seconds: f64,
    /// Documents per second in this run.
    pub docs_per_second: f64,
    /// Where this run resumed, when a checkpoint was found.
    pub resumed_from: Option<ResumedFrom>,
    /// Indices this run created (in a dry run: that it would create).
    pub indices_created: Vec<String>,
    /// The checks at the end.
    pub verification: Verification,
}
