//! The checkpoint file: where a migration stopped, so that a new run continues from there.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::MigrateError;

/// Where the reading of the source stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Position {
    /// Reading the documents that have a `url`, sorted by `url` (then `_seq_no`), after these sort
    /// values (`None`: from the start).
    Sorted {
        /// The sort values of the last document written.
        search_after: Option<Vec<Value>>,
    },
    /// Reading the (rare) documents without a `url` with a scroll; a resumed run reads them all again
    /// (writing twice does no harm), counting from `documents_before`.
    WithoutUrl {
        /// Documents done before this phase began.
        documents_before: u64,
    },
}

impl Default for Position {
    fn default() -> Self {
        Position::Sorted { search_after: None }
    }
}

/// What a checkpoint file holds, written after every batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The format version (1).
    pub version: u32,
    /// The source index.
    pub source: String,
    /// The urls index.
    pub urls: String,
    /// The queues index.
    pub queues: String,
    /// The bucket field (`key`, `metadata.hostname`).
    pub bucket_field: String,
    /// The partition mode (`byHost`, `byDomain`, `byIP`).
    pub partition_mode: String,
    /// Where reading stands.
    pub position: Position,
    /// Documents written so far, over all runs.
    pub documents_done: u64,
    /// Queue updates sent so far, over all runs.
    pub queues_written: u64,
    /// Batches written so far, over all runs.
    pub batches: u64,
    /// Whether this migration created the urls index (with refresh off), so that the refresh
    /// interval is restored at the end.
    pub restore_urls_refresh: bool,
    /// When it was written.
    pub updated: String,
}

impl Checkpoint {
    /// The current format version.
    pub const VERSION: u32 = 1;

    /// Reads a checkpoint; `None` when the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, MigrateError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(checkpoint_error(path, error)),
        };
        let checkpoint: Checkpoint =
            serde_json::from_str(&text).map_err(|e| checkpoint_error(path, e))?;
        if checkpoint.version != Self::VERSION {
            return Err(checkpoint_error(
                path,
                format!("unknown checkpoint version {}", checkpoint.version),
            ));
        }
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

    /// What differs between this checkpoint and a migration of `source` into `urls` and `queues`
    /// with these key settings; `None` when it belongs to that migration.
    pub fn mismatch(
        &self,
        source: &str,
        urls: &str,
        queues: &str,
        bucket_field: &str,
        partition_mode: &str,
    ) -> Option<String> {
        let pairs = [
            ("source", &self.source, source),
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
            urls: "urls".into(),
            queues: "queues".into(),
            bucket_field: "key".into(),
            partition_mode: "byHost".into(),
            position: Position::Sorted {
                search_after: Some(vec![
                    serde_json::json!("http://a.test/"),
                    serde_json::json!(3),
                ]),
            },
            documents_done: 10,
            queues_written: 2,
            batches: 1,
            restore_urls_refresh: true,
            updated: "2024-01-01T00:00:00.000Z".into(),
        };
        checkpoint.save(&path).expect("save");
        assert_eq!(
            Checkpoint::load(&path).expect("load"),
            Some(checkpoint.clone())
        );
        assert_eq!(
            checkpoint.mismatch("status", "urls", "queues", "key", "byHost"),
            None
        );
        let other = checkpoint
            .mismatch("other", "urls", "queues", "key", "byHost")
            .expect("a mismatch");
        assert!(other.contains("other"), "{other}");
        Checkpoint::remove(&path).expect("remove");
        Checkpoint::remove(&path).expect("remove twice");
        std::fs::write(&path, "{").expect("write");
        assert!(Checkpoint::load(&path).is_err());
    }
}
