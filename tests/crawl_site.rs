//! End-to-end crawls of the generated multi-host site on loopback, with the embedded frontier.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use squall::topology::StopReason;
use squall_testsite::{Site, SiteSpec};
use support::crawler::{self, FetchRecorder, expected_status};

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

    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.02",
        "spout.min.delay.queries=100",
        &SiteSpec::exclude_outside_hosts(),
    ]);
    let (builder, frontier, _dir) = crawler::embedded(config);
    let log = Arc::new(FetchRecorder::default());
    let crawler = crawler::resolve_site(builder.observer(log.clone()), &site)
        .build()
        .expect("crawler");
    let seeds = site.seeds();
    let report = crawler.inject(seeds.iter().map(String::as_str)).await;
    assert_eq!(report.accepted, seeds.len(), "{:?}", report.rejected);

    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(300))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    assert!(summary.clean_shutdown);

    // The server's view: every reachable in-scope URL requested exactly once, nothing else.
    let problems = expectation.check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");

    // The fetch log's view: the same URLs, each fetched once.
    let mut fetched: BTreeMap<String, usize> = BTreeMap::new();
    for fetch in log.fetches() {
        assert!(fetch.http_status.is_some(), "{} had no answer", fetch.url);
        *fetched.entry(fetch.url).or_default() += 1;
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
