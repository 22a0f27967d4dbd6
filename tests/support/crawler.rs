//! In-process crawls of a test site on loopback: the configuration from `key=value` settings, the
//! crawler resolving the site's host names, a run until idle, an observer recording every fetch
//! attempt, and the status squall stores for what the site expects. Shared by the root tests, the
//! benchmarks (`benches/common`, through `#[path]`), and the spouts and browser crates' tests
//! (`engine/tests/support`, `browser/tests/support`, through `#[path]`).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use squall::config::{ConfigBuilder, CrawlConfig};
use squall::frontier::{EmbeddedFrontier, QueryLimits};
use squall::message::{CrawlEvent, CrawlObserver};
use squall::model::Status;
use squall::topology::{CrawlSummary, Crawler, CrawlerBuilder, RunLimits};
use squall_testsite::{ExpectedStatus, Site, SiteSpec};

/// Starts the generated site with `hosts` in-scope hosts of `pages_per_host` pages each, the rest
/// as by default.
pub async fn start_site(hosts: usize, pages_per_host: usize) -> Site {
    let spec = SiteSpec {
        hosts,
        pages_per_host,
        ..SiteSpec::default()
    };
    match Site::start(spec).await {
        Ok(site) => site,
        Err(e) => panic!("site: {e}"),
    }
}

/// The spout's query limits of the tests' crawlers: a hundred queues and ten URLs a queue a query
/// (the keys' defaults are 1,000 and 2), so that the small test sites take few queries.
pub const TEST_QUERY_LIMITS: QueryLimits = QueryLimits {
    max_buckets: 100,
    max_urls_per_bucket: 10,
};

/// A crawl configuration from `key=value` settings, applied in order.
pub fn config(settings: &[&str]) -> CrawlConfig {
    let mut builder = ConfigBuilder::new();
    for setting in settings {
        builder = match builder.set(setting) {
            Ok(builder) => builder,
            Err(e) => panic!("config {setting:?}: {e}"),
        };
    }
    match builder.build() {
        Ok(config) => config,
        Err(e) => panic!("config: {e}"),
    }
}

/// A crawler builder for `config` on a fresh embedded frontier (its spout with the default query
/// limits) in a temporary directory, which lives as long as the returned `TempDir`.
pub fn embedded(config: CrawlConfig) -> (CrawlerBuilder, EmbeddedFrontier, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (builder, frontier) = embedded_in(config, dir.path());
    (builder, frontier, dir)
}

/// A crawler builder for `config` on the embedded frontier in `dir`, opened (made if new) with
/// whatever an earlier crawl left there.
pub fn embedded_in(
    config: CrawlConfig,
    dir: &std::path::Path,
) -> (CrawlerBuilder, EmbeddedFrontier) {
    let frontier = EmbeddedFrontier::open(dir).expect("frontier");
    let builder =
        CrawlerBuilder::new(config).frontier(frontier.spout(TEST_QUERY_LIMITS), frontier.clone());
    (builder, frontier)
}

/// `builder` with every host name of `site` resolved to the site's loopback address.
pub fn resolve_site(builder: CrawlerBuilder, site: &Site) -> CrawlerBuilder {
    resolve_hosts(builder, site.host_names(), site.addr())
}

/// `builder` with each of `hosts` resolved to `addr`.
pub fn resolve_hosts(
    mut builder: CrawlerBuilder,
    hosts: Vec<String>,
    addr: SocketAddr,
) -> CrawlerBuilder {
    for host in hosts {
        builder = builder.resolve(host, addr);
    }
    builder
}

/// Runs `crawler` until its frontier is idle, for at most `max_duration` when given.
pub async fn run_until_idle(crawler: Crawler, max_duration: Option<Duration>) -> CrawlSummary {
    crawler
        .run(RunLimits::until_idle().with_max_duration(max_duration))
        .await
}

/// One fetch attempt of a processed URL.
#[derive(Debug, Clone)]
pub struct Fetch {
    /// The URL.
    pub url: String,
    /// Its partition key (the host).
    pub key: String,
    /// The HTTP status, when the server answered.
    pub http_status: Option<u16>,
    /// When the fetch started.
    pub started: DateTime<Utc>,
    /// When it finished.
    pub finished: DateTime<Utc>,
    /// What fetched it (`http`, `browser`).
    pub protocol: &'static str,
}

/// Records the fetch attempt of every processed URL that had one, like the crawl binary's fetch log.
#[derive(Default)]
pub struct FetchRecorder(Mutex<Vec<Fetch>>);

impl FetchRecorder {
    /// The fetches recorded so far, in the order their URLs were processed.
    pub fn fetches(&self) -> Vec<Fetch> {
        self.0.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

impl CrawlObserver for FetchRecorder {
    fn on_event(&self, event: &CrawlEvent) {
        if let CrawlEvent::Processed {
            url,
            key,
            fetch: Some(fetch),
            ..
        } = event
            && let Ok(mut fetches) = self.0.lock()
        {
            fetches.push(Fetch {
                url: url.clone(),
                key: key.clone(),
                http_status: fetch.http_status,
                started: fetch.started,
                finished: fetch.finished,
                protocol: fetch.protocol,
            });
        }
    }
}

/// The status squall stores for a URL the site serves as `expected`.
pub fn expected_status(expected: ExpectedStatus) -> Status {
    match expected {
        ExpectedStatus::Fetched => Status::Fetched,
        ExpectedStatus::Redirection => Status::Redirection,
        ExpectedStatus::FetchError => Status::FetchError,
        ExpectedStatus::RobotsDenied => Status::Error,
    }
}
