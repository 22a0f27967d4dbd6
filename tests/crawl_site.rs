//! End-to-end crawls of the generated multi-host site on loopback, with the embedded frontier.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use squall::config::ConfigBuilder;
use squall::frontier::{EmbeddedFrontier, QueryLimits};
use squall::message::{CrawlEvent, CrawlObserver};
use squall::model::Status;
use squall::topology::{CrawlerBuilder, RunLimits, StopReason};
use squall_testsite::{ExpectedStatus, Site, SiteSpec};

/// Records every fetch attempt, like the crawl binary's fetch log.
#[derive(Default)]
struct FetchLog(Mutex<Vec<(String, Option<u16>)>>);

impl CrawlObserver for FetchLog {
    fn on_event(&self, event: &CrawlEvent) {
        let CrawlEvent::Processed {
            url,
            fetch: Some(fetch),
            ..
        } = event
        else {
            return;
        };
        if let Ok(mut log) = self.0.lock() {
            log.push((url.clone(), fetch.http_status));
        }
    }
}

fn expected_status(expected: ExpectedStatus) -> Status {
    match expected {
        ExpectedStatus::Fetched => Status::Fetched,
        ExpectedStatus::Redirection => Status::Redirection,
        ExpectedStatus::FetchError => Status::FetchError,
        ExpectedStatus::RobotsDenied => Status::Error,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_a_multi_host_site_fetching_each_reachable_page_once() {
    let site = Site::start(SiteSpec::default()).await.expect("site");
    let expectation = site.expected();
    let reachable = expectation.reachable_in_scope_urls();
    assert!(
        reachable.len() >= 1000,
        "the site is too small: {}",
        reachable.len()
    );
    assert!(expectation.in_scope_hosts().len() >= 20);

    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-test")
        .and_then(|b| b.set("fetcher.server.delay=0.02"))
        .and_then(|b| b.set("spout.min.delay.queries=100"))
        .and_then(|b| b.set(&SiteSpec::exclude_outside_hosts()))
        .and_then(|b| b.build())
        .expect("config");
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = EmbeddedFrontier::open(dir.path()).expect("frontier");
    let log = Arc::new(FetchLog::default());
    let mut builder = CrawlerBuilder::new(config)
        .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
        .observer(log.clone());
    for host in site.host_names() {
        builder = builder.resolve(host, site.addr());
    }
    let crawler = builder.build().expect("crawler");
    let seeds = site.seeds();
    let report = crawler.inject(seeds.iter().map(String::as_str)).await;
    assert_eq!(report.accepted, seeds.len(), "{:?}", report.rejected);

    let summary = crawler
        .run(RunLimits {
            until_idle: true,
            max_duration: Some(std::time::Duration::from_secs(300)),
            ..RunLimits::default()
        })
        .await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    assert!(summary.clean_shutdown);

    // The server's view: every reachable in-scope URL requested exactly once, nothing else.
    let problems = expectation.check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");

    // The fetch log's view: the same URLs, each fetched once.
    let log = log.0.lock().expect("log").clone();
    let mut fetched: BTreeMap<String, usize> = BTreeMap::new();
    for (url, status) in &log {
        assert!(status.is_some(), "{url} had no answer");
        *fetched.entry(url.clone()).or_default() += 1;
    }
    let twice: Vec<&String> = fetched
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(u, _)| u)
        .collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    let fetched: BTreeSet<String> = fetched.into_keys().collect();
    assert_eq!(fetched, reachable);

    // The frontier's view: each URL ends with the status the site serves it with.
    let mut wrong = Vec::new();
    for (url, expected) in expectation.statuses() {
        let stored = frontier.lookup(url).expect("lookup").map(|s| s.status);
        if stored != Some(expected_status(*expected)) {
            wrong.push(format!("{url}: stored {stored:?}, expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(summary.pages as usize, reachable.len());
    site.shutdown().await;
}
