//! Assembling a crawler: configuration, frontier, filters and hooks.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::run::Crawler;
use super::seeds::SeedFilters;
use crate::config::{ConfigError, CrawlConfig};
use crate::fetch::{
    FetcherBolt, FetcherSettings, HttpClient, HttpClientError, HttpSettings, Protocol, Protocols,
    RobotsCache,
};
use crate::filter::{
    BasicNormalizer, DepthFilter, FilterChain, FilterError, RegexFilter, SchemeFilter, ScopeFilter,
    UrlFilter,
};
use crate::frontier::Spout;
use crate::frontier::StatusStore;
use crate::message::{CrawlObserver, CrawlStats, Observers};
use crate::parse::{ParseFilter, ParserBolt, ParserSettings};
use crate::schedule::Scheduler;
use crate::spout::RunnerSettings;
use crate::status::StatusUpdaterSettings;

/// Why a crawler could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A URL filter could not be built from the configuration.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Http(#[from] HttpClientError),
    /// No frontier was given.
    #[error("no frontier: call CrawlerBuilder::frontier (or spout and status_store)")]
    NoFrontier,
}

/// Builds a [`Crawler`]: the configuration, a frontier, and any filters and hooks of your own.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use squall::config::CrawlConfig;
/// use squall::frontier::{EmbeddedFrontier, QueryLimits};
/// use squall::topology::{CrawlerBuilder, RunLimits};
///
/// let frontier = EmbeddedFrontier::open(std::path::Path::new("crawl-db"))?;
/// let config = CrawlConfig::from_yaml_str("http.agent.name: my-crawler")?;
/// let crawler = CrawlerBuilder::new(config)
///     .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
///     .build()?;
/// crawler.inject(["https://example.org/"]).await;
/// let summary = crawler.run(RunLimits { until_idle: true, ..RunLimits::default() }).await;
/// println!("{summary}");
/// # Ok(()) }
/// ```
pub struct CrawlerBuilder {
    config: CrawlConfig,
    spout: Option<Box<dyn Spout>>,
    store: Option<Arc<dyn StatusStore>>,
    url_filters: Vec<Arc<dyn UrlFilter>>,
    parse_filters: Vec<Arc<dyn ParseFilter>>,
    scheduler: Option<Arc<dyn Scheduler>>,
    observers: Observers,
    resolve: Vec<(String, SocketAddr)>,
    protocols: Vec<(String, Arc<dyn Protocol>)>,
}

impl CrawlerBuilder {
    /// Starts from a configuration.
    pub fn new(config: CrawlConfig) -> Self {
        CrawlerBuilder {
            config,
            spout: None,
            store: None,
            url_filters: Vec::new(),
            parse_filters: Vec::new(),
            scheduler: None,
            observers: Observers::default(),
            resolve: Vec::new(),
            protocols: Vec::new(),
        }
    }

    /// The frontier: where URLs are read from, and where statuses are written.
    pub fn frontier(
        mut self,
        spout: impl Spout + 'static,
        store: impl StatusStore + 'static,
    ) -> Self {
        self.spout = Some(Box::new(spout));
        self.store = Some(Arc::new(store));
        self
    }

    /// The spout alone.
    pub fn spout(mut self, spout: Box<dyn Spout>) -> Self {
        self.spout = Some(spout);
        self
    }

