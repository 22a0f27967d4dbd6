//! Where and how WARC files are written.

use std::path::PathBuf;

/// Settings of the WARC writer (the `warc.*` keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcSettings {
    /// The directory the files go to (created if missing).
    pub dir: PathBuf,
    /// The start of every file name: `<prefix>-<timestamp>-<serial>.warc.gz`.
    pub prefix: String,
    /// A file is closed once it holds this many bytes, and the next exchange opens a new one.
    pub max_file_size: u64,
    /// Write a `request` record before each `response` record.
    pub request_records: bool,
    /// Exchanges waiting for the writer before fetches wait for it.
    pub queue_size: usize,
    /// The fields of the `warcinfo` record that opens each file (`software`, `format`, ... ).
    pub info: Vec<(String, String)>,
}

impl Default for WarcSettings {
    fn default() -> Self {
        WarcSettings {
            dir: PathBuf::from("warc"),
            prefix: "squall".to_string(),
            max_file_size: 1024 * 1024 * 1024,
            request_records: true,
            queue_size: 64,
            info: vec![(
                "software".to_string(),
                format!("squall/{}", env!("CARGO_PKG_VERSION")),
            )],
        }
    }
}
