//! Crawl configuration: plain serde structs with StormCrawler-style keys and defaults, read from YAML,
//! overridden key by key, and validated before anything starts.
//!
//! Keys are flat and dotted, as in StormCrawler's `crawler-conf.yaml`:
//!
//! ```
//! let config = squall::config::CrawlConfig::from_yaml_str(
//!     "http.agent.name: my-crawler\nfetcher.server.delay: 2.5\n",
//! )?;
//! assert_eq!(config.fetcher_server_delay, 2.5);
//! # Ok::<(), squall::config::ConfigError>(())
//! ```
//!
//! A key that does not exist is an error that names it (and suggests the closest known key), so a typo
//! never silently falls back to a default.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_norway::{Mapping, Value};

use crate::model::PartitionMode;
use crate::schedule::{DefaultScheduler, is_custom_interval_key};

/// Everything a crawl can be configured with. Field docs give the YAML key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrawlConfig {
    /// `http.agent.name`: the product name in the User-Agent header. Required: every crawl must say
    /// who it is.
    #[serde(rename = "http.agent.name")]
    pub http_agent_name: String,
    /// `http.agent.version`: appended to the name as `name/version`.
    #[serde(rename = "http.agent.version")]
    pub http_agent_version: String,
    /// `http.agent.url`: a page about the crawler, added to the User-Agent in parentheses.
    #[serde(rename = "http.agent.url")]
    pub http_agent_url: String,
    /// `http.agent.email`: a contact address, added to the User-Agent.
    #[serde(rename = "http.agent.email")]
    pub http_agent_email: String,
    /// `http.timeout`: seconds for a whole fetch (connect, headers and body).
    #[serde(rename = "http.timeout")]
    pub http_timeout: f64,
    /// `http.connect.timeout`: seconds to establish a connection.
    #[serde(rename = "http.connect.timeout")]
    pub http_connect_timeout: f64,
    /// `http.content.limit`: bytes of body kept per page; longer bodies are truncated. -1: no limit.
    #[serde(rename = "http.content.limit")]
    pub http_content_limit: i64,
    /// `http.skip.robots`: ignore robots.txt entirely (only for sites you own).
    #[serde(rename = "http.skip.robots")]
    pub http_skip_robots: bool,
    /// `http.allow.redirects`: follow redirects within a fetch instead of recording REDIRECTION.
    #[serde(rename = "http.allow.redirects")]
    pub http_allow_redirects: bool,
    /// `http.max.redirects`: redirects followed in one fetch when they are followed.
    #[serde(rename = "http.max.redirects")]
    pub http_max_redirects: usize,
    /// `http.refuse.private.addresses`: never connect to private, loopback or link-local addresses.
    #[serde(rename = "http.refuse.private.addresses")]
    pub http_refuse_private_addresses: bool,
    /// `http.dns.cache.ttl`: seconds a DNS answer is reused.
    #[serde(rename = "http.dns.cache.ttl")]
    pub http_dns_cache_ttl: f64,
    /// `robots.cache.ttl`: seconds a site's robots.txt rules are reused.
    #[serde(rename = "robots.cache.ttl")]
    pub robots_cache_ttl: f64,
    /// `robots.error.cache.ttl`: seconds before asking again a site whose robots.txt failed (5xx,
    /// unreachable), during which everything on it is disallowed.
    #[serde(rename = "robots.error.cache.ttl")]
    pub robots_error_cache_ttl: f64,
    /// `sitemap.discovery`: robots.txt `Sitemap:` lines become DISCOVERED URLs, and sitemaps are parsed.
    #[serde(rename = "sitemap.discovery")]
    pub sitemap_discovery: bool,
    /// `fetcher.server.delay`: seconds from the end of one fetch to the start of the next on a queue.
    #[serde(rename = "fetcher.server.delay")]
    pub fetcher_server_delay: f64,
    /// `fetcher.server.min.delay`: the delay used instead when a queue allows several threads.
    #[serde(rename = "fetcher.server.min.delay")]
    pub fetcher_server_min_delay: f64,
    /// `fetcher.threads.per.queue`: fetches at once on one queue.
    #[serde(rename = "fetcher.threads.per.queue")]
    pub fetcher_threads_per_queue: usize,
    /// `fetcher.threads.number`: fetches at once over all queues.
    #[serde(rename = "fetcher.threads.number")]
    pub fetcher_threads_number: usize,
    /// `fetcher.max.urls.in.queues`: URLs waiting in the fetcher's queues before it stops taking more.
    #[serde(rename = "fetcher.max.urls.in.queues")]
    pub fetcher_max_urls_in_queues: usize,
    /// `fetcher.max.crawl.delay`: seconds; a robots.txt Crawl-delay above this gives the URL ERROR.
    #[serde(rename = "fetcher.max.crawl.delay")]
    pub fetcher_max_crawl_delay: f64,
    /// `fetcher.max.crawl.delay.force`: cap such a Crawl-delay at the maximum instead.
    #[serde(rename = "fetcher.max.crawl.delay.force")]
    pub fetcher_max_crawl_delay_force: bool,
    /// `fetcher.server.delay.force`: keep `fetcher.server.delay` when robots.txt asks for less.
    #[serde(rename = "fetcher.server.delay.force")]
    pub fetcher_server_delay_force: bool,
    /// `fetcher.max.retry.after`: seconds; the longest Retry-After hold honoured on 429 and 503.
    #[serde(rename = "fetcher.max.retry.after")]
    pub fetcher_max_retry_after: f64,
    /// `fetcher.max.fetches.per.second`: a global cap over all hosts; 0 for none.
    #[serde(rename = "fetcher.max.fetches.per.second")]
    pub fetcher_max_fetches_per_second: u32,
    /// `partition.url.mode`: `byHost`, `byDomain` or `byIP`.
    #[serde(rename = "partition.url.mode")]
    pub partition_url_mode: PartitionMode,
    /// `urlfilter.ignore.outside.host`: keep only outlinks and redirect targets on the host of the
    /// page they were found on (seeds are always kept).
    #[serde(rename = "urlfilter.ignore.outside.host")]
    pub urlfilter_ignore_outside_host: bool,
    /// `urlfilter.ignore.outside.domain`: keep only outlinks and redirect targets on the registrable
    /// domain of the page they were found on (seeds are always kept).
    #[serde(rename = "urlfilter.ignore.outside.domain")]
    pub urlfilter_ignore_outside_domain: bool,
    /// `urlfilter.schemes`: URL schemes that may be crawled.
    #[serde(rename = "urlfilter.schemes")]
    pub urlfilter_schemes: Vec<String>,
    /// `urlfilter.include`: regular expressions; when any is given, a URL must match one.
    #[serde(rename = "urlfilter.include")]
    pub urlfilter_include: Vec<String>,
    /// `urlfilter.exclude`: regular expressions; a URL matching one is dropped.
    #[serde(rename = "urlfilter.exclude")]
    pub urlfilter_exclude: Vec<String>,
    /// `urlnormalizer.remove.query.params`: query parameters to drop (`utm_*` wildcards allowed).
    #[serde(rename = "urlnormalizer.remove.query.params")]
    pub urlnormalizer_remove_query_params: Vec<String>,
    /// `max.depth`: outlinks deeper than this from the seeds are dropped. -1: no limit.
    #[serde(rename = "max.depth")]
    pub max_depth: i64,
    /// `parser.emitOutlinks`: whether parsed links become DISCOVERED URLs.
    #[serde(rename = "parser.emitOutlinks")]
    pub parser_emit_outlinks: bool,
    /// `parser.emitOutlinks.max.per.page`: outlinks kept per page. -1: no limit.
    #[serde(rename = "parser.emitOutlinks.max.per.page")]
    pub parser_emit_outlinks_max_per_page: i64,
    /// `parser.text.max.bytes`: visible text kept per page for parse filters and indexers; 0: none.
    #[serde(rename = "parser.text.max.bytes")]
    pub parser_text_max_bytes: usize,
    /// `redirections.allowed`: whether a redirect's target becomes a DISCOVERED URL.
    #[serde(rename = "redirections.allowed")]
    pub redirections_allowed: bool,
    /// `fetchInterval.default`: minutes before a FETCHED or REDIRECTION URL is due again. -1: never.
    #[serde(rename = "fetchInterval.default")]
    pub fetch_interval_default: i64,
    /// `fetchInterval.fetch.error`: minutes before a FETCH_ERROR URL is due again. -1: never.
    #[serde(rename = "fetchInterval.fetch.error")]
    pub fetch_interval_fetch_error: i64,
    /// `fetchInterval.error`: minutes before an ERROR URL is due again. -1: never.
    #[serde(rename = "fetchInterval.error")]
    pub fetch_interval_error: i64,
    /// Custom intervals by metadata, from keys such as `fetchInterval.isFeed=true: 10` or
    /// `fetchInterval.FETCH_ERROR.isFeed=true: 60`, in the order given.
    #[serde(skip)]
    pub fetch_interval_custom: Vec<(String, i64)>,
    /// `max.fetch.errors`: consecutive fetch errors after which FETCH_ERROR becomes ERROR.
    #[serde(rename = "max.fetch.errors")]
    pub max_fetch_errors: u32,
    /// `metadata.transfer`: metadata keys copied from a page to its outlinks (and persisted).
    #[serde(rename = "metadata.transfer")]
    pub metadata_transfer: Vec<String>,
    /// `metadata.persist`: metadata keys stored with a URL's status (trailing `*` wildcards allowed).
    #[serde(rename = "metadata.persist")]
    pub metadata_persist: Vec<String>,
    /// `metadata.track.path`: record `url.path` (the page an outlink was found on).
    #[serde(rename = "metadata.track.path")]
    pub metadata_track_path: bool,
    /// `metadata.track.depth`: record `depth` (distance from the seeds).
    #[serde(rename = "metadata.track.depth")]
    pub metadata_track_depth: bool,
    /// `spout.ttl.purgatory`: seconds an acked or failed URL is not emitted again.
    #[serde(rename = "spout.ttl.purgatory")]
    pub spout_ttl_purgatory: f64,
    /// `spout.min.delay.queries`: milliseconds after a frontier query that brought nothing new before
    /// the next one (an answer with new URLs is followed by the next query as soon as the fetcher has
    /// taken them; an ack or a host's fetcher queue running dry can bring it forward).
    #[serde(rename = "spout.min.delay.queries")]
    pub spout_min_delay_queries: u64,
    /// `spout.max.delay.queries`: milliseconds after which a new query runs even if URLs are buffered.
    #[serde(rename = "spout.max.delay.queries")]
    pub spout_max_delay_queries: u64,
    /// `topology.max.spout.pending`: URLs emitted and not yet acked or failed.
    #[serde(rename = "topology.max.spout.pending")]
    pub topology_max_spout_pending: usize,
    /// `topology.shutdown.timeout`: seconds a graceful stop may take before it is cut short.
    #[serde(rename = "topology.shutdown.timeout")]
    pub topology_shutdown_timeout: f64,
    /// `status.updater.batch.size`: status writes sent to the store together.
    #[serde(rename = "status.updater.batch.size")]
    pub status_updater_batch_size: usize,
    /// `status.updater.flush.interval`: seconds before a partial batch is written anyway.
    #[serde(rename = "status.updater.flush.interval")]
    pub status_updater_flush_interval: f64,
    /// `frontier.max.buckets`: queues (hosts) read per frontier query.
    #[serde(rename = "frontier.max.buckets")]
    pub frontier_max_buckets: usize,
    /// `frontier.max.urls.per.bucket`: due URLs read per queue per frontier query.
    #[serde(rename = "frontier.max.urls.per.bucket")]
    pub frontier_max_urls_per_bucket: usize,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            http_agent_name: String::new(),
            http_agent_version: env!("CARGO_PKG_VERSION").to_string(),
            http_agent_url: String::new(),
            http_agent_email: String::new(),
            http_timeout: 30.0,
            http_connect_timeout: 10.0,
            http_content_limit: 10 * 1024 * 1024,
            http_skip_robots: false,
            http_allow_redirects: false,
            http_max_redirects: 5,
            http_refuse_private_addresses: false,
            http_dns_cache_ttl: 300.0,
            robots_cache_ttl: 86400.0,
            robots_error_cache_ttl: 600.0,
            sitemap_discovery: true,
            fetcher_server_delay: 1.0,
            fetcher_server_min_delay: 0.0,
            fetcher_threads_per_queue: 1,
            fetcher_threads_number: 50,
            fetcher_max_urls_in_queues: 2000,
            fetcher_max_crawl_delay: 30.0,
            fetcher_max_crawl_delay_force: false,
            fetcher_server_delay_force: false,
            fetcher_max_retry_after: 300.0,
            fetcher_max_fetches_per_second: 0,
            partition_url_mode: PartitionMode::ByHost,
            urlfilter_ignore_outside_host: false,
            urlfilter_ignore_outside_domain: false,
            urlfilter_schemes: vec!["http".to_string(), "https".to_string()],
            urlfilter_include: Vec::new(),
            urlfilter_exclude: Vec::new(),
            urlnormalizer_remove_query_params: Vec::new(),
            max_depth: -1,
            parser_emit_outlinks: true,
            parser_emit_outlinks_max_per_page: 5000,
            parser_text_max_bytes: 0,
            redirections_allowed: true,
            fetch_interval_default: 1440,
            fetch_interval_fetch_error: 120,
            fetch_interval_error: -1,
            fetch_interval_custom: Vec::new(),
            max_fetch_errors: 3,
            metadata_transfer: Vec::new(),
            metadata_persist: [
                "_redirTo",
                "error.cause",
                "error.source",
                "isSitemap",
                "isFeed",
            ]
            .map(str::to_string)
            .to_vec(),
            metadata_track_path: true,
            metadata_track_depth: true,
            spout_ttl_purgatory: 30.0,
            spout_min_delay_queries: 2000,
            spout_max_delay_queries: 20000,
            topology_max_spout_pending: 1000,
            topology_shutdown_timeout: 30.0,
            status_updater_batch_size: 200,
            status_updater_flush_interval: 1.0,
            frontier_max_buckets: 100,
            frontier_max_urls_per_bucket: 10,
        }
    }
}

