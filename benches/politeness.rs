//! Politeness from the fetch records of a crawl over 50 hosts with a 0.5 s delay.
//!
//! `cargo bench --bench politeness` prints JSON: overlapping fetches of one host (must be 0), the
//! smallest gap between two fetches of one host (must not be below the delay), and the crawl's rate
//! against the ideal hosts / delay, both while every host still had URLs (steady state) and over the
//! whole crawl. All URLs are injected as seeds, so that link discovery does not limit the rate.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use common::crawler::{self, FetchRecorder};
use common::{print_result, quick, seconds};
use squall::frontier::EmbeddedFrontier;
use squall::topology::CrawlerBuilder;
use squall_bench_schema::Run;
use squall_bench_schema::stages::Politeness;
use squall_testsite::{Site, SiteSpec};

/// When one fetch started and finished.
type Span = (DateTime<Utc>, DateTime<Utc>);

#[tokio::main]
async fn main() {
    let hosts = 50;
    let delay = 0.5;
    let spec = SiteSpec {
        hosts,
        pages_per_host: if quick() { 4 } else { 24 },
        ..SiteSpec::default()
    };
    let site = match Site::start(spec).await {
        Ok(site) => site,
        Err(e) => panic!("site: {e}"),
    };
    let config = crawler::config(&[
        "http.agent.name=squall-bench",
        &format!("fetcher.server.delay={delay}"),
        "spout.min.delay.queries=100",
        &SiteSpec::exclude_outside_hosts(),
    ]);
    let dir = std::env::temp_dir().join(format!("squall-politeness-{}", std::process::id()));
    let frontier = match EmbeddedFrontier::open(&dir) {
        Ok(frontier) => frontier,
        Err(e) => panic!("frontier: {e}"),
    };
    let fetches = Arc::new(FetchRecorder::default());
    let builder = CrawlerBuilder::new(config)
        .frontier(frontier.spout(crawler::TEST_QUERY_LIMITS), frontier.clone())
        .observer(fetches.clone());
    let crawler = match crawler::resolve_site(builder, &site).build() {
        Ok(crawler) => crawler,
        Err(e) => panic!("crawler: {e}"),
    };
    let urls = site.expected().reachable_in_scope_urls();
    crawler.inject(urls.iter().map(String::as_str)).await;
    let summary = crawler::run_until_idle(crawler, None).await;

    let fetches: Vec<(String, Span)> = fetches
        .fetches()
        .into_iter()
        .map(|f| (f.key, (f.started, f.finished)))
        .collect();
    let mut by_host: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for (key, span) in &fetches {
        by_host.entry(key.clone()).or_default().push(*span);
    }
    let mut overlaps = 0;
    let mut min_gap = f64::INFINITY;
    let mut host_last_start = Vec::new();
    for times in by_host.values_mut() {
        times.sort();
        for pair in times.windows(2) {
            let gap = seconds(pair[1].0 - pair[0].1);
            if gap < 0.0 {
                overlaps += 1;
            }
            min_gap = min_gap.min(gap);
        }
        if let Some(last) = times.last() {
            host_last_start.push(last.0);
        }
    }
    let first = fetches.iter().map(|f| f.1.0).min();
    let last = fetches.iter().map(|f| f.1.1).max();
    // Steady state: until the first host ran out of URLs, every host had work.
    let steady_end = host_last_start.iter().min().copied();
    let (overall, steady) = match (first, last, steady_end) {
        (Some(first), Some(last), Some(steady_end)) => {
            let overall = fetches.len() as f64 / seconds(last - first);
            let in_window = fetches.iter().filter(|f| f.1.0 < steady_end).count();
            (overall, in_window as f64 / seconds(steady_end - first))
        }
        _ => (0.0, 0.0),
    };
    let ideal = by_host.len() as f64 / delay;
    print_result(&Politeness {
        run: Run::named("politeness"),
        hosts: Some(by_host.len() as u64),
        fetches: Some(fetches.len() as u64),
        delay_seconds: Some(delay),
        overlapping_fetches: Some(overlaps),
        smallest_gap_seconds: Some(min_gap),
        ideal_pages_per_second: Some(ideal),
        steady_pages_per_second: Some(steady),
        steady_ratio_to_ideal: Some(steady / ideal),
        overall_pages_per_second: Some(overall),
        overall_ratio_to_ideal: Some(overall / ideal),
        summary: Some(summary.to_string()),
    });
    site.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
