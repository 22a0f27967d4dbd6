//! Migration of a status index (StormCrawler's, or squall's own) into the two indices of the queue
//! frontier: **urls** (the same documents, same ids, no routing) and **queues** (one document per
//! key, `nextDue` = the earliest `nextFetchDate` of its URLs).
//!
//! [`migrate`] reads the source with a point in time and `search_after` (sorted by `url`, so that a
//! new point in time continues where an old one stopped), writes every document unchanged into urls
//! (adding the key into the bucket field when the source has none, computed from the URL with the
//! partition mode), and lowers each key's queue `nextDue` with a scripted upsert (a minimum, so
//! writing twice does no harm): one update per key per batch, and none when this run already sent an
//! earlier or equal date. The source is only read.
//!
//! After every batch a [`Checkpoint`] records where reading stands; a new run with the same source,
//! urls and queues continues from there. At the end the indices are refreshed and [`verify`] checks
//! the counts per status, one queue per distinct key, and the invariant (`nextDue` <= the earliest
//! `nextFetchDate` of the key's URLs).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use squall_spouts::client::{ConnectionSettings, EsClient};
//! use squall_spouts::migrate::{MigrationOptions, migrate};
//!
//! let client = EsClient::new(ConnectionSettings::new("http://127.0.0.1:9200")?)?;
//! let report = migrate(&client, &MigrationOptions::new("status", "urls", "queues")).await?;
//! assert!(report.verification.ok, "{:?}", report.verification.problems());
//! # Ok(()) }
//! ```

mod checkpoint;
mod document;
mod reader;
mod verify;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use elasticsearch::http::Method;
use serde::Serialize;
use serde_json::{Value, json};
use squall::model::PartitionMode;

pub use checkpoint::{Checkpoint, Position};
pub use document::{
    NextFetch, PreparedDocument, ensure_queue, existing_key, parse_date, prepare_document,
};
pub use verify::{
    InvariantViolation, MAX_LISTED, NO_STATUS, Verification, count, key_minimums, status_counts,
    verify,
};

use crate::client::{EsClient, EsError, RequestBody};
use crate::queue::schema::{lower_next_due, queues_index_body};
use crate::schema::{KeyField, format_date, urls_index_body};
use reader::{Hit, Reader};

/// The refresh interval the urls index gets back after the copy, when the migration created it.
pub const URLS_REFRESH_INTERVAL: &str = "5s";

/// The refresh interval of a queues index the migration creates.
pub const QUEUES_REFRESH_INTERVAL: &str = "1s";

/// The largest batch: the engines' default `index.max_result_window`.
pub const MAX_BATCH_SIZE: usize = 10_000;

/// How bulk items refused with 429 are retried.
const BULK_RETRIES: u32 = 6;

/// What to migrate, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationOptions {
    /// The status index to read (never modified).
    pub source: String,
    /// The urls index to write.
    pub urls: String,
    /// The queues index to write.
    pub queues: String,
    /// How a key is computed for documents that have none.
    pub partition_mode: PartitionMode,
    /// Where documents keep their key (`key`, or `metadata.hostname` style).
    pub bucket_field: String,
    /// Documents per page read and per bulk written (1 to [`MAX_BATCH_SIZE`]).
    pub batch_size: usize,
    /// Read and compute everything, write nothing (no index created, no checkpoint).
    pub dry_run: bool,
    /// Primary shards of the urls index, when it is created.
    pub urls_shards: u32,
    /// Primary shards of the queues index, when it is created.
    pub queues_shards: u32,
    /// Replicas of both indices, when they are created.
    pub replicas: u32,
    /// The checkpoint file.
    pub checkpoint: PathBuf,
    /// How long the engine keeps the point in time (or scroll) between two pages.
    pub keep_alive: String,
    /// Stop after this many batches of this run, leaving the checkpoint (for tests of resumption).
    pub stop_after_batches: Option<usize>,
}

