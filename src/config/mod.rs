//! Crawl configuration: StormCrawler-style keys read from YAML, overridden key by key, checked
//! before anything starts, and handed to each stage as its own typed section.
//!
//! Keys are flat and dotted, as in StormCrawler's `crawler-conf.yaml`; in the typed configuration,
//! durations are [`Duration`](std::time::Duration)s and "no limit" or "never" is `None`:
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
//! in one warning ([`CrawlConfig::ignored_keys`]). Keys other crates read (a frontier kind's, under
//! the prefixes it registers in [`Frontiers`]; a protocol's) are kept as written
//! ([`CrawlConfig::extension`]) and checked by the crate that reads them ([`ConfigBuilder`] says
//! which keys it keeps).

mod builder;
pub mod environment;
mod error;
mod example;
pub mod flux;
mod frontiers;
mod keys;
mod stormcrawler;
mod topology;
mod yaml_error;

use std::path::{Path, PathBuf};

pub use builder::{ConfigBuilder, ExtensionKeys, known_keys};
pub use error::ConfigError;
pub use example::check_example;
pub(crate) use frontiers::open_embedded;
pub use frontiers::{FrontierKind, FrontierOpenError, Frontiers, OpenFailure};
pub use keys::{field_names, listed_keys};
pub use stormcrawler::ignored_reason;
pub use topology::TopologySettings;

pub use crate::index::IndexerKind;
pub use crate::protocol::{HttpSettings, Secret, SecretFileError};

use crate::fetch::FetcherSettings;
use crate::filter::FilterSettings;
use crate::frontier::FrontierSettings;
use crate::index::IndexerSettings;
use crate::parse::ParserSettings;
use crate::protocol::{AgentSettings, ProtocolSettings, RobotsSettings};
use crate::schedule::{DefaultScheduler, ScheduleSettings};
use crate::spout::SpoutSettings;
use crate::status::StatusSettings;
use crate::warc::WarcSettings;

/// Single keys read by other crates: `topology.metrics.consumer.register`, Storm's list of metrics
/// consumers, whose StormCrawler `MetricsConsumer` entry turns on the metrics index of
/// `squall-engine`.
pub const EXTENSION_KEYS: &[&str] = &["topology.metrics.consumer.register"];

/// Everything a crawl is configured with, one typed section per stage. Build it with
/// [`ConfigBuilder`] (or [`CrawlConfig::from_yaml_str`]); every section's field docs name the key.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlConfig {
    /// Who the crawler says it is.
    pub agent: AgentSettings,
    /// The HTTP protocol.
    pub http: HttpSettings,
    /// robots.txt.
    pub robots: RobotsSettings,
    /// The fetcher's politeness and capacity, and how URLs are grouped into queues.
    pub fetcher: FetcherSettings,
    /// Which protocol fetches which scheme.
    pub protocols: ProtocolSettings,
    /// Which links are kept.
    pub filters: FilterSettings,
    /// The parser, its parse filters, and the metadata it carries to outlinks.
    pub parser: ParserSettings,
    /// The content indexer.
    pub indexer: IndexerSettings,
    /// When URLs are due again.
    pub schedule: ScheduleSettings,
    /// The status updater, and the metadata kept with statuses.
    pub status: StatusSettings,
    /// The spouts.
    pub spout: SpoutSettings,
    /// The topology as a whole.
    pub topology: TopologySettings,
    /// Which frontier, and how much one query reads.
    pub frontier: FrontierSettings,
    /// Keys for other crates, kept as written (see [`ConfigBuilder`]).
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
        // The sections that read their own keys check themselves.
        self.check_keyed_stages()
            .map_err(|(key, message)| ConfigError::InvalidValue {
                key: key.to_string(),
                message,
            })?;
        self.scheduler().map(|_| ())
    }

    /// The scheduler the `fetchInterval.*` keys describe; an invalid custom key is named.
    pub fn scheduler(&self) -> Result<DefaultScheduler, ConfigError> {
        self.schedule
            .scheduler()
            .map_err(|error| ConfigError::InvalidValue {
                key: error.key().to_string(),
                message: error.to_string(),
            })
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

    /// The value of one of the [`EXTENSION_KEYS`], read into `T` (`None` when it is not set).
    pub fn extension_key<T>(&self, key: &str) -> Result<Option<T>, ConfigError>
    where
        T: serde::de::DeserializeOwned,
    {
        self.extensions.key(key)
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

#[cfg(test)]
mod tests;