    /// The status store alone.
    pub fn status_store(mut self, store: Arc<dyn StatusStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Adds a URL filter after the configured ones (normalizer, schemes, scope, regex, depth).
    pub fn url_filter(mut self, filter: impl UrlFilter + 'static) -> Self {
        self.url_filters.push(Arc::new(filter));
        self
    }

    /// Adds a parse filter.
    pub fn parse_filter(mut self, filter: impl ParseFilter + 'static) -> Self {
        self.parse_filters.push(Arc::new(filter));
        self
    }

    /// Replaces the scheduler built from the configuration's `fetchInterval.*` keys.
    pub fn scheduler(mut self, scheduler: impl Scheduler + 'static) -> Self {
        self.scheduler = Some(Arc::new(scheduler));
        self
    }

    /// Adds an observer of crawl events (fetch logs, progress, your own metrics).
    pub fn observer(mut self, observer: Arc<dyn CrawlObserver>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Resolves `host` to `addr` instead of asking DNS (like curl's `--resolve`).
    pub fn resolve(mut self, host: impl Into<String>, addr: SocketAddr) -> Self {
        self.resolve.push((host.into(), addr));
        self
    }

    /// Fetches URLs of `scheme` with `protocol` (replacing HTTP for `http` and `https`); the scheme
    /// must also pass the URL filter (`urlfilter.schemes`).
    pub fn protocol(mut self, scheme: impl Into<String>, protocol: Arc<dyn Protocol>) -> Self {
        self.protocols.push((scheme.into(), protocol));
        self
    }

    /// Validates everything and builds the crawler.
    pub fn build(self) -> Result<Crawler, BuildError> {
        let config = self.config;
        config.validate()?;
        let spout = self.spout.ok_or(BuildError::NoFrontier)?;
        let store = self.store.ok_or(BuildError::NoFrontier)?;
        let scheduler: Arc<dyn Scheduler> = match self.scheduler {
            Some(scheduler) => scheduler,
            None => Arc::new(config.scheduler()?),
        };

        let mut normalizer = BasicNormalizer::new();
        if !config.urlnormalizer_remove_query_params.is_empty() {
            normalizer =
                normalizer.remove_query_params(config.urlnormalizer_remove_query_params.clone());
        }
        let normalizer = Arc::new(normalizer);
        let max_depth = u32::try_from(config.max_depth).ok();
        let mut filters = FilterChain::new();
        filters.push(normalizer.clone());
        filters.push(Arc::new(SchemeFilter::new(
            config.urlfilter_schemes.clone(),
        )));
        filters.push(Arc::new(ScopeFilter::new(
            config.urlfilter_ignore_outside_host,
            config.urlfilter_ignore_outside_domain,
        )));
        if !config.urlfilter_include.is_empty() || !config.urlfilter_exclude.is_empty() {
            filters.push(Arc::new(RegexFilter::new(
                &config.urlfilter_include,
                &config.urlfilter_exclude,
            )?));
        }
        filters.push(Arc::new(DepthFilter::new(max_depth)));
        for filter in self.url_filters {
            filters.push(filter);
        }

        let http_settings = HttpSettings {
            user_agent: config.user_agent(),
            timeout: Duration::from_secs_f64(config.http_timeout),
            connect_timeout: Duration::from_secs_f64(config.http_connect_timeout),
            content_limit: usize::try_from(config.http_content_limit).ok(),
            resolve: self.resolve,
            follow_redirects: config.http_allow_redirects,
            max_redirects: config.http_max_redirects,
            refuse_private_addresses: config.http_refuse_private_addresses,
            dns_cache_ttl: Duration::from_secs_f64(config.http_dns_cache_ttl),
        };
        let http = HttpClient::new(&http_settings)?;
        let robots = if config.http_skip_robots {
            None
        } else {
            Some(RobotsCache::new(
                &http_settings,
                &config.http_agent_name,
                Duration::from_secs_f64(config.robots_cache_ttl),
                Duration::from_secs_f64(config.robots_error_cache_ttl),
            )?)
        };
        let stats = Arc::new(CrawlStats::default());
        let mut observers = self.observers;
        observers.push(stats.clone());
        let observer: Arc<dyn CrawlObserver> = Arc::new(observers);
        let mut protocols = Protocols::http(http);
        protocols.extend(self.protocols);
        let fetcher = FetcherBolt::new(
            protocols,
            robots,
            FetcherSettings {
                server_delay: Duration::from_secs_f64(config.fetcher_server_delay),
                min_delay: Duration::from_secs_f64(config.fetcher_server_min_delay),
                threads_per_queue: config.fetcher_threads_per_queue,
                threads_total: config.fetcher_threads_number,
                max_queued: config.fetcher_max_urls_in_queues,
                max_crawl_delay: Duration::from_secs_f64(config.fetcher_max_crawl_delay),
                max_crawl_delay_force: config.fetcher_max_crawl_delay_force,
                server_delay_force: config.fetcher_server_delay_force,
                max_retry_after: Duration::from_secs_f64(config.fetcher_max_retry_after),
                max_fetches_per_second: std::num::NonZeroU32::new(
                    config.fetcher_max_fetches_per_second,
                ),
                // Half the shutdown deadline for fetches in progress; the rest drains and writes.
                stop_grace: Duration::from_secs_f64(config.topology_shutdown_timeout / 2.0),
            },
        )
        .observed_by(Arc::clone(&observer));
        let parser = ParserBolt::new(
            ParserSettings {
                emit_outlinks: config.parser_emit_outlinks,
                max_outlinks: usize::try_from(config.parser_emit_outlinks_max_per_page).ok(),
                redirections_allowed: config.redirections_allowed,
                partition_mode: config.partition_url_mode,
                transfer_keys: config.metadata_transfer.clone(),
                track_path: config.metadata_track_path,
                track_depth: config.metadata_track_depth,
                sitemaps: config.sitemap_discovery,
                max_text_bytes: config.parser_text_max_bytes,
            },
            filters.clone(),
            self.parse_filters,
        );
        let mut persist_keys = config.metadata_persist.clone();
        persist_keys.extend(config.metadata_transfer.iter().cloned());
        let updater_settings = StatusUpdaterSettings {
            batch_size: config.status_updater_batch_size,
            flush_interval: Duration::from_secs_f64(config.status_updater_flush_interval),
            max_fetch_errors: config.max_fetch_errors,
            persist_keys,
            scheduler: Arc::clone(&scheduler),
        };
        let runner_settings = RunnerSettings {
            min_delay: Duration::from_millis(config.spout_min_delay_queries),
            max_delay: Duration::from_millis(config.spout_max_delay_queries),
            purgatory_ttl: Duration::from_secs_f64(config.spout_ttl_purgatory),
            max_pending: config.topology_max_spout_pending,
            idle_after_empty_queries: 2,
        };
        Ok(Crawler::new(super::run::Parts {
            shutdown_timeout: Duration::from_secs_f64(config.topology_shutdown_timeout),
            config,
            spout,
            store,
            fetcher,
            parser,
            updater_settings,
            runner_settings,
            observer,
            stats,
            seed_filters: SeedFilters {
                normalizer,
                filters,
            },
            scheduler,
        }))
    }
}