impl MigrationOptions {
    /// Options with the defaults: by host, key in `key`, batches of 1000, urls with 10 shards,
    /// queues with 1, one replica, checkpoint `<urls>.migration-checkpoint.json` in the current
    /// directory.
    pub fn new(source: &str, urls: &str, queues: &str) -> Self {
        MigrationOptions {
            source: source.to_string(),
            urls: urls.to_string(),
            queues: queues.to_string(),
            partition_mode: PartitionMode::ByHost,
            bucket_field: "key".to_string(),
            batch_size: 1000,
            dry_run: false,
            urls_shards: 10,
            queues_shards: 1,
            replicas: 1,
            checkpoint: Self::default_checkpoint(urls),
            keep_alive: "5m".to_string(),
            stop_after_batches: None,
        }
    }

    /// The default checkpoint file for a urls index: `<urls>.migration-checkpoint.json`.
    pub fn default_checkpoint(urls: &str) -> PathBuf {
        PathBuf::from(format!("{urls}.migration-checkpoint.json"))
    }

    fn validate(&self) -> Result<(), MigrateError> {
        let names = [
            ("source", &self.source),
            ("urls", &self.urls),
            ("queues", &self.queues),
        ];
        for (what, name) in names {
            if name.trim().is_empty() {
                return Err(MigrateError::Options(format!(
                    "the {what} index name is empty"
                )));
            }
            if name.contains(['/', '?', '#', ' ', ',', '*']) {
                return Err(MigrateError::Options(format!(
                    "the {what} index name {name:?} is not a single index name"
                )));
            }
        }
        if self.source == self.urls || self.source == self.queues || self.urls == self.queues {
            return Err(MigrateError::Options(format!(
                "source, urls and queues must be three different indices (got {:?}, {:?}, {:?})",
                self.source, self.urls, self.queues
            )));
        }
        if self.batch_size == 0 || self.batch_size > MAX_BATCH_SIZE {
            return Err(MigrateError::Options(format!(
                "batch size {} is not between 1 and {MAX_BATCH_SIZE}",
                self.batch_size
            )));
        }
        if self.urls_shards == 0 || self.queues_shards == 0 {
            return Err(MigrateError::Options(
                "an index needs at least one shard".to_string(),
            ));
        }
        if self.bucket_field.trim().is_empty() || self.bucket_field == "metadata." {
            return Err(MigrateError::Options(format!(
                "bucket field {:?} is not a field name",
                self.bucket_field
            )));
        }
        Ok(())
    }
}

/// What the migration is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Copying documents.
    Copying,
    /// Copy done; refreshing and checking.
    Verifying,
}

/// How far the migration is, reported after every batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// What it is doing.
    pub stage: Stage,
    /// Documents done, over all runs.
    pub documents_done: u64,
    /// Documents in the source when this run began.
    pub documents_total: u64,
    /// Documents done by this run.
    pub documents_this_run: u64,
    /// Batches done by this run.
    pub batches: u64,
    /// Time since this run began.
    pub elapsed: Duration,
}

impl Progress {
    /// Documents per second in this run.
    pub fn docs_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.documents_this_run as f64 / seconds
        } else {
            0.0
        }
    }

    /// The estimated time left, at this run's rate.
    pub fn remaining(&self) -> Option<Duration> {
        let rate = self.docs_per_second();
        let left = self.documents_total.saturating_sub(self.documents_done);
        if left == 0 {
            return Some(Duration::ZERO);
        }
        (rate > 0.0).then(|| Duration::from_secs_f64(left as f64 / rate))
    }
}

/// Where a resumed run started.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResumedFrom {
    /// Documents done by earlier runs.
    pub documents: u64,
    /// Batches done by earlier runs.
    pub batches: u64,
    /// Where reading stood.
    pub position: Position,
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
    /// Batches, over all runs.
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

