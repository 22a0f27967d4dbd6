//! Which frontier a crawl uses and how much one query reads: the `frontier.*` keys, read straight
//! from the configuration (each field names its key, and `Default` holds each key's default).

use std::path::PathBuf;

use super::QueryLimits;
use crate::settings::{KeyedSettings, at_least_one, keyed_settings};

/// The name of the embedded frontier's kind in `frontier.kind`, the default: a directory on
/// local disk, [`EmbeddedFrontier`](super::EmbeddedFrontier).
pub const EMBEDDED: &str = "embedded";

keyed_settings! {
    /// Which frontier, and how much one query reads: the `frontier.*` keys.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FrontierSettings {
        /// `frontier.kind`: the name of a frontier kind registered in
        /// [`Frontiers`](crate::config::Frontiers): `embedded` (a directory on local disk, the
        /// default), or one another crate registers (its own keys beside it).
        "frontier.kind" => kind: String = EMBEDDED.to_string(),
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

/// The limits the keys default to (`frontier.max.buckets`, `frontier.max.urls.per.bucket`): one
/// default a key, the one the configuration runs with.
impl Default for QueryLimits {
    fn default() -> Self {
        FrontierSettings::default().query_limits()
    }
}

/// The options the keys default to (`frontier.check.on.open`).
impl Default for super::EmbeddedOptions {
    fn default() -> Self {
        FrontierSettings::default().embedded_options()
    }
}

impl KeyedSettings for FrontierSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.kind.trim().is_empty() {
            return Err(("frontier.kind", "must name a frontier kind".to_string()));
        }
        at_least_one(&[
            ("frontier.max.buckets", self.max_buckets),
            ("frontier.max.urls.per.bucket", self.max_urls_per_bucket),
        ])
    }
}
