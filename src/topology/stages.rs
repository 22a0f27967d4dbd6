//! Each stage's settings, from its section of the configuration.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::config::{CrawlConfig, FilterConfig, SpoutConfig};
use crate::fetch::{FetcherSettings, HttpClientError, HttpSettings, RobotsCache};
use crate::filter::{
    BasicNormalizer, DepthFilter, FilterChain, FilterError, RegexFilter, SchemeFilter, ScopeFilter,
    UrlFilter,
};
use crate::parse::ParserSettings;
use crate::schedule::Scheduler;
use crate::spout::RunnerSettings;
use crate::status::StatusUpdaterSettings;

/// The URL filter chain: the normalizer, then schemes, scope, regular expressions and depth, then
/// the user's own filters. The normalizer is returned too, for seeds.
pub(super) fn url_filters(
    config: &FilterConfig,
    extra: Vec<Arc<dyn UrlFilter>>,
) -> Result<(Arc<BasicNormalizer>, FilterChain), FilterError> {
    let mut normalizer = BasicNormalizer::new();
    if !config.remove_query_params.is_empty() {
        normalizer = normalizer.remove_query_params(config.remove_query_params.clone());
    }
    let normalizer = Arc::new(normalizer);
    let mut filters = FilterChain::new();
    filters.push(normalizer.clone());
    filters.push(Arc::new(SchemeFilter::new(config.schemes.clone())));
    filters.push(Arc::new(ScopeFilter::new(
        config.ignore_outside_host,
        config.ignore_outside_domain,
    )));
    if !config.include.is_empty() || !config.exclude.is_empty() {
        filters.push(Arc::new(RegexFilter::new(
            &config.include,
            &config.exclude,
        )?));
    }
    filters.push(Arc::new(DepthFilter::new(config.max_depth)));
    for filter in extra {
        filters.push(filter);
    }
    Ok((normalizer, filters))
}

/// The HTTP client's settings; `resolve` pins host names to addresses.
pub(super) fn http_settings(
    config: &CrawlConfig,
    resolve: Vec<(String, SocketAddr)>,
) -> HttpSettings {
    let http = &config.http;
    HttpSettings {
        user_agent: config.user_agent(),
        timeout: http.timeout,
        connect_timeout: http.connect_timeout,
        content_limit: http.content_limit,
        resolve,
        follow_redirects: http.allow_redirects,
        max_redirects: http.max_redirects,
        refuse_private_addresses: http.refuse_private_addresses,
        dns_cache_ttl: http.dns_cache_ttl,
    }
}

/// The robots.txt cache, unless robots.txt is skipped.
pub(super) fn robots_cache(
    config: &CrawlConfig,
    http: &HttpSettings,
) -> Result<Option<RobotsCache>, HttpClientError> {
    if config.robots.skip {
        return Ok(None);
    }
    RobotsCache::new(
        http,
        &config.agent.name,
        config.robots.cache_ttl,
        config.robots.error_cache_ttl,
    )
    .map(Some)
}

/// The fetcher's settings.
pub(super) fn fetcher_settings(config: &CrawlConfig) -> FetcherSettings {
    let fetcher = &config.fetcher;
    FetcherSettings {
        server_delay: fetcher.server_delay,
        min_delay: fetcher.server_min_delay,
        threads_per_queue: fetcher.threads_per_queue,
        threads_total: fetcher.threads_number,
        max_queued: fetcher.max_urls_in_queues,
        max_crawl_delay: fetcher.max_crawl_delay,
        max_crawl_delay_force: fetcher.max_crawl_delay_force,
        server_delay_force: fetcher.server_delay_force,
        max_retry_after: fetcher.max_retry_after,
        max_fetches_per_second: fetcher.max_fetches_per_second,
        // Half the shutdown deadline for fetches in progress; the rest drains and writes.
        stop_grace: config.topology.shutdown_timeout / 2,
    }
}

/// The parser's settings.
pub(super) fn parser_settings(config: &CrawlConfig) -> ParserSettings {
    let parser = &config.parser;
    ParserSettings {
        emit_outlinks: parser.emit_outlinks,
        max_outlinks: parser.max_outlinks_per_page,
        redirections_allowed: parser.redirections_allowed,
        partition_mode: config.partition,
        transfer_keys: config.metadata.transfer.clone(),
        track_path: config.metadata.track_path,
        track_depth: config.metadata.track_depth,
        sitemaps: parser.sitemap_discovery,
        max_text_bytes: parser.text_max_bytes,
    }
}

/// The status updater's settings: transferred metadata is persisted too.
pub(super) fn updater_settings(
    config: &CrawlConfig,
    scheduler: Arc<dyn Scheduler>,
) -> StatusUpdaterSettings {
    let mut persist_keys = config.metadata.persist.clone();
    persist_keys.extend(config.metadata.transfer.iter().cloned());
    StatusUpdaterSettings {
        batch_size: config.status.batch_size,
        flush_interval: config.status.flush_interval,
        max_fetch_errors: config.schedule.max_fetch_errors,
        persist_keys,
        scheduler,
    }
}

/// The spout runner's settings.
pub(super) fn runner_settings(config: &SpoutConfig) -> RunnerSettings {
    RunnerSettings {
        min_delay: config.min_delay_queries,
        max_delay: config.max_delay_queries,
        purgatory_ttl: config.ttl_purgatory,
        max_pending: config.max_pending,
        idle_after_empty_queries: 2,
    }
}
