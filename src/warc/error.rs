//! What can go wrong when writing WARC files.

use std::path::PathBuf;

/// Why WARC records could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    /// The output directory could not be created.
    #[error("cannot create the WARC directory {path}: {source}")]
    CreateDir {
        /// The directory (`warc.dir`).
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// A new WARC file could not be created.
    #[error("cannot create the WARC file {path}: {source}")]
    CreateFile {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// Records could not be appended to a WARC file (the file is cut back to its last complete
    /// record and closed; the next exchange opens a new one).
    #[error("cannot write to the WARC file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// A finished WARC file could not be synced or renamed to its final name.
    #[error("cannot close the WARC file {path}: {source}")]
    Close {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The writer is no longer running (it finished, or its thread died).
    #[error("the WARC writer has stopped")]
    Stopped,
    /// The settings make no sense.
    #[error("invalid WARC settings: {0}")]
    Settings(String),
}
