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

mod admin;
mod bulk;
mod checkpoint;
mod copy;
mod document;
mod error;
mod options;
mod progress;
mod reader;
mod report;
mod run;
mod verify;
mod writer;

pub use admin::{QUEUES_REFRESH_INTERVAL, URLS_REFRESH_INTERVAL};
pub use checkpoint::{Checkpoint, Position};
pub use document::{
    NextFetch, PreparedDocument, ensure_queue, existing_key, parse_date, prepare_document,
};
pub use error::MigrateError;
pub use options::{MAX_BATCH_SIZE, MigrationOptions};
pub use progress::{Progress, Stage};
pub use report::{MigrationReport, ResumedFrom};
pub use run::{migrate, migrate_with_progress};
pub use verify::{
    InvariantViolation, MAX_LISTED, NO_STATUS, Verification, count, key_minimums, status_counts,
    verify,
};
