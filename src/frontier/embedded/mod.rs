//! The embedded frontier: URLs, their statuses and their due dates in a single [redb] file.
//!
//! redb was chosen over fjall because a crawl's writes are small batches that must land atomically
//! (a URL's record, its place in its queue's schedule and the queue's earliest due date change
//! together), and redb gives ACID transactions with durable commits and MVCC readers in one simple,
//! stable-format file, with no background compaction to tune.
//!
//! Tables:
//! - `urls`: URL → record (status, key, next fetch, metadata)
//! - `schedule`: (key, due millis, URL) → (), the due URLs of each queue in order
//! - `queue_heads`: key → earliest due millis of that queue
//! - `due_queues`: (earliest due millis, key) → (), the queues in order of their earliest due URL
//! - `queue_notes`: key → the queue's last fetch, Retry-After hold and Crawl-delay, so that a
//!   resumed crawl keeps its politeness from the first fetch (`notes.rs`)
//!
//! The frontier is also a [`Catalog`](crate::frontier::Catalog) (in `catalog.rs`): its URLs and
//! queues listed, counted and deleted, the four tables kept consistent.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use url::Url;

use super::{
    BusyUrls, DueUrl, ErrorKind, Spout, SpoutError, StatusStore, StatusWrite, StoreError, Written,
};
use crate::model::{CrawlUrl, Metadata, Status};

mod catalog;
mod census;
mod notes;
mod opening;
mod rules;

pub use opening::EmbeddedOptions;

const URLS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("urls");
const SCHEDULE: TableDefinition<'_, (&str, u64, &str), ()> = TableDefinition::new("schedule");
const QUEUE_HEADS: TableDefinition<'_, &str, u64> = TableDefinition::new("queue_heads");
const DUE_QUEUES: TableDefinition<'_, (u64, &str), ()> = TableDefinition::new("due_queues");

/// Why the embedded frontier could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum FrontierError {
    /// The directory could not be created or used.
    #[error("frontier path {path} is unusable: {message}")]
    Path {
        /// The path.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The directory holds other files and no frontier: it is not taken over.
    #[error(
        "frontier path {path} is not a squall frontier: it holds other files ({found}) and no \
         frontier.redb; give a new or empty directory"
    )]
    NotAFrontier {
        /// The directory.
        path: PathBuf,
        /// A few of the files it holds.
        found: String,
    },
    /// The frontier's file is not a frontier, or is damaged; it was left as it is.
    #[error(
        "the embedded frontier {path} is damaged or is not a squall frontier: {message}. It was \
         left as it is: restore it from a copy, or move it aside to start a new crawl"
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The directory is a symbolic link that leads nowhere: to itself (a loop) or to a path that
    /// does not exist.
    #[error("frontier path {path} leads nowhere: {message}")]
    BrokenLink {
        /// The path given.
        path: PathBuf,
        /// Where the link leads, and why that fails.
        message: String,
    },
    /// Another process (or another open in this one) holds the frontier's file.
    #[error(
        "the embedded frontier {path} is in use by another process{}: stop it, or give another \
         frontier path",
        holder.map(|pid| format!(" (PID {pid})")).unwrap_or_default()
    )]
    InUse {
        /// The file.
        path: PathBuf,
        /// The holder's process id, when its PID file names a live process.
        holder: Option<u32>,
    },
    /// The database failed.
    #[error("embedded frontier storage error: {0}")]
    Storage(#[from] redb::Error),
}

impl FrontierError {
    /// Whether trying again may help: a failed read or write of the file, or a database another
    /// process holds, may pass; a corrupted or incompatible database, or an unusable path, will not.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FrontierError::Storage(error) => storage_error_kind(error),
            FrontierError::InUse { .. } => ErrorKind::Unavailable,
            FrontierError::Path { .. }
            | FrontierError::BrokenLink { .. }
            | FrontierError::NotAFrontier { .. }
            | FrontierError::Damaged { .. } => ErrorKind::Rejected,
        }
    }
}

/// A database failure that may pass (the file could not be read or written, another process holds
/// it), as opposed to one that will not (corruption, an incompatible format).
fn storage_error_kind(error: &redb::Error) -> ErrorKind {
    match error {
        redb::Error::Io(_)
        | redb::Error::PreviousIo
        | redb::Error::DatabaseAlreadyOpen
        | redb::Error::WouldBlock
        | redb::Error::TransactionInProgress => ErrorKind::Unavailable,
        _ => ErrorKind::Rejected,
    }
}

