//! Crawl configuration: StormCrawler-style keys read from YAML, overridden key by key, checked
//! before anything starts, and handed to each stage as its own typed section.
//!
//! Keys are flat and dotted, as in StormCrawler's `crawler-conf.yaml`; in the typed configuration,
//! durations are [`Duration`]s and "no limit" or "never" is `None`:
//!
//! ```
//! use std::time::Duration;
//!
//! let config = squall::config::CrawlConfig::from_yaml_str(
//!     "http.agent.name: my-crawler\nfetcher.server.delay: 2.5\nmax.depth: -1\n",
//! )?;
//! assert_eq!(config.fetcher.server_delay, Duration::from_millis(2500));
//! assert_eq!(config.filters.max_depth, None);
//! # Ok::<(), squall::config::ConfigError>(())
//! ```
//!
//! A key that does not exist is an error that names it (and suggests the closest known key), so a
//! typo never silently falls back to a default. StormCrawler's own files load as they are: its keys
//! that squall does not implement (and Apache Storm's `topology.*` settings) are set aside and named
//! in one warning ([`CrawlConfig::ignored_keys`]). Keys under `es.` and `opensearch.` belong to the
//! Elasticsearch/OpenSearch frontier, keys under `browser.` to the headless-browser protocol, and
//! keys under `urlfrontier.` to the URLFrontier client: they are kept as written
//! ([`CrawlConfig::extension`]) and checked by the crate that reads them, `squall-engine`,
//! `squall-browser` and `squall-urlfrontier`.

mod builder;
mod error;
mod example;
pub mod flux;
mod http_access;
mod keys;
mod sections;
mod stage_settings;
mod stormcrawler;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use builder::{ConfigBuilder, ExtensionKeys, known_keys};
pub use error::ConfigError;
pub use example::check_example;
pub use http_access::Secret;
pub use keys::{ConfigKeys, field_names, listed_keys};
pub use sections::{
    FrontierConfig, FrontierKind, HttpConfig, MetadataConfig, ParserConfig, ProtocolConfig,
    ScheduleConfig, SpoutConfig, StatusConfig, TopologyConfig,
};
pub use stormcrawler::ignored_reason;

pub use crate::index::IndexerKind;

use crate::fetch::FetcherSettings;
use crate::filter::FilterSettings;
use crate::index::IndexerSettings;
use crate::model::PartitionMode;
use crate::protocol::{AgentSettings, RobotsSettings};
use crate::schedule::DefaultScheduler;
use crate::warc::WarcSettings;

/// Key prefixes read by other crates (`es.` and `opensearch.`: the Elasticsearch/OpenSearch
/// frontier; `browser.`: the headless-browser protocol; `urlfrontier.`: a URLFrontier server as
/// the frontier), not by this one.
pub const EXTENSION_PREFIXES: &[&str] = &["es.", "opensearch.", "browser.", "urlfrontier."];

/// Everything a crawl is configured with, one typed section per stage. Build it with
/// [`ConfigBuilder`] (or [`CrawlConfig::from_yaml_str`]); every section's field docs name the key.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlConfig {
    /// Who the crawler says it is.
    pub agent: AgentSettings,
    /// The HTTP protocol.
    pub http: HttpConfig,
    /// robots.txt.
    pub robots: RobotsSettings,
    /// The fetcher's politeness and capacity.
    pub fetcher: FetcherSettings,
    /// Which protocol fetches which scheme.
    pub protocols: ProtocolConfig,
    /// `partition.url.mode`: how URLs are grouped into queues (host, domain or IP).
    pub partition: PartitionMode,
    /// Which links are kept.
    pub filters: FilterSettings,
    /// The parser.
    pub parser: ParserConfig,
    /// The content indexer.
    pub indexer: IndexerSettings,
    /// Metadata carried and kept.
    pub metadata: MetadataConfig,
    /// When URLs are due again.
    pub schedule: ScheduleConfig,
    /// The status updater.
    pub status: StatusConfig,
    /// The spout runner.
    pub spout: SpoutConfig,
    /// The topology as a whole.
    pub topology: TopologyConfig,
    /// Which frontier, and how much one query reads.
    pub frontier: FrontierConfig,
    /// Keys for other crates (see [`EXTENSION_PREFIXES`]).
    pub extensions: ExtensionKeys,
    /// StormCrawler's and Storm's keys that the configuration set and squall does not implement
    /// (so a StormCrawler user's files load as they are), sorted; see [`ignored_reason`] for why
    /// each is left out. The crawler names them in one warning when it starts.
    pub ignored_keys: Vec<String>,
    /// The directories of the config files read ([`ConfigBuilder::yaml_file`]), in the order
    /// read: files the configuration names by a relative path (StormCrawler's filter files) are
    /// also looked for there.
    pub config_dirs: Vec<PathBuf>,
    /// WARC output.
    pub warc: WarcSettings,
}

