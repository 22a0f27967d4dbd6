//! Politeness, checked from the fetch records of a real crawl over 50 hosts on loopback: one fetch at a
//! time per host, and never less than `fetcher.server.delay` between the end of one fetch and the start
//! of the next. (The crawl's rate against hosts/delay is a measurement: `cargo bench --bench politeness`.)

use crate::support;
use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use squall::topology::StopReason;
use squall_testsite::{Site, SiteSpec};
use support::crawler::{self, FetchRecorder};

/// When one fetch started and finished.
type Span = (DateTime<Utc>, DateTime<Utc>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_host_is_fetched_twice_at_once_or_sooner_than_the_delay() {
    let spec = SiteSpec {
        hosts: 50,
        pages_per_host: 6,
        ..SiteSpec::default()
    };
    let site = Site::start(spec).await.expect("site");
    let delay = 0.5;
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        &format!("fetcher.server.delay={delay}"),
        "spout.min.delay.queries=100",
        &SiteSpec::exclude_outside_hosts(),
    ]);
    let (builder, _frontier, _dir) = crawler::embedded(config);
    let fetches = Arc::new(FetchRecorder::default());
    let crawler = crawler::resolve_site(builder.observer(fetches.clone()), &site)
        .build()
        .expect("crawler");
    let reachable = site.expected().reachable_in_scope_urls();
    crawler.inject(reachable.iter().map(String::as_str)).await;
    let summary = crawler::run_until_idle(crawler, None).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);

    let fetches = fetches.fetches();
    assert_eq!(fetches.len(), reachable.len());
    let mut by_host: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for fetch in fetches {
        by_host
            .entry(fetch.key)
            .or_default()
            .push((fetch.started, fetch.finished));
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