/// A URL's stored record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Record {
    status: Status,
    key: String,
    next_fetch: Option<i64>,
    metadata: Metadata,
    /// When the URL was first stored, in seconds since the epoch (none in records written before
    /// squall kept it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created: Option<i64>,
}

/// What the frontier holds for one URL.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredStatus {
    /// Its status.
    pub status: Status,
    /// When it is due next; `None` means never.
    pub next_fetch: Option<DateTime<Utc>>,
    /// Its persisted metadata.
    pub metadata: Metadata,
}

/// How many queues and URLs one spout query reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryLimits {
    /// Queues read per query (`frontier.max.buckets`).
    pub max_buckets: usize,
    /// Due URLs read per queue per query (`frontier.max.urls.per.bucket`).
    pub max_urls_per_bucket: usize,
}

impl QueryLimits {
    /// The limits of `instances` spout instances read as one (`spout.parallelism`): each has
    /// `self`'s buckets, so one query reads that many times as many queues.
    pub fn for_instances(self, instances: usize) -> Self {
        QueryLimits {
            max_buckets: self.max_buckets.saturating_mul(instances.max(1)),
            ..self
        }
    }
}

/// A persistent frontier in one file: a [`StatusStore`], a [`Catalog`](crate::frontier::Catalog),
/// and the source of [`EmbeddedSpout`]s.
#[derive(Clone, derive_more::Debug)]
pub struct EmbeddedFrontier {
    #[debug(skip)]
    db: Arc<Database>,
    path: PathBuf,
}

impl EmbeddedFrontier {
    /// Opens the frontier kept in directory `dir` (file `frontier.redb`), creating it if needed,
    /// and checks the whole file ([`EmbeddedOptions`]' defaults). A directory holding other files, or
    /// a file that is not a frontier or is damaged, is an error that names it; nothing is
    /// written to it then.
    pub fn open(dir: &Path) -> Result<Self, FrontierError> {
        Self::open_with(dir, EmbeddedOptions::default())
    }