/// Why a configuration could not be used. Each variant names the offending key or file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not YAML, or not a mapping of keys to values.
    #[error("config is not valid YAML: {0}")]
    Syntax(String),
    /// A key that squall does not know.
    #[error("unknown config key `{key}`{}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownKey {
        /// The key as written.
        key: String,
        /// The closest known key, when one is close.
        suggestion: Option<String>,
    },
    /// A known key with a value of the wrong type.
    #[error("config key `{key}` has an invalid value: {message}")]
    InvalidValue {
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A `--set` override that is not `KEY=VALUE`.
    #[error("override {0:?} is not KEY=VALUE")]
    BadOverride(String),
}

impl CrawlConfig {
    /// Reads a YAML file (flat keys, optionally under a top-level `config:` as in Flux files).
    pub fn from_yaml_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_yaml_str(&text)
    }

    /// Reads YAML text.
    pub fn from_yaml_str(text: &str) -> Result<Self, ConfigError> {
        ConfigBuilder::new().yaml_str(text)?.build()
    }

    /// The user agent sent with every request: `name/version (url; email)`.
    pub fn user_agent(&self) -> String {
        let mut agent = self.http_agent_name.clone();
        if !self.http_agent_version.is_empty() {
            agent.push('/');
            agent.push_str(&self.http_agent_version);
        }
        let extras: Vec<&str> = [self.http_agent_url.as_str(), self.http_agent_email.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect();
        if !extras.is_empty() {
            agent.push_str(&format!(" (+{})", extras.join("; ")));
        }
        agent
    }

    /// The scheduler these settings describe.
    pub fn scheduler(&self) -> Result<DefaultScheduler, ConfigError> {
        let mut scheduler = DefaultScheduler::new(
            self.fetch_interval_default,
            self.fetch_interval_fetch_error,
            self.fetch_interval_error,
        );
        for (key, minutes) in &self.fetch_interval_custom {
            scheduler =
                scheduler
                    .with_custom(key, *minutes)
                    .map_err(|e| ConfigError::InvalidValue {
                        key: key.clone(),
                        message: e.to_string(),
                    })?;
        }
        Ok(scheduler)
    }

    /// Checks values that parse but make no sense.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: &str| {
            Err(ConfigError::InvalidValue {
                key: key.to_string(),
                message: message.to_string(),
            })
        };
        if self.http_agent_name.trim().is_empty() {
            return invalid(
                "http.agent.name",
                "must name your crawler (it is sent to every site): set it in the config file or \
                 with --set http.agent.name=NAME",
            );
        }
        let non_negative = [
            ("http.timeout", self.http_timeout),
            ("http.connect.timeout", self.http_connect_timeout),
            ("fetcher.server.delay", self.fetcher_server_delay),
            ("fetcher.server.min.delay", self.fetcher_server_min_delay),
            ("fetcher.max.crawl.delay", self.fetcher_max_crawl_delay),
            ("fetcher.max.retry.after", self.fetcher_max_retry_after),
            ("http.dns.cache.ttl", self.http_dns_cache_ttl),
            ("robots.cache.ttl", self.robots_cache_ttl),
            ("robots.error.cache.ttl", self.robots_error_cache_ttl),
            ("spout.ttl.purgatory", self.spout_ttl_purgatory),
            ("topology.shutdown.timeout", self.topology_shutdown_timeout),
            (
                "status.updater.flush.interval",
                self.status_updater_flush_interval,
            ),
        ];
        // A year is far beyond any sensible setting and well within what timers can hold.
        const YEAR: f64 = 365.0 * 24.0 * 3600.0;
        for (key, value) in non_negative {
            if !value.is_finite() || !(0.0..=YEAR).contains(&value) {
                return invalid(key, "must be a number of seconds from 0 to one year");
            }
        }
        if self.http_timeout == 0.0 {
            return invalid("http.timeout", "must be more than 0");
        }
        if self.http_connect_timeout == 0.0 {
            return invalid("http.connect.timeout", "must be more than 0");
        }
        if self.spout_min_delay_queries < 10 {
            return invalid(
                "spout.min.delay.queries",
                "must be at least 10 (milliseconds)",
            );
        }
        let at_least_one = [
            ("fetcher.threads.per.queue", self.fetcher_threads_per_queue),
            ("fetcher.threads.number", self.fetcher_threads_number),
            (
                "fetcher.max.urls.in.queues",
                self.fetcher_max_urls_in_queues,
            ),
            (
                "topology.max.spout.pending",
                self.topology_max_spout_pending,
            ),
            ("status.updater.batch.size", self.status_updater_batch_size),
            ("frontier.max.buckets", self.frontier_max_buckets),
            (
                "frontier.max.urls.per.bucket",
                self.frontier_max_urls_per_bucket,
            ),
        ];
        for (key, value) in at_least_one {
            if value == 0 {
                return invalid(key, "must be at least 1");
            }
        }
        if self.urlfilter_schemes.is_empty() {
            return invalid("urlfilter.schemes", "must allow at least one scheme");
        }
        self.scheduler()?;
        Ok(())
    }
}