/// Why a migration failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A request to the engine failed (unreachable, or an error answer).
    #[error(transparent)]
    Engine(#[from] EsError),
    /// The source index does not exist.
    #[error("the source index {index:?} does not exist at {address}")]
    SourceMissing {
        /// The index name.
        index: String,
        /// The engine's address.
        address: String,
    },
    /// The options make no sense.
    #[error("invalid migration options: {0}")]
    Options(String),
    /// The checkpoint file could not be read or written.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The checkpoint file belongs to another migration.
    #[error(
        "checkpoint {path} belongs to another migration ({difference}); delete it or choose another checkpoint file"
    )]
    CheckpointMismatch {
        /// The file.
        path: String,
        /// What differs.
        difference: String,
    },
    /// Bulk operations failed.
    #[error("{failed} of {total} bulk operations on {index} failed; the first: {first}")]
    Bulk {
        /// The index written.
        index: String,
        /// Operations that failed.
        failed: usize,
        /// Operations sent.
        total: usize,
        /// The first failure.
        first: String,
    },
    /// The engine answered something unexpected.
    #[error("unexpected answer from the engine: {0}")]
    Unexpected(String),
}

/// Migrates `options.source` into `options.urls` and `options.queues`; see the module documentation.
pub async fn migrate(
    client: &EsClient,
    options: &MigrationOptions,
) -> Result<MigrationReport, MigrateError> {
    migrate_with_progress(client, options, |_| {}).await
}

/// [`migrate`], calling `progress` after every batch and before the checks.
pub async fn migrate_with_progress(
    client: &EsClient,
    options: &MigrationOptions,
    mut progress: impl FnMut(&Progress),
) -> Result<MigrationReport, MigrateError> {
    options.validate()?;
    let started = Instant::now();
    let key_field = KeyField::parse(&options.bucket_field);
    client.engine().await?;

    let documents_total = match count(client, &options.source, json!({ "match_all": {} })).await {
        Err(MigrateError::Engine(error)) if error.status() == Some(404) => {
            return Err(MigrateError::SourceMissing {
                index: options.source.clone(),
                address: client.addresses(),
            });
        }
        other => other?,
    };
    let without_url = count(
        client,
        &options.source,
        json!({ "bool": { "must_not": { "exists": { "field": "url" } } } }),
    )
    .await?;

    let checkpoint = if options.dry_run {
        None
    } else {
        Checkpoint::load(&options.checkpoint)?
    };
    if let Some(checkpoint) = &checkpoint
        && let Some(difference) = checkpoint.mismatch(
            &options.source,
            &options.urls,
            &options.queues,
            &options.bucket_field,
            options.partition_mode.as_str(),
        )
    {
        return Err(MigrateError::CheckpointMismatch {
            path: options.checkpoint.display().to_string(),
            difference,
        });
    }

    let mut indices_created = Vec::new();
    let mut restore_urls_refresh = checkpoint.as_ref().is_some_and(|c| c.restore_urls_refresh);
    if options.dry_run {
        for index in [&options.urls, &options.queues] {
            if !index_exists(client, index).await? {
                indices_created.push(index.clone());
            }
        }
    } else {
        let urls_body = urls_index_body(options.urls_shards, options.replicas, "-1");
        if create_index(client, &options.urls, urls_body).await? {
            indices_created.push(options.urls.clone());
            restore_urls_refresh = true;
        }
        let queues_body = queues_index_body(
            options.queues_shards,
            options.replicas,
            QUEUES_REFRESH_INTERVAL,
        );
        if create_index(client, &options.queues, queues_body).await? {
            indices_created.push(options.queues.clone());
        }
    }

    let resumed_from = checkpoint.as_ref().map(|c| ResumedFrom {
        documents: c.documents_done,
        batches: c.batches,
        position: c.position.clone(),
        checkpoint_written: c.updated.clone(),
    });
    let (position, documents_before, queues_before, batches_before) = match &checkpoint {
        Some(c) => (
            c.position.clone(),
            c.documents_done,
            c.queues_written,
            c.batches,
        ),
        None => (Position::default(), 0, 0, 0),
    };

    let mut reader = Reader::new(
        client,
        &options.source,
        options.batch_size,
        &options.keep_alive,
        position,
        documents_before,
        without_url,
    );
    let mut writer = Writer {
        client,
        options,
        key_field: key_field.clone(),
        sent: HashMap::new(),
        stats: Stats::default(),
    };
    let mut copy = CopyState {
        documents_done: documents_before,
        documents_this_run: 0,
        batches: batches_before,
        batches_this_run: 0,
        queues_written: queues_before,
    };
    let copied = copy_all(
        &mut reader,
        &mut writer,
        &mut copy,
        options,
        restore_urls_refresh,
        documents_total,
        started,
        &mut progress,
    )
    .await;
    reader.close().await;
    let completed = copied?;

    let mut verification = Verification::default();
    if completed {
        progress(&Progress {
            stage: Stage::Verifying,
            documents_done: copy.documents_done,
            documents_total,
            documents_this_run: copy.documents_this_run,
            batches: copy.batches_this_run,
            elapsed: started.elapsed(),
        });
        if options.dry_run {
            verification.status_counts_source = status_counts(client, &options.source).await?;
            verification.distinct_keys = writer.sent.len() as u64;
            verification.ok = true;
        } else {
            if restore_urls_refresh {
                set_refresh_interval(client, &options.urls, URLS_REFRESH_INTERVAL).await?;
            }
            Checkpoint::remove(&options.checkpoint)?;
            refresh(client, &options.urls).await?;
            refresh(client, &options.queues).await?;
            verification = verify(
                client,
                &options.source,
                &options.urls,
                &options.queues,
                &key_field,
            )
            .await?;
        }
    }

    let seconds = started.elapsed().as_secs_f64();
    Ok(MigrationReport {
        source: options.source.clone(),
        urls: options.urls.clone(),
        queues: options.queues.clone(),
        dry_run: options.dry_run,
        completed,
        documents_total,
        documents: copy.documents_done,
        documents_this_run: copy.documents_this_run,
        keys_added: writer.stats.keys_added,
        documents_without_key: writer.stats.without_key,
        documents_without_next_fetch_date: writer.stats.without_next_fetch,
        unreadable_dates: writer.stats.unreadable_dates,
        distinct_keys_seen: writer.sent.len() as u64,
        queues_written: copy.queues_written,
        queues_created: writer.stats.queues_created,
        batches: copy.batches,
        seconds,
        docs_per_second: if seconds > 0.0 {
            copy.documents_this_run as f64 / seconds
        } else {
            0.0
        },
        resumed_from,
        indices_created,
        verification,
    })
}

