//! Which frontier a crawl uses and how much one query reads: the `frontier.*` keys, read straight
//! from the configuration (each field names its key, and `Default` holds each key's default).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::QueryLimits;
use crate::settings::{KeyedSettings, keyed_settings};

/// Where the frontier lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrontierKind {
    /// A directory on local disk: [`EmbeddedFrontier`](super::EmbeddedFrontier).
    #[default]
    Embedded,
    /// An Elasticsearch or OpenSearch cluster (the `squall-engine` crate).
    Opensearch,
    /// A URLFrontier server, over gRPC (the `squall-urlfrontier` crate's client).
    Urlfrontier,
}

keyed_settings! {
    /// Which frontier, and how much one query reads: the `frontier.*` keys.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FrontierSettings {
        /// `frontier.kind`: `embedded` (a directory on local disk, the default), `opensearch` (an
        /// Elasticsearch or OpenSearch cluster, configured by the `es.*` keys that `squall-engine`
        /// reads) or `urlfrontier` (a URLFrontier server, configured by the `urlfrontier.*` keys
        /// that `squall-urlfrontier` reads).
        "frontier.kind" => kind: FrontierKind = FrontierKind::Embedded,
        /// `frontier.path`: the embedded frontier's directory.
        "frontier.path" => path: PathBuf = PathBuf::from("squall-frontier"),
        /// `frontier.max.buckets`: queues (hosts) read per frontier query.
        "frontier.max.buckets" => max_buckets: usize = 1000,
        /// `frontier.max.urls.per.bucket`: due URLs read per queue per frontier query.
        "frontier.max.urls.per.bucket" => max_urls_per_bucket: usize = 2,
        /// `frontier.check.on.open`: check every page of the embedded frontier's file when it is
        /// opened (0.4 to 0.7 s for a million URLs), so that a damaged file is an error at once,
        /// not a failure in the middle of a crawl.
        "frontier.check.on.open" => check_on_open: bool = true,
    }
}

impl FrontierSettings {
    /// How the embedded frontier's file is opened.
    pub fn embedded_options(&self) -> super::EmbeddedOptions {
        super::EmbeddedOptions {
            check_integrity: self.check_on_open,
        }
    }

    /// The limits of one query, set by `frontier.max.buckets` and `frontier.max.urls.per.bucket`.
    pub fn query_limits(&self) -> QueryLimits {
        QueryLimits {
            max_buckets: self.max_buckets,
            max_urls_per_bucket: self.max_urls_per_bucket,
        }
    }
}

impl KeyedSettings for FrontierSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        let counts = [
            ("frontier.max.buckets", self.max_buckets),
            ("frontier.max.urls.per.bucket", self.max_urls_per_bucket),
        ];
        match counts.into_iter().find(|(_, value)| *value == 0) {
            Some((key, _)) => Err((key, "must be at least 1".to_string())),
            None => Ok(()),
        }
    }
}