/// Layers configuration sources: YAML text or files, then `KEY=VALUE` overrides, then validation.
#[derive(Debug, Default)]
pub struct ConfigBuilder {
    values: Mapping,
}

impl ConfigBuilder {
    /// Starts from the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the keys of a YAML document; later sources override earlier ones.
    pub fn yaml_str(mut self, text: &str) -> Result<Self, ConfigError> {
        let document: Value =
            serde_norway::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        let mapping = match document {
            Value::Null => Mapping::new(),
            Value::Mapping(mut mapping) => {
                // Flux files nest the settings under `config:`.
                let nested = mapping.remove("config");
                match nested {
                    Some(Value::Mapping(inner)) if mapping.is_empty() => inner,
                    Some(other) => {
                        mapping.insert(Value::from("config"), other);
                        mapping
                    }
                    None => mapping,
                }
            }
            _ => {
                return Err(ConfigError::Syntax(
                    "the top level must be a mapping of keys to values".to_string(),
                ));
            }
        };
        for (key, value) in mapping {
            let Value::String(key) = key else {
                return Err(ConfigError::Syntax(format!("key {key:?} is not a string")));
            };
            self.values.insert(Value::String(key), value);
        }
        Ok(self)
    }

    /// Adds the keys of a YAML file.
    pub fn yaml_file(self, path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        self.yaml_str(&text)
    }