struct CopyState {
    documents_done: u64,
    documents_this_run: u64,
    batches: u64,
    batches_this_run: u64,
    queues_written: u64,
}

/// Copies page after page (reading the next page while the current one is written) and writes the
/// checkpoint after each; returns whether everything was copied.
#[allow(clippy::too_many_arguments)]
async fn copy_all(
    reader: &mut Reader<'_>,
    writer: &mut Writer<'_>,
    copy: &mut CopyState,
    options: &MigrationOptions,
    restore_urls_refresh: bool,
    documents_total: u64,
    started: Instant,
    progress: &mut impl FnMut(&Progress),
) -> Result<bool, MigrateError> {
    let mut current = reader.next_page().await?;
    while let Some(page) = current {
        let (written, next) = tokio::join!(writer.write(&page.hits), reader.next_page());
        copy.queues_written += written?;
        copy.documents_done = page.read;
        copy.documents_this_run += page.hits.len() as u64;
        copy.batches += 1;
        copy.batches_this_run += 1;
        if !options.dry_run {
            Checkpoint {
                version: Checkpoint::VERSION,
                source: options.source.clone(),
                urls: options.urls.clone(),
                queues: options.queues.clone(),
                bucket_field: options.bucket_field.clone(),
                partition_mode: options.partition_mode.as_str().to_string(),
                position: page.position.clone(),
                documents_done: copy.documents_done,
                queues_written: copy.queues_written,
                batches: copy.batches,
                restore_urls_refresh,
                updated: format_date(Utc::now()),
            }
            .save(&options.checkpoint)?;
        }
        progress(&Progress {
            stage: Stage::Copying,
            documents_done: copy.documents_done,
            documents_total,
            documents_this_run: copy.documents_this_run,
            batches: copy.batches_this_run,
            elapsed: started.elapsed(),
        });
        if options
            .stop_after_batches
            .is_some_and(|stop| copy.batches_this_run >= stop as u64)
        {
            return Ok(false);
        }
        current = next?;
    }
    Ok(true)
}

