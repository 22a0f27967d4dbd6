//! Where and how WARC files are written: the `warc.*` keys, read straight from the configuration
//! (each field names its key, and `Default` holds each key's default).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::settings::KeyedSettings;

/// Settings of the WARC writer: the `warc.*` keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WarcSettings {
    /// `warc.enabled`: archive every HTTP exchange as WARC/1.1 request and response records (the
    /// crawler starts a writer only then).
    #[serde(rename = "warc.enabled")]
    pub enabled: bool,
    /// `warc.dir`: the directory the files go to (created if missing).
    #[serde(rename = "warc.dir")]
    pub dir: PathBuf,
    /// `warc.prefix`: the start of every file name, `<prefix>-<timestamp>-<serial>.warc.gz`.
    #[serde(rename = "warc.prefix")]
    pub prefix: String,
    /// `warc.max.file.size`: a file is closed once it holds this many bytes, and the next exchange
    /// opens a new one.
    #[serde(rename = "warc.max.file.size")]
    pub max_file_size: u64,
    /// `warc.request.records`: write a request record before each response record.
    #[serde(rename = "warc.request.records")]
    pub request_records: bool,
    /// Exchanges waiting for the writer before fetches wait for it (not a key).
    #[serde(skip)]
    pub queue_size: usize,
    /// The fields of the `warcinfo` record that opens each file (`software`, `format`, ...; not a
    /// key).
    #[serde(skip)]
    pub info: Vec<(String, String)>,
}

impl Default for WarcSettings {
    fn default() -> Self {
        WarcSettings {
            enabled: false,
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