    /// Overrides one key from `KEY=VALUE`; the value is read as a YAML scalar or list.
    pub fn set(mut self, assignment: &str) -> Result<Self, ConfigError> {
        let Some((key, raw)) = assignment.split_once('=') else {
            return Err(ConfigError::BadOverride(assignment.to_string()));
        };
        // Custom interval keys contain `=` themselves: `fetchInterval.isFeed=true=10`.
        let (key, raw) = if key.starts_with("fetchInterval.") && raw.contains('=') {
            match assignment.rsplit_once('=') {
                Some(split) => split,
                None => (key, raw),
            }
        } else {
            (key, raw)
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(ConfigError::BadOverride(assignment.to_string()));
        }
        let value: Value =
            serde_norway::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        self.values.insert(Value::String(key.to_string()), value);
        Ok(self)
    }

    /// Builds and validates the configuration.
    pub fn build(self) -> Result<CrawlConfig, ConfigError> {
        let known = known_keys();
        let mut strict = Mapping::new();
        let mut custom = Vec::new();
        for (key, value) in self.values {
            let Value::String(name) = &key else { continue };
            if is_custom_interval_key(name) {
                let minutes = value.as_i64().ok_or_else(|| ConfigError::InvalidValue {
                    key: name.clone(),
                    message: "must be a whole number of minutes (-1 for never)".to_string(),
                })?;
                custom.push((name.clone(), minutes));
            } else if known.iter().any(|k| k == name) {
                strict.insert(key, value);
            } else {
                let suggestion = known
                    .iter()
                    .map(|k| (strsim::jaro_winkler(k, name), k))
                    .filter(|(score, _)| *score > 0.85)
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, k)| k.clone());
                return Err(ConfigError::UnknownKey {
                    key: name.clone(),
                    suggestion,
                });
            }
        }
        let mut config: CrawlConfig = serde_path_to_error::deserialize(Value::Mapping(strict))
            .map_err(|e| ConfigError::InvalidValue {
                key: e.path().to_string(),
                message: e.inner().to_string(),
            })?;
        config.fetch_interval_custom = custom;
        config.validate()?;
        Ok(config)
    }
}

