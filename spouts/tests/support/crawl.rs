//! A crawl of the local multi-host site on one status-index spout, checked against the site.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use squall::config::ConfigBuilder;
use squall::frontier::StatusStore;
use squall::message::{CrawlEvent, CrawlObserver};
use squall::topology::{CrawlerBuilder, RunLimits, StopReason};
use squall_spouts::client::EsClient;
use squall_testsite::{Site, SiteSpec};

use super::Kind;

#[derive(Default)]
struct Fetched(Mutex<Vec<String>>);

impl CrawlObserver for Fetched {
    fn on_event(&self, event: &CrawlEvent) {
        if let CrawlEvent::Processed {
            url,
            fetch: Some(fetch),
            ..
        } = event
            && fetch.http_status.is_some()
            && let Ok(mut fetched) = self.0.lock()
        {
            fetched.push(url.clone());
        }
    }
}

/// Crawls a site of eight hosts with a spout of `kind` over a fresh status index (4 shards,
/// `replicas` replicas) until idle, and checks that every reachable page was fetched once and every
/// URL ends with the status the site serves it with.
pub async fn crawl_site(client: &EsClient, kind: Kind, replicas: u32) {
    let index = super::status_index_with(client, "crawl", 4, replicas).await;
    let site = Site::start(SiteSpec {
        hosts: 8,
        pages_per_host: 15,
        ..SiteSpec::default()
    })
    .await
    .expect("site");
    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-test")
        .and_then(|b| b.set("fetcher.server.delay=0.05"))
        .and_then(|b| b.set("spout.min.delay.queries=200"))
        .and_then(|b| b.set(&SiteSpec::exclude_outside_hosts()))
        .and_then(|b| b.set("status.updater.flush.interval=0.2"))
        .and_then(|b| b.build())
        .expect("config");
    let fetched = Arc::new(Fetched::default());
    let store = super::store(client, &index);
    let mut builder = CrawlerBuilder::new(config)
        .spout(super::spout(kind, client, super::spout_settings(&index)))
        .status_store(Arc::new(store.clone()))
        .observer(fetched.clone());
    for host in site.host_names() {
        builder = builder.resolve(host, site.addr());
    }
    let crawler = builder.build().expect("crawler");
    let seeds = site.seeds();
    let report = crawler.inject(seeds.iter().map(String::as_str)).await;
    assert_eq!(report.accepted, seeds.len());
    let summary = crawler
        .run(RunLimits {
            until_idle: true,
            max_duration: Some(Duration::from_secs(240)),
            ..RunLimits::default()
        })
        .await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{kind:?}: {summary}");

    let expectation = site.expected();
    let problems = expectation.check_requests(&site.requests());
    assert!(problems.is_empty(), "{kind:?}: {problems:#?}");
    let fetched = fetched.0.lock().expect("fetched").clone();
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
