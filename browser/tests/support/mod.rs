//! Crawls of the JavaScript test application with real Chromium: the configuration, the crawler
//! with the browser protocol registered for `http`, and what the crawl saw.
#![allow(dead_code)]

#[path = "../../../tests/support/crawler.rs"]
pub mod crawler;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use squall::config::CrawlConfig;
use squall::frontier::EmbeddedFrontier;
use squall::message::{CrawlEvent, CrawlObserver};
use squall::parse::{ParseFilter, ParseResult};
use squall::topology::Crawler;
use squall_browser::{BrowserConfig, BrowserProtocol};
use squall_testsite::app::AppSite;
use url::Url;

use crawler::FetchRecorder;

/// Chromium resolves the test hosts to loopback and nothing else at all.
pub const HOST_RULES: &str = "browser.host.rules='MAP *.test 127.0.0.1, MAP * ~NOTFOUND'";

/// Fails with what to install when no Chromium is on the machine: these tests need the real one.
pub fn require_chromium() {
    if let Ok(filter) = std::env::var("SQUALL_TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_test_writer()
            .try_init();
    }
    assert!(
        squall_browser::find_on_path().is_some(),
        "these tests need Chromium on PATH (Debian: apt-get install chromium)"
    );
}

/// A configuration rendering every `http` URL, with the "more" button clicked, plus `extra`.
pub fn config(extra: &[&str]) -> CrawlConfig {
    let mut settings = vec![
        "http.agent.name=squall-test",
        "protocol.schemes={http: browser}",
        "browser.paging.click='#more'",
        "browser.settle.idle=0.3",
        HOST_RULES,
        "fetcher.server.delay=0.2",
        "spout.min.delay.queries=50",
    ];
    settings.extend_from_slice(extra);
    crawler::config(&settings)
}

/// The page bodies the parser saw, by URL.
#[derive(Default)]
pub struct Bodies(Mutex<BTreeMap<String, String>>);

impl Bodies {
    /// The body parsed for `url`.
    pub fn get(&self, url: &str) -> Option<String> {
        self.0.lock().ok()?.get(url).cloned()
    }
}

/// Records each parsed body in its [`Bodies`].
pub struct BodyFilter(pub Arc<Bodies>);

impl ParseFilter for BodyFilter {
    fn filter(&self, url: &Url, body: &[u8], _parse: &mut ParseResult) {
        if let Ok(mut bodies) = self.0.0.lock() {
            bodies.insert(url.to_string(), String::from_utf8_lossy(body).into_owned());
        }
    }
}

/// Every fetch attempt (`url`, `error`), including those abandoned and failed back unprocessed.
#[derive(Default)]
pub struct Attempts(Mutex<Vec<(String, Option<String>)>>);

impl Attempts {
    /// The attempts so far.
    pub fn all(&self) -> Vec<(String, Option<String>)> {
        self.0.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl CrawlObserver for Attempts {
    fn on_event(&self, event: &CrawlEvent) {
        if let CrawlEvent::Fetched { url, fetch, .. } = event
            && let Ok(mut attempts) = self.0.lock()
        {
            attempts.push((url.clone(), fetch.error.clone()));
        }
    }
}

/// A crawl of `site` under way, and what it records.
pub struct AppCrawl {
    /// The crawler, to run.
    pub crawler: Crawler,
    /// The frontier, to look statuses up.
    pub frontier: EmbeddedFrontier,
    /// The browser protocol, when it renders.
    pub browser: Option<Arc<BrowserProtocol>>,
    /// Every fetch attempt of a processed URL.
    pub fetches: Arc<FetchRecorder>,
    /// Every parsed body.
    pub bodies: Arc<Bodies>,
    /// Every fetch attempt.
    pub attempts: Arc<Attempts>,
    _dir: tempfile::TempDir,
}

/// A crawler of `site` seeded with its home pages; with `render`, the browser protocol is
/// registered and started (else `protocol.schemes` must leave `http` to HTTP).
pub async fn app_crawl(site: &AppSite, config: CrawlConfig, render: bool) -> AppCrawl {
    let (mut builder, frontier, dir) = crawler::embedded(config.clone());
    let fetches = Arc::new(FetchRecorder::default());
    let bodies = Arc::new(Bodies::default());
    let attempts = Arc::new(Attempts::default());
    builder = crawler::resolve_hosts(builder, site.host_names(), site.addr())
        .observer(fetches.clone())
        .observer(attempts.clone())
        .parse_filter(BodyFilter(bodies.clone()));
    let browser = if render {
        require_chromium();
        let settings = BrowserConfig::from_config(&config).expect("browser settings");
        let browser = Arc::new(BrowserProtocol::start(settings).await.expect("browser"));
        builder = builder.named_protocol("browser", browser.clone());
        Some(browser)
    } else {
        None
    };
    let crawler = builder.build().expect("crawler");
    let seeds = site.seeds();
    crawler.inject(seeds.iter().map(String::as_str)).await;
    AppCrawl {
        crawler,
        frontier,
        browser,
        fetches,
        bodies,
        attempts,
        _dir: dir,
    }
}