    /// [`open`](Self::open) with `options`.
    pub fn open_with(dir: &Path, options: EmbeddedOptions) -> Result<Self, FrontierError> {
        let (db, path) = opening::open_database(dir, options)?;
        let txn = db.begin_write().map_err(redb::Error::from)?;
        {
            txn.open_table(URLS).map_err(redb::Error::from)?;
            txn.open_table(SCHEDULE).map_err(redb::Error::from)?;
            txn.open_table(QUEUE_HEADS).map_err(redb::Error::from)?;
            txn.open_table(DUE_QUEUES).map_err(redb::Error::from)?;
            txn.open_table(notes::QUEUE_NOTES)
                .map_err(redb::Error::from)?;
        }
        txn.commit().map_err(redb::Error::from)?;
        Ok(EmbeddedFrontier {
            db: Arc::new(db),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A spout over this frontier.
    pub fn spout(&self, limits: QueryLimits) -> EmbeddedSpout {
        EmbeddedSpout {
            frontier: self.clone(),
            limits,
        }
    }

    /// Number of URLs per status.
    pub fn count_by_status(&self) -> Result<Vec<(Status, u64)>, FrontierError> {
        let txn = self.db.begin_read().map_err(redb::Error::from)?;
        let urls = txn.open_table(URLS).map_err(redb::Error::from)?;
        let mut counts = [0u64; 5];
        for entry in urls.iter().map_err(redb::Error::from)? {
            let (_, value) = entry.map_err(redb::Error::from)?;
            if let Ok(record) = serde_json::from_slice::<Record>(value.value())
                && let Some(i) = Status::ALL.iter().position(|s| *s == record.status)
            {
                counts[i] += 1;
            }
        }
        Ok(Status::ALL.into_iter().zip(counts).collect())
    }

    /// The stored status and next fetch date of `url`, if known.
    pub fn lookup(&self, url: &str) -> Result<Option<StoredStatus>, FrontierError> {
        let txn = self.db.begin_read().map_err(redb::Error::from)?;
        let urls = txn.open_table(URLS).map_err(redb::Error::from)?;
        let Some(value) = urls.get(url).map_err(redb::Error::from)? else {
            return Ok(None);
        };
        Ok(serde_json::from_slice::<Record>(value.value())
            .ok()
            .map(|r| StoredStatus {
                status: r.status,
                next_fetch: r.next_fetch.and_then(from_millis),
                metadata: r.metadata,
            }))
    }

    fn store_blocking(
        &self,
        batch: &[StatusWrite],
    ) -> Result<Vec<Result<Written, StoreError>>, redb::Error> {
        let now = Utc::now().timestamp();
        let txn = self.db.begin_write()?;
        let mut outcomes = Vec::with_capacity(batch.len());
        {
            let mut urls = txn.open_table(URLS)?;
            let mut schedule = txn.open_table(SCHEDULE)?;
            let mut queue_notes = txn.open_table(notes::QUEUE_NOTES)?;
            let mut touched: BTreeSet<String> = BTreeSet::new();
            for write in batch {
                notes::remember(&mut queue_notes, &write.key, &write.queue)?;
                let url = write.url.url.as_str();
                let existing = match urls.get(url)? {
                    Some(value) => match serde_json::from_slice::<Record>(value.value()) {
                        Ok(record) => Some(record),
                        Err(e) => {
                            // Never overwrite what cannot be read: its schedule entry is unknown.
                            outcomes.push(Err(StoreError::rejected(format!(
                                "the stored record of {url} is unreadable: {e}"
                            ))));
                            continue;
                        }
                    },
                    None => None,
                };
                if write.status == Status::Discovered && existing.is_some() {
                    // Create-only: a known URL keeps its status.
                    outcomes.push(Ok(Written::Known));
                    continue;
                }
                let record = Record {
                    status: write.status,
                    key: write.key.clone(),
                    next_fetch: write.next_fetch.map(|t| t.timestamp_millis()),
                    metadata: write.url.metadata.clone(),
                    created: match &existing {
                        Some(old) => old.created,
                        None => Some(now),
                    },
                };
                let bytes = match serde_json::to_vec(&record) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        outcomes.push(Err(StoreError::rejected(format!(
                            "cannot encode {url}: {e}"
                        ))));
                        continue;
                    }
                };
                if let Some(old) = &existing
                    && let Some(due) = old.next_fetch
                {
                    schedule.remove((old.key.as_str(), millis_key(due), url))?;
                    touched.insert(old.key.clone());
                }
                urls.insert(url, bytes.as_slice())?;
                if let Some(due) = record.next_fetch {
                    schedule.insert((record.key.as_str(), millis_key(due), url), ())?;
                    touched.insert(record.key.clone());
                }
                outcomes.push(Ok(match write.status {
                    Status::Discovered => Written::Created,
                    _ => Written::Replaced,
                }));
            }
            let mut heads = txn.open_table(QUEUE_HEADS)?;
            let mut due_queues = txn.open_table(DUE_QUEUES)?;
            for key in touched {
                move_head(&schedule, &mut heads, &mut due_queues, &key)?;
            }
        }
        txn.commit()?;
        Ok(outcomes)
    }

    fn due_blocking(
        &self,
        limits: QueryLimits,
        now: DateTime<Utc>,
        busy: &BusyUrls,
    ) -> Result<Vec<DueUrl>, redb::Error> {
        let txn = self.db.begin_read()?;
        let due_queues = txn.open_table(DUE_QUEUES)?;
        let schedule = txn.open_table(SCHEDULE)?;
        let urls = txn.open_table(URLS)?;
        let queue_notes = txn.open_table(notes::QUEUE_NOTES)?;
        let now = millis_key(now.timestamp_millis());
        let mut batch = Vec::new();
        let mut buckets = 0;
        for entry in due_queues.range((0u64, "")..(now.saturating_add(1), ""))? {
            if buckets >= limits.max_buckets {
                break;
            }
            let (queue, _) = entry?;
            let (_, key) = queue.value();
            let hints = notes::hints(&queue_notes, key)?;
            let mut taken = 0;
            let mut held = 0;
            for item in schedule.range((key, 0u64, "")..(key, now.saturating_add(1), ""))? {
                // A queue that already has its share in the topology is passed over, so that hosts
                // with a long backlog do not take every bucket from newer ones.
                if taken + held >= limits.max_urls_per_bucket {
                    break;
                }
                let (item, _) = item?;
                let (_, _, url) = item.value();
                if busy.contains(url) {
                    // Only URLs not yet started by the fetcher count toward the share: once a
                    // host's URLs are being fetched, the next ones may go to its fetcher queue.
                    if busy.is_waiting(url) {
                        held += 1;
                    }
                    continue;
                }
                let Some(value) = urls.get(url)? else {
                    continue;
                };
                let Ok(record) = serde_json::from_slice::<Record>(value.value()) else {
                    continue;
                };
                let Ok(parsed) = Url::parse(url) else {
                    continue;
                };
                let url = CrawlUrl {
                    url: parsed,
                    metadata: record.metadata,
                };
                let mut due = DueUrl::new(url, key);
                due.hints = hints.clone();
                batch.push(due);
                taken += 1;
            }
            if taken > 0 {
                buckets += 1;
            }
        }
        Ok(batch)
    }
}

/// Dates before 1970 sort first; the schedule stores unsigned milliseconds.
fn millis_key(millis: i64) -> u64 {
    u64::try_from(millis).unwrap_or(0)
}

fn from_millis(millis: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt(millis).single()
}

/// Moves queue `key`'s head (and its place among the due queues) to its earliest due URL, or
/// removes both when it has none.
fn move_head(
    schedule: &redb::Table<'_, (&str, u64, &str), ()>,
    heads: &mut redb::Table<'_, &str, u64>,
    due_queues: &mut redb::Table<'_, (u64, &str), ()>,
    key: &str,
) -> Result<(), redb::Error> {
    let earliest = first_due(schedule, key)?;
    let previous = heads.get(key)?.map(|v| v.value());
    if previous == earliest {
        return Ok(());
    }
    if let Some(previous) = previous {
        due_queues.remove((previous, key))?;
    }
    match earliest {
        Some(earliest) => {
            heads.insert(key, earliest)?;
            due_queues.insert((earliest, key), ())?;
        }
        None => {
            heads.remove(key)?;
        }
    }
    Ok(())
}

fn first_due(
    schedule: &redb::Table<'_, (&str, u64, &str), ()>,
    key: &str,
) -> Result<Option<u64>, redb::Error> {
    let mut range = schedule.range((key, 0u64, "")..=(key, u64::MAX, "\u{10FFFF}"))?;
    match range.next() {
        Some(entry) => {
            let (item, _) = entry?;
            let (_, due, _) = item.value();
            Ok(Some(due))
        }
        None => Ok(None),
    }
}

#[async_trait]
impl StatusStore for EmbeddedFrontier {
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>> {
        let outcomes = self.store_telling(batch).await;
        outcomes.into_iter().map(|o| o.map(|_| ())).collect()
    }

