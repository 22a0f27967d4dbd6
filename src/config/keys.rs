//! The keys of a config file, as StormCrawler names them, with their defaults and checks.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_norway::Value;

use super::sections::{
    AgentConfig, FetcherConfig, FilterConfig, FrontierConfig, FrontierKind, HttpConfig,
    MetadataConfig, ParserConfig, RobotsConfig, ScheduleConfig, SpoutConfig, StatusConfig,
    TopologyConfig,
};
use super::{ConfigError, CrawlConfig, ExtensionKeys};
use crate::model::PartitionMode;

/// The configuration as written: one field per StormCrawler-style key, in the units of the key
/// (seconds, milliseconds or minutes, `-1` for "none"). [`ConfigKeys::into_config`] checks it and
/// turns it into the typed [`CrawlConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConfigKeys {
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
    /// `frontier.kind`: `embedded` or `opensearch`.
    #[serde(rename = "frontier.kind")]
    pub frontier_kind: FrontierKind,
    /// `frontier.path`: the embedded frontier's directory.
    #[serde(rename = "frontier.path")]
    pub frontier_path: PathBuf,
    /// `frontier.max.buckets`: queues (hosts) read per frontier query.
    #[serde(rename = "frontier.max.buckets")]
    pub frontier_max_buckets: usize,
    /// `frontier.max.urls.per.bucket`: due URLs read per queue per frontier query.
    #[serde(rename = "frontier.max.urls.per.bucket")]
    pub frontier_max_urls_per_bucket: usize,
}

impl Default for ConfigKeys {
    fn default() -> Self {
        ConfigKeys {
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
            frontier_kind: FrontierKind::Embedded,
            frontier_path: PathBuf::from("squall-frontier"),
            frontier_max_buckets: 100,
            frontier_max_urls_per_bucket: 10,
        }
    }
}

impl ConfigKeys {
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
        Ok(())
    }

    /// Checks the values and turns them into the typed configuration; `custom` holds the custom
    /// `fetchInterval.*` keys (in minutes, negative for never), `extensions` the keys other crates
    /// read.
    pub fn into_config(
        self,
        custom: Vec<(String, i64)>,
        extensions: ExtensionKeys,
    ) -> Result<CrawlConfig, ConfigError> {
        self.validate()?;
        let config = CrawlConfig {
            agent: AgentConfig {
                name: self.http_agent_name,
                version: self.http_agent_version,
                url: self.http_agent_url,
                email: self.http_agent_email,
            },
            http: HttpConfig {
                timeout: seconds(self.http_timeout),
                connect_timeout: seconds(self.http_connect_timeout),
                content_limit: usize::try_from(self.http_content_limit).ok(),
                allow_redirects: self.http_allow_redirects,
                max_redirects: self.http_max_redirects,
                refuse_private_addresses: self.http_refuse_private_addresses,
                dns_cache_ttl: seconds(self.http_dns_cache_ttl),
            },
            robots: RobotsConfig {
                skip: self.http_skip_robots,
                cache_ttl: seconds(self.robots_cache_ttl),
                error_cache_ttl: seconds(self.robots_error_cache_ttl),
            },
            fetcher: FetcherConfig {
                server_delay: seconds(self.fetcher_server_delay),
                server_min_delay: seconds(self.fetcher_server_min_delay),
                server_delay_force: self.fetcher_server_delay_force,
                threads_per_queue: self.fetcher_threads_per_queue,
                threads_number: self.fetcher_threads_number,
                max_urls_in_queues: self.fetcher_max_urls_in_queues,
                max_crawl_delay: seconds(self.fetcher_max_crawl_delay),
                max_crawl_delay_force: self.fetcher_max_crawl_delay_force,
                max_retry_after: seconds(self.fetcher_max_retry_after),
                max_fetches_per_second: NonZeroU32::new(self.fetcher_max_fetches_per_second),
            },
            partition: self.partition_url_mode,
            filters: FilterConfig {
                ignore_outside_host: self.urlfilter_ignore_outside_host,
                ignore_outside_domain: self.urlfilter_ignore_outside_domain,
                schemes: self.urlfilter_schemes,
                include: self.urlfilter_include,
                exclude: self.urlfilter_exclude,
                remove_query_params: self.urlnormalizer_remove_query_params,
                max_depth: u32::try_from(self.max_depth).ok(),
            },
            parser: ParserConfig {
                emit_outlinks: self.parser_emit_outlinks,
                max_outlinks_per_page: usize::try_from(self.parser_emit_outlinks_max_per_page).ok(),
                text_max_bytes: self.parser_text_max_bytes,
                redirections_allowed: self.redirections_allowed,
                sitemap_discovery: self.sitemap_discovery,
            },
            metadata: MetadataConfig {
                transfer: self.metadata_transfer,
                persist: self.metadata_persist,
                track_path: self.metadata_track_path,
                track_depth: self.metadata_track_depth,
            },
            schedule: ScheduleConfig {
                default: minutes(self.fetch_interval_default),
                fetch_error: minutes(self.fetch_interval_fetch_error),
                error: minutes(self.fetch_interval_error),
                custom: custom
                    .into_iter()
                    .map(|(key, m)| (key, minutes(m)))
                    .collect(),
                max_fetch_errors: self.max_fetch_errors,
            },
            status: StatusConfig {
                batch_size: self.status_updater_batch_size,
                flush_interval: seconds(self.status_updater_flush_interval),
            },
            spout: SpoutConfig {
                ttl_purgatory: seconds(self.spout_ttl_purgatory),
                min_delay_queries: Duration::from_millis(self.spout_min_delay_queries),
                max_delay_queries: Duration::from_millis(self.spout_max_delay_queries),
                max_pending: self.topology_max_spout_pending,
            },
            topology: TopologyConfig {
                shutdown_timeout: seconds(self.topology_shutdown_timeout),
            },
            frontier: FrontierConfig {
                kind: self.frontier_kind,
                path: self.frontier_path,
                max_buckets: self.frontier_max_buckets,
                max_urls_per_bucket: self.frontier_max_urls_per_bucket,
            },
            extensions,
        };
        config.validate()?;
        Ok(config)
    }
}

/// Seconds already checked to be finite and within a year.
fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or(Duration::ZERO)
}

/// Minutes as StormCrawler writes them: negative means never.
fn minutes(value: i64) -> Option<Duration> {
    u64::try_from(value)
        .ok()
        .map(|m| Duration::from_secs(m.saturating_mul(60)))
}

/// Every key a config file may hold (custom `fetchInterval.*` keys aside).
pub fn known_keys() -> Vec<String> {
    match serde_norway::to_value(ConfigKeys::default()) {
        Ok(Value::Mapping(mapping)) => mapping
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}
