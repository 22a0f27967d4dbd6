//! Politeness, checked from the fetch records of a real crawl over 50 hosts on loopback: one fetch at a
//! time per host, and never less than `fetcher.server.delay` between the end of one fetch and the start
//! of the next. (The crawl's rate against hosts/delay is a measurement: `cargo bench --bench politeness`.)

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeDelta, Utc};
use squall::config::ConfigBuilder;
use squall::frontier::{EmbeddedFrontier, QueryLimits};
use squall::message::{CrawlEvent, CrawlObserver};
use squall::topology::{CrawlerBuilder, RunLimits, StopReason};
use squall_testsite::{Site, SiteSpec};

/// When one fetch started and finished.
type Span = (DateTime<Utc>, DateTime<Utc>);

#[derive(Default)]
struct Fetches(Mutex<Vec<(String, Span)>>);

impl CrawlObserver for Fetches {
    fn on_event(&self, event: &CrawlEvent) {
        if let CrawlEvent::Processed {
            key,
            fetch: Some(fetch),
            ..
        } = event
            && let Ok(mut fetches) = self.0.lock()
        {
            fetches.push((key.clone(), (fetch.started, fetch.finished)));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_host_is_fetched_twice_at_once_or_sooner_than_the_delay() {
    let spec = SiteSpec {
        hosts: 50,
        pages_per_host: 6,
        ..SiteSpec::default()
    };
    let site = Site::start(spec).await.expect("site");
    let delay = 0.5;
    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-test")
        .and_then(|b| b.set(&format!("fetcher.server.delay={delay}")))
        .and_then(|b| b.set("spout.min.delay.queries=100"))
        .and_then(|b| b.set(&SiteSpec::exclude_outside_hosts()))
        .and_then(|b| b.build())
        .expect("config");
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = EmbeddedFrontier::open(dir.path()).expect("frontier");
    let fetches = Arc::new(Fetches::default());
    let mut builder = CrawlerBuilder::new(config)
        .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
        .observer(fetches.clone());
    for host in site.host_names() {
        builder = builder.resolve(host, site.addr());
    }
    let crawler = builder.build().expect("crawler");
    let reachable = site.expected().reachable_in_scope_urls();
    crawler.inject(reachable.iter().map(String::as_str)).await;
    let summary = crawler
        .run(RunLimits {
            until_idle: true,
            ..RunLimits::default()
        })
        .await;
    assert_eq!(summary.stop_reason, StopReason::Idle);

    let fetches = fetches.0.lock().expect("fetches").clone();
    assert_eq!(fetches.len(), reachable.len());
    let mut by_host: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for (key, span) in fetches {
        by_host.entry(key).or_default().push(span);
    }
    assert_eq!(by_host.len(), 50);
    let min_gap = TimeDelta::milliseconds((delay * 1000.0) as i64);
    for (host, mut times) in by_host {
        times.sort();
        for pair in times.windows(2) {
            let (_, end) = pair[0];
            let (next_start, _) = pair[1];
            assert!(next_start >= end, "{host}: two fetches overlap: {pair:?}");
            assert!(
                next_start - end >= min_gap,
                "{host}: only {:?} between two fetches",
                next_start - end
            );
        }
    }
    site.shutdown().await;
}
