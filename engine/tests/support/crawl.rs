//! A crawl of the local multi-host site on one status-index spout, checked against the site.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use squall::frontier::StatusStore;
use squall::topology::StopReason;
use squall_engine::client::EsClient;
use squall_testsite::SiteSpec;

use super::Kind;
use super::crawler::{self, FetchRecorder};

/// Crawls a site of eight hosts with a spout of `kind` over a fresh status index (4 shards,
/// `replicas` replicas) until idle, and checks that every reachable page was fetched once and every
/// URL ends with the status the site serves it with.
pub async fn crawl_site(client: &EsClient, kind: Kind, replicas: u32) {
    let index = super::status_index_with(client, "crawl", 4, replicas).await;
    let site = crawler::start_site(8, 15).await;
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.05",
        "spout.min.delay.queries=200",
        &SiteSpec::exclude_outside_hosts(),
        "status.updater.flush.interval=0.2",
    ]);
    let fetched = Arc::new(FetchRecorder::default());
    let (builder, store) = super::crawler_on(config, kind, client, &index);
    let crawler = crawler::resolve_site(builder.observer(fetched.clone()), &site)
        .build()
        .expect("crawler");
    let seeds = site.seeds();
    let report = crawler.inject(seeds.iter().map(String::as_str)).await;
    assert_eq!(report.accepted, seeds.len());
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(240))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{kind:?}: {summary}");

    let expectation = site.expected();
    let problems = expectation.check_requests(&site.requests());
    assert!(problems.is_empty(), "{kind:?}: {problems:#?}");
    // URLs whose fetch the server answered, in the order they were processed.
    let fetched: Vec<String> = fetched
        .fetches()
        .into_iter()
        .filter(|f| f.http_status.is_some())
        .map(|f| f.url)
        .collect();
    let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
    for url in &fetched {
        *counts.entry(url).or_default() += 1;
    }
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "{kind:?} fetched more than once: {twice:?}"
    );
    let fetched: BTreeSet<String> = fetched.into_iter().collect();
    assert_eq!(fetched, expectation.reachable_in_scope_urls(), "{kind:?}");

    // Every URL's final status is in the index.
    store.flush().await.expect("refresh");
    let wrong = super::wrong_statuses(client, &index, &expectation).await;
    assert!(wrong.is_empty(), "{kind:?}: {wrong:#?}");
    site.shutdown().await;
    super::delete_index(client, &index).await;
}
