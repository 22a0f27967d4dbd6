//! Assembling a crawler: configuration, frontier, filters and hooks.

use std::net::SocketAddr;
use std::sync::Arc;

use super::error::BuildError;
use super::run::Crawler;
use super::seeds::SeedFilters;
use super::stages;
use crate::config::CrawlConfig;
use crate::fetch::{FetcherBolt, Partitioner};
use crate::filter::{BasicUrlFilter, FilterChain, UrlFilter};
use crate::filter_files::Locator;
use crate::frontier::{Spout, StatusStore};
use crate::index::{ContentIndexer, ContentStore};
use crate::live::LiveCrawl;
use crate::message::{CrawlObserver, CrawlStats, Observers, PageSink};
use crate::parse::{ParseFilter, ParserBolt};
use crate::protocol::Protocol;
use crate::schedule::Scheduler;

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
/// let summary = crawler.run(RunLimits::until_idle()).await;
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
    page_sinks: Vec<Arc<dyn PageSink>>,
    resolve: Vec<(String, SocketAddr)>,
    protocols: Vec<(String, Arc<dyn Protocol>)>,
    named_protocols: Vec<(String, Arc<dyn Protocol>)>,
    content_store: Option<Arc<dyn ContentStore>>,
    live: Option<LiveCrawl>,
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
            page_sinks: Vec::new(),
            resolve: Vec::new(),
            protocols: Vec::new(),
            named_protocols: Vec::new(),
            content_store: None,
            live: None,
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

    /// Adds a URL filter after the configured ones (normalizer, schemes, scope, regex, depth, then
    /// those of `urlfilters.config.file`).
    pub fn url_filter(mut self, filter: impl UrlFilter + 'static) -> Self {
        self.url_filters.push(Arc::new(filter));
        self
    }

    /// Adds a parse filter, after the one the `parsefilter.css` and `parsefilter.xpath` keys
    /// configure ([`ExtractFilter`](crate::parse::ExtractFilter)) and those of the
    /// `jsoup.filters.config.file` and `parsefilters.config.file`.
    pub fn parse_filter(mut self, filter: impl ParseFilter + 'static) -> Self {
        self.parse_filters.push(Arc::new(filter));
        self
    }

    /// Replaces the scheduler built from the configuration's `fetchInterval.*` keys.
    pub fn scheduler(mut self, scheduler: impl Scheduler + 'static) -> Self {
        self.scheduler = Some(Arc::new(scheduler));
        self
    }

    /// Adds a sink that sees each page once the topology is done with it: what the parser found
    /// and its final status together ([`PageSink`], which says in what order a URL's hooks run).
    pub fn page_sink(mut self, sink: impl PageSink + 'static) -> Self {
        self.page_sinks.push(Arc::new(sink));
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

    /// Registers `protocol` under `name`, for `protocol.schemes` to choose (e.g. `https: browser`).
    pub fn named_protocol(mut self, name: impl Into<String>, protocol: Arc<dyn Protocol>) -> Self {
        self.named_protocols.push((name.into(), protocol));
        self
    }

    /// Indexes every parsed page in `store` (whatever `indexer.kind` says): the store of
    /// `indexer.kind: opensearch` comes from `squall_engine::indexer::open`.
    pub fn content_store(mut self, store: Arc<dyn ContentStore>) -> Self {
        self.content_store = Some(store);
        self
    }

    /// Shows the crawl in `view` (a status page's data): its observer sees every event, the
    /// fetcher publishes its queues on its board, and it follows the spout runner's state.
    pub fn live(mut self, view: &LiveCrawl) -> Self {
        self.observers.push(view.observer());
        self.live = Some(view.clone());
        self
    }

    /// Validates everything and builds the crawler.
    pub fn build(self) -> Result<Crawler, BuildError> {
        let config = self.config;
        config.validate()?;
        warn_ignored_keys(&config.ignored_keys);
        let locator = Locator::new(config.config_dirs.clone());
        let content_store = stages::content_store(&config, self.content_store)?;
        let indexing = content_store.is_some();
        let parse_filters =
            stages::parse_filters(&config.parser, &locator, self.parse_filters, indexing)?;
        let (spout, store) = match (self.spout, self.store) {
            (Some(spout), Some(store)) => (spout, store),
            (None, None) => stages::configured_frontier(&config)?,
            _ => return Err(BuildError::HalfFrontier),
        };
        let scheduler: Arc<dyn Scheduler> = match self.scheduler {
            Some(scheduler) => scheduler,
            None => Arc::new(config.scheduler()?),
        };
        let (normalizer, filters) =
            stages::url_filters(&config.filters, &locator, self.url_filters)?;
        // Over-long URLs (`urlfilter.max.length`) are dropped before any other filter reads them.
        let filters = FilterChain::new()
            .with(BasicUrlFilter::new(None, config.filters.max_length))
            .with(filters);
        let http_context = stages::http_context(&config, self.resolve);
        let (http, archive) = stages::http_client(&config, &http_context)?;
        let partitioner = Partitioner::new(config.fetcher.partition, http.host_resolver());
        let robots = stages::robots_cache(&config, &http_context)?;
        let stats = Arc::new(CrawlStats::default());
        let mut observers = self.observers;
        observers.push(stats.clone());
        let observer: Arc<dyn CrawlObserver> = Arc::new(observers);
        let mut named = self.named_protocols;
        named.insert(0, ("http".to_string(), Arc::new(http)));
        let mut protocols = stages::protocols(&config.protocols, named)?;
        protocols.extend(self.protocols);
        let mut fetcher = FetcherBolt::new(protocols, robots, config.fetcher.clone())
            .observed_by(Arc::clone(&observer))
            .queued_by(partitioner.clone());
        if let Some(view) = &self.live {
            fetcher = fetcher.published_on(view.queue_board());
        }
        let indexer = content_store
            .map(|store| ContentIndexer::new(store, config.indexer.clone(), Arc::clone(&observer)));
        let parser = ParserBolt::new(
            stages::parser_settings(&config, indexing),
            filters.clone(),
            parse_filters,
        );
        let crawler = Crawler::new(super::run::Parts {
            updater_context: stages::updater_context(
                &config,
                Arc::clone(&scheduler),
                partitioner.clone(),
            ),
            config,
            spout,
            store,
            fetcher,
            parser,
            indexer,
            observer,
            page_sinks: self.page_sinks,
            stats,
            seed_filters: SeedFilters {
                normalizer,
                filters,
                partitioner,
            },
            scheduler,
            archive,
        });
        if let Some(view) = &self.live {
            view.watch_runner(crawler.state());
        }
        Ok(crawler)
    }
}

/// Names, in one warning, the StormCrawler keys the configuration set that squall does not
/// implement (each with why), so that a StormCrawler user sees what their files do not do here.
fn warn_ignored_keys(keys: &[String]) {
    if keys.is_empty() {
        return;
    }
    let list: Vec<String> = keys
        .iter()
        .map(|key| match crate::config::ignored_reason(key) {
            Some(why) => format!("{key} ({why})"),
            None => key.clone(),
        })
        .collect();
    tracing::warn!(
        "{} StormCrawler key(s) are not implemented by squall and are ignored: {}",
        keys.len(),
        list.join(", ")
    );
}