#[derive(Debug, Default)]
struct Stats {
    keys_added: u64,
    without_key: u64,
    without_next_fetch: u64,
    unreadable_dates: u64,
    queues_created: u64,
}

struct Writer<'a> {
    client: &'a EsClient,
    options: &'a MigrationOptions,
    key_field: KeyField,
    /// Per key, the earliest `nextDue` this run sent (`None`: the queue was only created).
    sent: HashMap<String, Option<DateTime<Utc>>>,
    stats: Stats,
}

impl Writer<'_> {
    /// Writes one page: the documents into urls, one queue update per key that needs one. Returns
    /// the number of queue updates (sent, or in a dry run, that would be sent).
    async fn write(&mut self, hits: &[Hit]) -> Result<u64, MigrateError> {
        let now = Utc::now();
        let mut url_lines = Vec::with_capacity(hits.len() * 2);
        let mut earliest: HashMap<String, Option<DateTime<Utc>>> = HashMap::new();
        for hit in hits {
            let prepared =
                prepare_document(&hit.source, &self.key_field, self.options.partition_mode);
            match prepared.next_fetch {
                NextFetch::Never => self.stats.without_next_fetch += 1,
                NextFetch::Unreadable => self.stats.unreadable_dates += 1,
                NextFetch::At(_) => {}
            }
            if prepared.key_added {
                self.stats.keys_added += 1;
            }
            match prepared.key {
                Some(key) => {
                    let due = prepared.next_fetch.due();
                    let entry = earliest.entry(key).or_insert(due);
                    *entry = earlier_of(*entry, due);
                }
                None => self.stats.without_key += 1,
            }
            url_lines.push(json!({ "index": { "_index": self.options.urls, "_id": hit.id } }));
            url_lines.push(prepared.document);
        }

        let mut queue_lines = Vec::new();
        let mut updates = 0;
        let mut keys: Vec<(String, Option<DateTime<Utc>>)> = earliest.into_iter().collect();
        keys.sort();
        for (key, due) in keys {
            let known = self.sent.get(&key).copied();
            let needed = match known {
                None => true,
                Some(known) => due.is_some() && earlier_of(known, due) != known,
            };
            if !needed {
                continue;
            }
            let pair = match due {
                Some(due) => lower_next_due(&self.options.queues, &key, due, now),
                None => ensure_queue(&self.options.queues, &key, now),
            };
            queue_lines.extend(pair);
            updates += 1;
            self.sent
                .insert(key, known.map_or(due, |known| earlier_of(known, due)));
        }
        if self.options.dry_run {
            return Ok(updates);
        }
        // Queues first: a queue that is due too early costs a query; one that is missing starves URLs.
        let queues = bulk(self.client, &self.options.queues, queue_lines).await?;
        bulk(self.client, &self.options.urls, url_lines).await?;
        self.stats.queues_created += queues.created;
        Ok(updates)
    }
}

/// The earlier of two due dates, where `None` means never.
fn earlier_of(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (Some(a), None) => Some(a),
        (None, b) => b,
    }
}

#[derive(Debug, Default)]
struct BulkOutcome {
    created: u64,
}

