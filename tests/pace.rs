//! Each `fetcher.pace.policy` against hosts that push back, on the capacity site (hosts of a
//! hidden capacity that refuse beyond it): `fixed` keeps asking at the configured delay and is
//! refused; `adaptive` backs off and is refused far less for as many pages; `block` stops asking a
//! host for the block; no policy asks inside a Retry-After window; a crawl started again on its
//! frontier starts each host at the pace it learned. Judged from the site's log.

use crate::support;
use std::time::Duration;

use squall_testsite::capacity::{
    CapacityRecord, CapacitySite, CapacitySpec, HostCapacity, OverCapacity, judge, over_pace,
    paces_before,
};
use support::crawler;

/// Hosts refusing with a bare 429 or 503 (no Retry-After), two of each.
const BARE: [OverCapacity; 4] = [
    OverCapacity::TooMany,
    OverCapacity::Unavailable,
    OverCapacity::TooMany,
    OverCapacity::Unavailable,
];

/// Four hosts of 0.5 requests/s, each refusing as its kind says, 5 ms a page.
fn slow_hosts(kinds: [OverCapacity; 4]) -> CapacitySpec {
    let hosts = kinds
        .into_iter()
        .enumerate()
        .map(|(i, over)| HostCapacity {
            name: format!("cap-00{i}.test"),
            rate: 0.5,
            burst: 1.0,
            unloaded: Duration::from_millis(5),
            growth: 2.0,
            knee: 0.8,
            spread: 1.0,
            over,
        })
        .collect();
    CapacitySpec {
        hosts,
        pages_per_host: 500,
        links_per_page: 4,
        seed: 59,
    }
}

/// Crawls `site` for `seconds` under `policy`, a fetch every 0.25 s a host (eight times what the
/// hosts take): the site's log of it.
async fn crawl(site: &CapacitySite, policy: &str, seconds: u64) -> Vec<CapacityRecord> {
    let dir = tempfile::tempdir().expect("temp dir");
    crawl_in(site, policy, seconds, dir.path()).await
}

/// [`crawl`] on the embedded frontier in `dir`, with what an earlier crawl left there.
async fn crawl_in(
    site: &CapacitySite,
    policy: &str,
    seconds: u64,
    dir: &std::path::Path,
) -> Vec<CapacityRecord> {
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.25",
        &format!("fetcher.pace.policy={policy}"),
        "spout.min.delay.queries=100",
    ]);
    let (builder, _frontier) = crawler::embedded_in(config, dir);
    let crawler = crawler::resolve_hosts(builder, site.host_names(), site.addr())
        .build()
        .expect("crawler");
    let started = site.records().len();
    // Enough URLs known on every host from the start that each may be asked at the delay.
    let urls: Vec<String> = site
        .host_names()
        .iter()
        .flat_map(|host| (0..200).map(move |n| (host.clone(), n)))
        .map(|(host, n)| site.url(&host, &format!("/p/{n}.html")))
        .collect();
    crawler.inject(urls.iter().map(String::as_str)).await;
    crawler::run_until_idle(crawler, Some(Duration::from_secs(seconds))).await;
    site.records().split_off(started)
}

/// Page requests answered 200, and refused, in `records` (robots.txt left out).
fn served_and_refused(records: &[CapacityRecord]) -> (usize, usize) {
    let pages = records.iter().filter(|r| !r.is_robots());
    let (refused, served): (Vec<_>, Vec<_>) = pages.partition(|r| r.over_capacity);
    let served = served.iter().filter(|r| r.request.status == 200).count();
    (served, refused.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_backs_off_where_fixed_keeps_being_refused() {
    let site = CapacitySite::start(slow_hosts(BARE)).await.expect("site");
    let fixed = served_and_refused(&crawl(&site, "fixed", 20).await);
    let adaptive = served_and_refused(&crawl(&site, "adaptive", 20).await);
    // Seen: fixed (40 served, 228 refused), adaptive (25, 16). Fixed takes what the hosts give
    // by asking eight times too often; adaptive spends its first seconds backing off (0.25 s to
    // 2 s, a refusal a step) and then is refused now and then as it probes.
    let ((fixed_served, fixed_refused), (served, refused)) = (fixed, adaptive);
    assert!(
        fixed_refused > 4 * fixed_served,
        "fixed at 8x the capacity: {fixed:?}"
    );
    assert!(
        refused * 5 < fixed_refused,
        "fixed {fixed:?}, adaptive {adaptive:?}"
    );
    assert!(
        served * 2 >= fixed_served,
        "pages still come: {fixed:?} {adaptive:?}"
    );
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_stops_asking_a_host_for_its_block_and_no_policy_asks_inside_retry_after() {
    let kinds = [
        OverCapacity::TooMany,
        OverCapacity::Unavailable,
        OverCapacity::TooManyRetryAfter(5),
        OverCapacity::UnavailableRetryAfter(5),
    ];
    let site = CapacitySite::start(slow_hosts(kinds)).await.expect("site");
    let window = |records: &[CapacityRecord]| {
        let first = records.first().map_or(site.started(), CapacityRecord::at);
        let last = records.last().map_or(first, CapacityRecord::at);
        (first, last + Duration::from_millis(1))
    };
    for policy in ["fixed", "adaptive", "block"] {
        let records = crawl(&site, policy, 12).await;
        let verdict = judge(&records, site.spec(), window(&records), Duration::ZERO);
        assert_eq!(
            verdict.figures.inside_retry_after, 0,
            "{policy}: {verdict:#?}"
        );
        if policy == "block" {
            // The first refusal of each bare host blocks it for a minute at least: none after it.
            for host in ["cap-000.test", "cap-001.test"] {
                let mine: Vec<&CapacityRecord> = records
                    .iter()
                    .filter(|r| r.request.host == host && !r.is_robots())
                    .collect();
                let first = mine.iter().position(|r| r.over_capacity);
                let after = first.map_or(0, |at| mine.len() - at - 1);
                assert_eq!(after, 0, "{host} asked again within its block: {mine:#?}");
            }
        }
    }
    site.shutdown().await;
}

/// A crawl stopped and started again on the frontier it left begins each host at the pace it had
/// learned (kept in the frontier's queue notes), not at the configured delay: in its first
/// seconds no host is asked more often than that pace allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_started_again_on_its_frontier_keeps_the_pace_it_learned() {
    let site = CapacitySite::start(slow_hosts(BARE)).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    crawl_in(&site, "adaptive", 20, dir.path()).await;
    let stopped = std::time::Instant::now();
    let learned = paces_before(&site.records(), stopped);
    // The hosts take 0.5 requests/s against a delay of 0.25 s: each backed off to 2 s or so.
    let floor = Duration::from_millis(250);
    assert_eq!(learned.len(), 4, "{learned:?}");
    assert!(
        learned.values().all(|pace| *pace >= 4 * floor),
        "every host backed off: {learned:?}"
    );

    let restarted = std::time::Instant::now();
    let span = Duration::from_secs(10);
    crawl_in(&site, "adaptive", span.as_secs(), dir.path()).await;
    // At the configured delay a host would be asked 40 times in those 10 s; at 2 s, 5 or 6.
    let problems = over_pace(&site.records(), (restarted, span), &learned);
    assert!(problems.is_empty(), "learned {learned:?}: {problems:#?}");
    site.shutdown().await;
}
