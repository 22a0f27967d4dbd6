//! `indexer.kind: file`: content documents as JSON lines in a local file, synced to disk before
//! their URLs are acked.
//!
//! Each line is `{"id": "<sha-256 of url>", "url": "...", "document": {fields}}`. The file is
//! appended to; a page fetched again is written again. A batch whose write fails may have left some
//! of its lines: its URLs fail and are written again when they are fetched again, so a line may
//! appear twice but an acked page is always there.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::{ContentDocument, ContentStore, IndexError};

/// The content file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("indexer.file: cannot open {path} for appending: {source}")]
pub struct OpenFileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// A [`ContentStore`] appending JSON lines to a file.
#[derive(Debug, Clone)]
pub struct JsonLinesStore {
    path: PathBuf,
    file: Arc<Mutex<File>>,
}

impl JsonLinesStore {
    /// Opens `path` for appending, creating it (and its directory) when missing.
    pub fn open(path: &Path) -> Result<Self, OpenFileError> {
        let failed = |source| OpenFileError {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(failed)?;
        Ok(JsonLinesStore {
            path: path.to_path_buf(),
            file: Arc::new(Mutex::new(file)),
        })
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the lines of `documents`, then syncs the file's data to disk.
    fn append(&self, documents: &[ContentDocument]) -> std::io::Result<()> {
        let mut text = Vec::with_capacity(documents.len() * 1024);
        for document in documents {
            let line =
                json!({ "id": document.id, "url": document.url, "document": document.fields });
            serde_json::to_writer(&mut text, &line)?;
            text.push(b'\n');
        }
        let mut file = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("an earlier write panicked"))?;
        file.write_all(&text)?;
        file.flush()?;
        file.sync_data()
    }
}

#[async_trait::async_trait]
impl ContentStore for JsonLinesStore {
    async fn store(&self, documents: Vec<ContentDocument>) -> Vec<Result<(), IndexError>> {
        let count = documents.len();
        let store = self.clone();
        let written = tokio::task::spawn_blocking(move || store.append(&documents)).await;
        let outcome = match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(IndexError::unavailable(format!(
                "writing {}: {error}",
                self.path.display()
            ))),
            Err(error) => Err(IndexError::unavailable(format!(
                "writing {}: {error}",
                self.path.display()
            ))),
        };
        vec![outcome; count]
    }
}
