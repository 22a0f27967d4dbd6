//! What to migrate, and how: [`MigrationOptions`], checked before anything is read or written.

use std::path::PathBuf;

use squall::model::PartitionMode;

use super::MigrateError;
use crate::status_index::schema::URLS_INDEX_SHARDS;

/// The largest batch: the engines' default `index.max_result_window`.
pub const MAX_BATCH_SIZE: usize = 10_000;

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
    /// Documents per page read (1 to [`MAX_BATCH_SIZE`]); a page is written in bulks of at most
    /// [`bulk_bytes`](Self::bulk_bytes).
    pub batch_size: usize,
    /// The source is read in one slice per shard; at most this many are read at the same time.
    pub max_slices: usize,
    /// Bulk requests in flight at once (pages written at the same time).
    pub bulk_concurrency: usize,
    /// The largest body of one bulk request to the urls index, in bytes (a page larger than this
    /// is sent in several bulks; one document larger than this goes alone).
    pub bulk_bytes: usize,
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
    /// Read with a point in time (true, the default) or with sliced scrolls (false; also what is
    /// used when the engine has no point in time).
    pub point_in_time: bool,
    /// How long the engine keeps the point in time (or scroll) between two pages.
    pub keep_alive: String,
    /// Stop after this many batches of this run, leaving the checkpoint (for tests of resumption).
    pub stop_after_batches: Option<usize>,
}

impl MigrationOptions {
    /// Options with the defaults: by host, key in `key`, pages of 1000, at most 8 slices read and
    /// 4 bulks sent at once, bulks of at most 8 MiB, urls with 10 shards, queues with 1, one
    /// replica, checkpoint `<urls>.migration-checkpoint.json` in the current directory.
    pub fn new(source: &str, urls: &str, queues: &str) -> Self {
        MigrationOptions {
            source: source.to_string(),
            urls: urls.to_string(),
            queues: queues.to_string(),
            partition_mode: PartitionMode::ByHost,
            bucket_field: "key".to_string(),
            batch_size: 1000,
            max_slices: 8,
            bulk_concurrency: 4,
            bulk_bytes: 8 << 20,
            dry_run: false,
            urls_shards: URLS_INDEX_SHARDS,
            queues_shards: 1,
            replicas: 1,
            checkpoint: Self::default_checkpoint(urls),
            point_in_time: true,
            keep_alive: "5m".to_string(),
            stop_after_batches: None,
        }
    }

    /// The default checkpoint file for a urls index: `<urls>.migration-checkpoint.json`.
    pub fn default_checkpoint(urls: &str) -> PathBuf {
        PathBuf::from(format!("{urls}.migration-checkpoint.json"))
    }

    /// Checks the options: three distinct single index names, a batch size within bounds, shards,
    /// a bucket field.
    pub(crate) fn validate(&self) -> Result<(), MigrateError> {
        let names = [
            ("source", &self.source),
            ("urls", &self.urls),
            ("queues", &self.queues),
        ];
        for (what, name) in names {
            refuse_if(name.trim().is_empty(), || {
                format!("the {what} index name is empty")
            })?;
            refuse_if(name.contains(['/', '?', '#', ' ', ',', '*']), || {
                format!("the {what} index name {name:?} is not a single index name")
            })?;
        }
        let (source, urls, queues) = (&self.source, &self.urls, &self.queues);
        refuse_if(source == urls || source == queues || urls == queues, || {
            format!(
                "source, urls and queues must be three different indices (got {source:?}, {urls:?}, {queues:?})"
            )
        })?;
        let batch_size = self.batch_size;
        refuse_if(batch_size == 0 || batch_size > MAX_BATCH_SIZE, || {
            format!("batch size {batch_size} is not between 1 and {MAX_BATCH_SIZE}")
        })?;
        refuse_if(self.max_slices == 0 || self.bulk_concurrency == 0, || {
            "at least one slice and one bulk at a time are needed".to_string()
        })?;
        refuse_if(self.bulk_bytes < 1024, || {
            format!("bulk size {} bytes is below 1024", self.bulk_bytes)
        })?;
        refuse_if(self.urls_shards == 0 || self.queues_shards == 0, || {
            "an index needs at least one shard".to_string()
        })?;
        let bucket_field = &self.bucket_field;
        refuse_if(
            bucket_field.trim().is_empty() || bucket_field == "metadata.",
            || format!("bucket field {bucket_field:?} is not a field name"),
        )
    }
}

/// An options error saying `message` when `refused`.
fn refuse_if(refused: bool, message: impl FnOnce() -> String) -> Result<(), MigrateError> {
    if refused {
        Err(MigrateError::Options(message()))
    } else {
        Ok(())
    }
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
        let mut parallel = good.clone();
        parallel.bulk_concurrency = 0;
        assert!(parallel.validate().is_err());
        parallel.bulk_concurrency = 1;
        parallel.bulk_bytes = 10;
        assert!(parallel.validate().is_err());
        let pattern = MigrationOptions::new("status*", "urls", "queues");
        assert!(pattern.validate().is_err());
    }
}