    async fn store_telling(&self, batch: Vec<StatusWrite>) -> Vec<Result<Written, StoreError>> {
        let frontier = self.clone();
        let count = batch.len();
        let result = tokio::task::spawn_blocking(move || frontier.store_blocking(&batch)).await;
        match result {
            Ok(Ok(outcomes)) => outcomes,
            Ok(Err(error)) => {
                let message = format!("embedded frontier write failed: {error}");
                vec![Err(StoreError::of_kind(storage_error_kind(&error), message)); count]
            }
            Err(join) => vec![
                Err(StoreError::rejected(format!(
                    "embedded frontier write panicked: {join}"
                )));
                count
            ],
        }
    }
}

/// A spout over an [`EmbeddedFrontier`]: the queues with the earliest due URLs first, a few URLs each,
/// skipping URLs the runner already holds so that a query reads past them.
pub struct EmbeddedSpout {
    frontier: EmbeddedFrontier,
    limits: QueryLimits,
}

#[async_trait]
impl Spout for EmbeddedSpout {
    /// It skips busy URLs while reading.
    fn reads_past_busy(&self) -> bool {
        true
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let frontier = self.frontier.clone();
        let limits = self.limits;
        let busy = busy.clone();
        tokio::task::spawn_blocking(move || {
            frontier
                .due_blocking(limits, Utc::now(), &busy)
                .map_err(|e| {
                    SpoutError::of_kind(storage_error_kind(&e), "embedded frontier query failed")
                        .caused_by(e)
                })
        })
        .await
        .map_err(|e| SpoutError::rejected("embedded frontier query panicked").caused_by(e))?
    }
}
