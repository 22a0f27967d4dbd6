//! The checkpoint file: where a migration stopped, so that a new run continues from there.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::MigrateError;

/// Where the reading of one slice of the source stands. The source is read in one slice per
/// shard, each sorted by `_seq_no` (unique within a shard and part of the documents' state, so a new
/// point in time, or a scroll, continues where an old one stopped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlicePosition {
    /// The slice (= the shard of the source it reads).
    pub slice: u32,
    /// The `_seq_no` of the last document written, in `_seq_no` order (`None`: from the start).
    /// Every document of the slice up to it is written.
    pub after: Option<i64>,
    /// Documents of the slice written, over all runs.
    pub documents: u64,
    /// The whole slice is written.
    pub done: bool,
}

/// The settings of a target index as they were before the migration changed them for the copy
/// (refresh off, no replicas), or as they should be when the migration created the index; they
/// are put back at the end, also by a resumed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSettings {
    /// The index.
    pub index: String,
    /// Its `index.refresh_interval` (`None`: not set, the engine's default).
    pub refresh_interval: Option<String>,
    /// Its `index.number_of_replicas`.
    pub replicas: Option<String>,
}

/// What a checkpoint file holds, written before the copy and after every page written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The format version (2).
    pub version: u32,
    /// The source index.
    pub source: String,
    /// The source index's UUID: positions are sequence numbers of that very index.
    pub source_uuid: String,
    /// The urls index.
    pub urls: String,
    /// The queues index.
    pub queues: String,
    /// The bucket field (`key`, `metadata.hostname`).
    pub bucket_field: String,
    /// The partition mode (`byHost`, `byDomain`, `byIP`).
    pub partition_mode: String,
    /// Where each slice stands (one per shard of the source).
    pub slices: Vec<SlicePosition>,
    /// Documents written so far, over all runs (the sum over the slices).
    pub documents_done: u64,
    /// Queue updates sent so far, over all runs.
    pub queues_written: u64,
    /// Pages written so far, over all runs.
    pub batches: u64,
    /// The target indices' settings to put back at the end.
    pub settings: Vec<SavedSettings>,
    /// When it was written.
    pub updated: String,
}

impl Checkpoint {
    /// The current format version (1 was a single reader sorted by URL).
    pub const VERSION: u32 = 2;

    /// Reads a checkpoint; `None` when the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, MigrateError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(checkpoint_error(path, error)),
        };
        let version: Value = serde_json::from_str(&text).map_err(|e| checkpoint_error(path, e))?;
        let version = version["version"].as_u64().unwrap_or(0);
        if version != u64::from(Self::VERSION) {
            return Err(checkpoint_error(
                path,
                format!(
                    "checkpoint version {} is not this program's ({}); delete the file to start \
                     over (writing twice does no harm)",
                    version,
                    Self::VERSION
                ),
            ));
        }
        let checkpoint: Checkpoint =
            serde_json::from_str(&text).map_err(|e| checkpoint_error(path, e))?;
        Ok(Some(checkpoint))
    }

    /// Writes the checkpoint atomically (a temporary file renamed over the old one).
    pub fn save(&self, path: &Path) -> Result<(), MigrateError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| checkpoint_error(path, e))?;
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        std::fs::write(&temporary, text).map_err(|e| checkpoint_error(&temporary, e))?;
        std::fs::rename(&temporary, path).map_err(|e| checkpoint_error(path, e))
    }

    /// Deletes the checkpoint file, if there is one.
    pub fn remove(path: &Path) -> Result<(), MigrateError> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(checkpoint_error(path, error)),
        }
    }

    /// What differs between this checkpoint and a migration of `source` (whose UUID is
    /// `source_uuid`) into `urls` and `queues` with these key settings; `None` when it belongs to
    /// that migration.
    pub fn mismatch(
        &self,
        source: &str,
        source_uuid: &str,
        urls: &str,
        queues: &str,
        bucket_field: &str,
        partition_mode: &str,
    ) -> Option<String> {
        let pairs = [
            ("source", &self.source, source),
            ("source UUID", &self.source_uuid, source_uuid),
            ("urls", &self.urls, urls),
            ("queues", &self.queues, queues),
            ("bucket field", &self.bucket_field, bucket_field),
            ("partition mode", &self.partition_mode, partition_mode),
        ];
        let differences: Vec<String> = pairs
            .iter()
            .filter(|(_, found, wanted)| found.as_str() != *wanted)
            .map(|(what, found, wanted)| format!("{what} {found:?}, not {wanted:?}"))
            .collect();
        (!differences.is_empty()).then(|| differences.join(", "))
    }
}

fn checkpoint_error(path: &Path, error: impl std::fmt::Display) -> MigrateError {
    MigrateError::Checkpoint {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_round_trip_and_are_matched() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("c.json");
        assert_eq!(Checkpoint::load(&path).expect("load"), None);
        let checkpoint = Checkpoint {
            version: Checkpoint::VERSION,
            source: "status".into(),
            source_uuid: "u1".into(),
            urls: "urls".into(),
            queues: "queues".into(),
            bucket_field: "key".into(),
            partition_mode: "byHost".into(),
            slices: vec![SlicePosition {
                slice: 0,
                after: Some(12),
                documents: 10,
                done: false,
            }],
            documents_done: 10,
            queues_written: 2,
            batches: 1,
            settings: vec![SavedSettings {
                index: "urls".into(),
                refresh_interval: Some("5s".into()),
                replicas: Some("1".into()),
            }],
            updated: "2024-01-01T00:00:00.000Z".into(),
        };
        checkpoint.save(&path).expect("save");
        assert_eq!(
            Checkpoint::load(&path).expect("load"),
            Some(checkpoint.clone())
        );
        assert_eq!(
            checkpoint.mismatch("status", "u1", "urls", "queues", "key", "byHost"),
            None
        );
        let other = checkpoint
            .mismatch("other", "u1", "urls", "queues", "key", "byHost")
            .expect("a mismatch");
        assert!(other.contains("other"), "{other}");
        Checkpoint::remove(&path).expect("remove");
        Checkpoint::remove(&path).expect("remove twice");
        std::fs::write(&path, "{").expect("write");
        assert!(Checkpoint::load(&path).is_err());
        std::fs::write(&path, r#"{"version": 1, "position": {}}"#).expect("write");
        let old = Checkpoint::load(&path).expect_err("an old checkpoint");
        assert!(old.to_string().contains("version 1"), "{old}");
    }
}