/// Sends bulk pairs (action, document), retrying the items refused with 429; fails on any other
/// item error.
async fn bulk(
    client: &EsClient,
    index: &str,
    lines: Vec<Value>,
) -> Result<BulkOutcome, MigrateError> {
    let mut outcome = BulkOutcome::default();
    let mut pending: Vec<(Value, Value)> = Vec::with_capacity(lines.len() / 2);
    let mut lines = lines.into_iter();
    while let (Some(action), Some(document)) = (lines.next(), lines.next()) {
        pending.push((action, document));
    }
    let total = pending.len();
    let mut wait = Duration::from_millis(500);
    let mut attempt = 0;
    while !pending.is_empty() {
        let body: Vec<Value> = pending
            .iter()
            .flat_map(|(action, document)| [action.clone(), document.clone()])
            .collect();
        let answer = client
            .request(Method::Post, "/_bulk", &[], Some(RequestBody::NdJson(body)))
            .await?;
        let items = answer["items"].as_array().cloned().unwrap_or_default();
        if items.len() != pending.len() {
            return Err(MigrateError::Unexpected(format!(
                "a bulk of {} operations on {index} answered with {} items",
                pending.len(),
                items.len()
            )));
        }
        let mut retry = Vec::new();
        let mut failed = 0;
        let mut first = None;
        for (item, pair) in items.iter().zip(pending) {
            let result = item
                .as_object()
                .and_then(|item| item.values().next())
                .cloned()
                .unwrap_or_default();
            let status = result["status"].as_u64().unwrap_or(0);
            if (200..300).contains(&status) {
                if result["result"] == "created" {
                    outcome.created += 1;
                }
            } else if status == 429 && attempt < BULK_RETRIES {
                retry.push(pair);
            } else {
                failed += 1;
                first.get_or_insert_with(|| {
                    format!(
                        "{}: {} (HTTP {status}, id {})",
                        result["error"]["type"].as_str().unwrap_or("error"),
                        result["error"]["reason"].as_str().unwrap_or(""),
                        result["_id"].as_str().unwrap_or("?")
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

async fn index_exists(client: &EsClient, index: &str) -> Result<bool, MigrateError> {
    match client
        .request(Method::Head, &format!("/{index}"), &[], None)
        .await
    {
        Ok(_) => Ok(true),
        Err(error) if error.status() == Some(404) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

/// Creates an index unless it exists; true when created now.
async fn create_index(client: &EsClient, index: &str, body: Value) -> Result<bool, MigrateError> {
    if index_exists(client, index).await? {
        return Ok(false);
    }
    match client
        .request(
            Method::Put,
            &format!("/{index}"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await
    {
        Ok(_) => Ok(true),
        Err(EsError::Status { reason, .. }) if reason.contains("resource_already_exists") => {
            Ok(false)
        }
        Err(error) => Err(error.into()),
    }
}

async fn set_refresh_interval(
    client: &EsClient,
    index: &str,
    interval: &str,
) -> Result<(), MigrateError> {
    client
        .request(
            Method::Put,
            &format!("/{index}/_settings"),
            &[],
            Some(RequestBody::Json(
                json!({ "index": { "refresh_interval": interval } }),
            )),
        )
        .await?;
    Ok(())
}

async fn refresh(client: &EsClient, index: &str) -> Result<(), MigrateError> {
    client
        .request(Method::Post, &format!("/{index}/_refresh"), &[], None)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let good = MigrationOptions::new("status", "urls", "queues");
        assert!(good.validate().is_ok());
        assert_eq!(
            good.checkpoint,
            PathBuf::from("urls.migration-checkpoint.json")
        );
        let same = MigrationOptions::new("status", "status", "queues");
        assert!(matches!(same.validate(), Err(MigrateError::Options(_))));
        let mut batch = good.clone();
        batch.batch_size = 0;
        assert!(batch.validate().is_err());
        batch.batch_size = MAX_BATCH_SIZE + 1;
        assert!(batch.validate().is_err());
        let pattern = MigrationOptions::new("status*", "urls", "queues");
        assert!(pattern.validate().is_err());
    }

    #[test]
    fn never_is_later_than_any_date() {
        let date = Some(DateTime::<Utc>::UNIX_EPOCH);
        assert_eq!(earlier_of(None, date), date);
        assert_eq!(earlier_of(date, None), date);
        assert_eq!(earlier_of(None, None), None);
    }

    #[test]
    fn progress_estimates_the_time_left() {
        let progress = Progress {
            stage: Stage::Copying,
            documents_done: 300,
            documents_total: 1000,
            documents_this_run: 200,
            batches: 2,
            elapsed: Duration::from_secs(2),
        };
        assert_eq!(progress.docs_per_second(), 100.0);
        assert_eq!(progress.remaining(), Some(Duration::from_secs(7)));
    }
}