/// Every key a config file may hold (custom `fetchInterval.*` keys aside).
pub fn known_keys() -> Vec<String> {
    match serde_norway::to_value(CrawlConfig::default()) {
        Ok(Value::Mapping(mapping)) => mapping
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config with an agent name and the given extra YAML.
    fn named(extra: &str) -> Result<CrawlConfig, ConfigError> {
        CrawlConfig::from_yaml_str(&format!("http.agent.name: test\n{extra}"))
    }

    #[test]
    fn the_agent_name_is_required() {
        let err = ConfigBuilder::new().build().expect_err("no agent name");
        assert!(err.to_string().contains("http.agent.name"), "{err}");
        assert!(CrawlConfig::from_yaml_str("http.agent.name: ''\n").is_err());
    }

    #[test]
    fn defaults_are_valid_and_stormcrawler_like() {
        let config = named("").expect("defaults");
        assert_eq!(
            config,
            CrawlConfig {
                http_agent_name: "test".to_string(),
                ..CrawlConfig::default()
            }
        );
        assert_eq!(config.fetcher_server_delay, 1.0);
        assert_eq!(config.fetcher_threads_per_queue, 1);
        assert_eq!(config.partition_url_mode, PartitionMode::ByHost);
        assert_eq!(config.max_fetch_errors, 3);
    }

    #[test]
    fn unknown_key_is_named_with_a_suggestion() {
        let err = named("fetcher.server.dealy: 2\n").expect_err("typo");
        let message = err.to_string();
        assert!(message.contains("`fetcher.server.dealy`"), "{message}");
        assert!(
            message.contains("did you mean `fetcher.server.delay`"),
            "{message}"
        );
    }

    #[test]
    fn mistyped_value_names_the_key() {
        let err = named("fetcher.threads.per.queue: many\n").expect_err("type");
        assert!(
            err.to_string().contains("fetcher.threads.per.queue"),
            "{err}"
        );
        let err = named("partition.url.mode: byPlanet\n").expect_err("enum");
        assert!(err.to_string().contains("partition.url.mode"), "{err}");
    }

    #[test]
    fn overrides_win_and_custom_intervals_are_collected() {
        let config = ConfigBuilder::new()
            .yaml_str(
                "config:\n  http.agent.name: t\n  fetcher.server.delay: 3\n  fetchInterval.isFeed=true: 10\n",
            )
            .expect("yaml")
            .set("fetcher.server.delay=0.5")
            .expect("set")
            .set("urlfilter.exclude=[\"\\\\.pdf$\"]")
            .expect("set list")
            .set("fetchInterval.FETCH_ERROR.isFeed=true=60")
            .expect("set custom")
            .build()
            .expect("build");
        assert_eq!(config.fetcher_server_delay, 0.5);
        assert_eq!(config.urlfilter_exclude, ["\\.pdf$"]);
        assert_eq!(
            config.fetch_interval_custom,
            [
                ("fetchInterval.isFeed=true".to_string(), 10),
                ("fetchInterval.FETCH_ERROR.isFeed=true".to_string(), 60)
            ]
        );
    }

    #[test]
    fn nonsense_values_are_refused() {
        assert!(named("fetcher.server.delay: -1\n").is_err());
        assert!(named("fetcher.threads.per.queue: 0\n").is_err());
        assert!(ConfigBuilder::new().set("no-equals-sign").is_err());
    }

    #[test]
    fn the_shipped_example_config_lists_every_key_with_its_default() {
        let text = include_str!("../examples/crawler-conf.yaml");
        let document: Value = serde_norway::from_str(text).expect("example config is YAML");
        let Value::Mapping(mapping) = document else {
            panic!("example config is not a mapping");
        };
        let mut listed: Vec<String> = mapping
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        listed.sort();
        let mut known = known_keys();
        known.sort();
        assert_eq!(
            listed, known,
            "examples/crawler-conf.yaml and CrawlConfig differ"
        );
        // The agent name is the user's to give: the example leaves it empty.
        assert_eq!(mapping.get("http.agent.name"), Some(&Value::from("")));
        let parsed = ConfigBuilder::new()
            .yaml_str(text)
            .and_then(|b| b.set("http.agent.name=example"))
            .and_then(ConfigBuilder::build)
            .expect("example config parses");
        // The version is the crate's own; the file cannot know it in advance.
        let defaults = CrawlConfig {
            http_agent_name: "example".to_string(),
            http_agent_version: parsed.http_agent_version.clone(),
            ..CrawlConfig::default()
        };
        assert_eq!(
            parsed, defaults,
            "a value in examples/crawler-conf.yaml is not the default"
        );
    }
}
