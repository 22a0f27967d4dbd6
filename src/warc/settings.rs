//! Where and how WARC files are written: the `warc.*` keys, read straight from the configuration
//! (each field names its key, and `Default` holds each key's default).

use std::path::PathBuf;

use crate::settings::{KeyedSettings, keyed_settings};

keyed_settings! {
    /// Settings of the WARC writer: the `warc.*` keys.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct WarcSettings {
        /// `warc.enabled`: archive every HTTP exchange as WARC/1.1 request and response records
        /// (the crawler starts a writer only then).
        "warc.enabled" => enabled: bool = false,
        /// `warc.dir`: the directory the files go to (created if missing).
        "warc.dir" => dir: PathBuf = PathBuf::from("warc"),
        /// `warc.prefix`: the start of every file name, `<prefix>-<timestamp>-<serial>.warc.gz`.
        "warc.prefix" => prefix: String = "squall".to_string(),
        /// `warc.max.file.size`: a file is closed once it holds this many bytes, and the next
        /// exchange opens a new one.
        "warc.max.file.size" => max_file_size: u64 = 1024 * 1024 * 1024,
        /// `warc.request.records`: write a request record before each response record.
        "warc.request.records" => request_records: bool = true,
        derived {
            /// Exchanges waiting for the writer before fetches wait for it (not a key).
            queue_size: usize = 64,
            /// The fields of the `warcinfo` record that opens each file (`software`, `format`, ...;
            /// not a key).
            info: Vec<(String, String)> =
                vec![("software".to_string(), format!("squall/{}", env!("CARGO_PKG_VERSION")))],
        }
    }
}

impl KeyedSettings for WarcSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        if !self.enabled {
            return Ok(());
        }
        if self.max_file_size == 0 {
            return Err((
                "warc.max.file.size",
                "must be more than 0 bytes".to_string(),
            ));
        }
        if self.prefix.is_empty() || self.prefix.contains(['/', '\\']) {
            return Err((
                "warc.prefix",
                "must be a file name start: not empty, no `/`".to_string(),
            ));
        }
        Ok(())
    }
}
