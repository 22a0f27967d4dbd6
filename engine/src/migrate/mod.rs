//! Migration of a status index (StormCrawler's, or squall's own) into the two indices of the queue
//! frontier: **urls** (the same documents, same ids, no routing) and **queues** (one document per
//! key, `nextDue` = the earliest `nextFetchDate` of its URLs).
//!
//! [`migrate`] reads the source in one slice per shard (at most
//! [`max_slices`](MigrationOptions::max_slices) at once), each with a point in time and
//! `search_after` sorted by `_seq_no` (sliced scrolls where the engine has no point in time). Pages
//! go through a bounded channel to [`bulk_concurrency`](MigrationOptions::bulk_concurrency) writers,
//! so reading and writing overlap. Every document goes unchanged into urls (its source is copied as
//! the bytes read; the key is added into the bucket field when the source has none, computed from
//! the URL with the partition mode), in bulks of at most
//! [`bulk_bytes`](MigrationOptions::bulk_bytes), and each key's queue `nextDue` is lowered with a
//! scripted upsert (a minimum, so writing twice does no harm) in the same pass: one update per key
//! per page, and none when this run already sent an earlier or equal date. During the copy both
//! targets have refresh off and no replicas; their settings are put back afterwards (also after a
//! failure, and by a resumed run). The source is only read.
//!
//! A [`Checkpoint`] records, per slice, the `_seq_no` up to which every document is written (pages
//! of a slice may finish out of order; the position only moves over pages all written); a new run
//! with the same source, urls and queues continues every slice from there. At the end the indices
//! are refreshed and [`verify`] checks the counts per status, one queue per distinct key, and the
//! invariant (`nextDue` <= the earliest `nextFetchDate` of the key's URLs).
//!
//! A status index migrated, on the node at `OPENSEARCH_URL` (the project's test node by default);
//! the three indices are removed at the end here:
//!
//! ```
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use squall_engine::client::{ConnectionConfig, EsClient, Method};
//! use squall_engine::migrate::{MigrationOptions, migrate};
//! use squall_engine::status_index::index::{StatusIndexConfig, ensure_status_index};
//!
//! let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
//! let client = EsClient::new(ConnectionConfig::new(&url)?)?;
//! let name = format!("example-migrate-{}", std::process::id());
//! let [status, urls, queues] = ["status", "urls", "queues"].map(|part| format!("{name}-{part}"));
//! let layout = StatusIndexConfig { name: status.clone(), replicas: 0, ..Default::default() };
//! ensure_status_index(&client, &layout).await?;
//! let report = migrate(&client, &MigrationOptions::new(&status, &urls, &queues)).await?;
//! assert!(report.verification.ok, "{:?}", report.verification.problems());
//! client.request(Method::Delete, &format!("{status},{urls},{queues}"), &[], None).await?;
//! # Ok(()) }
//! ```

mod admin;
mod bulk;
mod checkpoint;
mod copy;
mod document;
mod error;
mod options;
mod pipeline;
mod progress;
mod reader;
mod report;
mod run;
mod verify;
mod writer;

pub use admin::{QUEUES_REFRESH_INTERVAL, URLS_REFRESH_INTERVAL};
pub use checkpoint::{Checkpoint, SavedSettings, SlicePosition};
pub use document::{NextFetch, PreparedDocument, existing_key, parse_date, prepare_document};
pub use error::MigrateError;
pub use options::{MAX_BATCH_SIZE, MigrationOptions};
pub use progress::{MigrationProgress, MigrationStage};
pub use report::{MigrationReport, ResumedFrom};
pub use run::{migrate, migrate_with_progress};
pub use verify::{
    InvariantViolation, MAX_LISTED, NO_STATUS, Verification, count, key_minimums, status_counts,
    verify,
};