impl CrawlConfig {
    /// Reads a YAML file (flat keys, optionally under a top-level `config:` as in Flux files).
    pub fn from_yaml_file(path: &Path) -> Result<Self, ConfigError> {
        ConfigBuilder::new().yaml_file(path)?.build()
    }

    /// Reads YAML text.
    pub fn from_yaml_str(text: &str) -> Result<Self, ConfigError> {
        ConfigBuilder::new().yaml_str(text)?.build()
    }

    /// Checks values that parse but make no sense: a missing agent name, a count of zero, no
    /// scheme to crawl, a zero timeout, queries paced faster than 10 ms, invalid custom intervals.
    /// Run on every configuration read from keys, and again by the builder (a program may change
    /// fields in between).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| {
            Err(ConfigError::InvalidValue {
                key: key.to_string(),
                message: message.to_string(),
            })
        };
        // The sections that read their own keys check themselves.
        if let Err((key, message)) = self.check_keyed_stages() {
            return invalid(key, &message);
        }
        if self.http.timeout.is_zero() {
            return invalid("http.timeout", "must be more than 0");
        }
        if self.http.connect_timeout.is_zero() {
            return invalid("http.connect.timeout", "must be more than 0");
        }
        if self.spout.min_delay_queries < Duration::from_millis(10) {
            return invalid(
                "spout.min.delay.queries",
                "must be at least 10 (milliseconds)",
            );
        }
        let counts = [
            ("topology.max.spout.pending", self.spout.max_pending),
            ("spout.parallelism", self.spout.parallelism),
            ("status.updater.batch.size", self.status.batch_size),
            ("frontier.max.buckets", self.frontier.max_buckets),
            (
                "frontier.max.urls.per.bucket",
                self.frontier.max_urls_per_bucket,
            ),
        ];
        if let Some((key, _)) = counts.iter().find(|(_, value)| *value == 0) {
            return invalid(key, "must be at least 1");
        }
        self.scheduler().map(|_| ())
    }

    /// The scheduler the `fetchInterval.*` keys describe.
    pub fn scheduler(&self) -> Result<DefaultScheduler, ConfigError> {
        let schedule = &self.schedule;
        let mut scheduler = DefaultScheduler::new(
            minutes(schedule.default),
            minutes(schedule.fetch_error),
            minutes(schedule.error),
        );
        for (key, interval) in &schedule.custom {
            scheduler = scheduler
                .with_custom(key, minutes(*interval))
                .map_err(|e| ConfigError::InvalidValue {
                    key: key.clone(),
                    message: e.to_string(),
                })?;
        }
        Ok(scheduler)
    }

    /// Reads the extension keys that start with one of `prefixes` into `T`, a struct whose serde
    /// field names are the keys with the prefix left out (the first prefix is the canonical one; a
    /// key under another prefix is read as if written under the first). A key under the prefixes
    /// that `T` does not know is an error with a did-you-mean, as for the core keys.
    pub fn extension<T>(&self, prefixes: &[&str]) -> Result<T, ConfigError>
    where
        T: serde::de::DeserializeOwned + serde::Serialize + Default,
    {
        self.extensions.section(prefixes, &[])
    }

    /// Like [`extension`](Self::extension), leaving out the keys under `prefixes` that go on with
    /// one of `others` (read by another section: `es.indexer.` for the content indexer beside the
    /// frontier's `es.`).
    pub fn extension_except<T>(&self, prefixes: &[&str], others: &[&str]) -> Result<T, ConfigError>
    where
        T: serde::de::DeserializeOwned + serde::Serialize + Default,
    {
        self.extensions.section(prefixes, others)
    }
}

/// A duration in StormCrawler's whole minutes (a part of a minute counts as one), `-1` for never.
fn minutes(interval: Option<Duration>) -> i64 {
    interval.map_or(-1, |d| {
        let seconds = d.as_secs() + u64::from(d.subsec_nanos() > 0);
        i64::try_from(seconds.div_ceil(60)).unwrap_or(i64::MAX)
    })
}

#[cfg(test)]
mod tests;
