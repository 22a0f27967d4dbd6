//! End to end: the whole topology (spout, fetcher, parser, status writes) crawling a site of many
//! hosts at a real politeness delay, on the embedded frontier and on the queue frontier, against
//! the politeness limit and the fetcher-alone rate on the same site.
//!
//! `cargo bench --bench end_to_end` serves a generated site of `E2E_HOSTS` host names on loopback
//! (2,000; the test site of `tests/site`, `E2E_PAGES` pages per host, 60; every home page a seed,
//! the rest found by following links) and crawls it with the example crawl binary
//! (`examples/crawl.rs`, a child process reached through `--resolve`) at a 1 s per-host delay, so
//! politeness allows hosts / 1 s = 2,000 pages/s. The settings are what a user crawling that many
//! hosts sets: every host's queue read per frontier query (`frontier.max.buckets` = hosts) and room
//! for four URLs per host in flight (`topology.max.spout.pending` and
//! `fetcher.max.urls.in.queues` = 4 × hosts); the rest are the defaults.
//!
//! Each crawl gets the same budget: once it has fetched its first page, a warm-up of `E2E_WARMUP`
//! seconds (20), then a window of `E2E_WINDOW` seconds (30) in which the benchmark reads the
//! crawler's Prometheus metrics (`--metrics-addr`) and its CPU time from /proc at both ends; then
//! it is stopped (SIGINT). From those: pages/s (`squall_fetch_total`), status writes/s
//! (`squall_status_writes_total`), CPU per page, peak RSS (`VmHWM`), and how busy each stage was
//! (seconds spent fetching, parsing and writing per second of window, the spout's URLs in flight
//! against its limit, the fetcher's queues and queued URLs) and where the machine's CPU went (the
//! crawler, the site served by this process, the rest: the engine), from which it names the stage
//! that limits the rate. The fetcher alone (the fetcher bolt in this process with politeness off, 50
//! fetches at once, fed the site's URLs) runs for the same window on the same site. The runs are
//! interleaved in mirrored order (fetcher, embedded, queue, aggregation, then the reverse, with two
//! runs, `RUNS`, default 2), each figure their median, after one unmeasured crawl of each engine
//! frontier (a node just started spends its first minute compiling). The aggregation spout crawls
//! the same site on a status index (StormCrawler's way). For each engine frontier the benchmark also
//! reads the node's statistics (`_nodes/stats`) at both ends of the window: its CPU time and the
//! operations of each kind (search, refresh, indexing, get, merge) per crawled page.
//!
//! The queue frontier lives in the engine at `SQUALL_BENCH_ES` (fresh urls and queues indices per
//! run, deleted after). The crawl binary is not built by `cargo bench`: build it first (`cargo build
//! --release --example crawl`; scripts/bench does), or name one with `SQUALL_BENCH_CRAWL_BIN`.
//! Settings (env, `SQUALL_BENCH_` prefix): `RUNS`, `E2E_HOSTS`, `E2E_PAGES`, `E2E_WARMUP`,
//! `E2E_WINDOW` (quick: 100 hosts, 10 pages, 3 s and 5 s, one run); for development, `E2E_ONLY`
//! (some of `fetcher,embedded,queue`) and `KEEP_LOGS=1` (keep each crawl's output). Prints JSON.

mod common;

#[path = "end_to_end/crawl.rs"]
mod crawl;
#[path = "end_to_end/engine_stats.rs"]
mod engine_stats;
#[path = "end_to_end/metrics.rs"]
mod metrics;

use std::time::Duration;

use common::fetch_driver::{fetcher_alone, site_urls};
use common::{Spread, env_or, quick, start_closed_site};
use crawl::{Budget, FrontierChoice, Run};
use serde_json::{Value, json};

/// The per-host delay, seconds.
const DELAY: f64 = 1.0;

/// Medians of one frontier's runs.
fn summary(runs: &[Run]) -> Value {
    let median = |f: fn(&Run) -> f64| Spread::of(&runs.iter().map(f).collect::<Vec<_>>()).json();
    json!({
        "pages_per_second": median(|r| r.pages_per_second),
        "status_writes_per_second": median(|r| r.status_writes_per_second),
        "status_writes_per_page": median(|r| r.status_writes_per_second / r.pages_per_second.max(1e-9)),
        "engine_cpu_ms_per_page": median(|r| r.engine_cpu_ms_per_page.unwrap_or(0.0)),
        "cpu_ms_per_page": median(|r| r.cpu_ms_per_page),
        "peak_rss_mib": median(|r| r.peak_rss_mib),
        "limiting_stages": runs.iter().map(|r| r.limit.clone()).collect::<Vec<_>>(),
        "runs": runs.iter().map(Run::json).collect::<Vec<_>>(),
    })
}

#[tokio::main]
async fn main() {
    let hosts: usize = env_or("E2E_HOSTS", if quick() { 100 } else { 2_000 });
    let pages: usize = env_or("E2E_PAGES", if quick() { 10 } else { 60 });
    let budget = Budget {
        warmup: Duration::from_secs_f64(env_or("E2E_WARMUP", if quick() { 3.0 } else { 20.0 })),
        window: Duration::from_secs_f64(env_or("E2E_WINDOW", if quick() { 5.0 } else { 30.0 })),
        hosts,
        delay: DELAY,
    };
    let site = start_closed_site(hosts, pages).await;
    let urls = site_urls(&site);
    eprintln!("site: {hosts} hosts, {} reachable URLs", urls.len());

    let mut fetcher = Vec::new();
    let mut embedded = Vec::new();
    let mut queue = Vec::new();
    let mut aggregation = Vec::new();
    // Which candidates run (`E2E_ONLY`, comma-separated, for development; all by default).
    let only: String = env_or("E2E_ONLY", "fetcher,embedded,queue,aggregation".to_string());
    let candidates: Vec<&str> = only.split(',').map(str::trim).collect();
    let runs: usize = if quick() { 1 } else { env_or("RUNS", 2).max(1) };
    let mut order = 0;
    // A node just started spends its first minute compiling (the JVM's JIT took a third of the
    // machine in a profile): whichever frontier ran first on it paid for that. Each engine
    // frontier crawls once first, unmeasured.
    if !quick() {
        let warm = Budget {
            warmup: Duration::from_secs(5),
            window: Duration::from_secs(10),
            ..budget
        };
        for step in candidates
            .iter()
            .filter(|c| **c == "queue" || **c == "aggregation")
        {
            let choice = match *step {
                "queue" => FrontierChoice::Queue,
                _ => FrontierChoice::Aggregation,
            };
            order += 1;
            eprintln!("  (warming the engine up: an unmeasured {step} crawl)");
            let _ = crawl::run(&site, choice, &warm, order).await;
        }
    }
    for run in 0..runs {
        let mut steps = candidates.clone();
        if run % 2 == 1 {
            steps.reverse();
        }
        for step in steps {
            order += 1;
            match step {
                "fetcher" => {
                    let rate = fetcher_alone(&site, &urls, budget.window).await;
                    eprintln!("  fetcher alone: {rate:.0} pages/s");
                    fetcher.push(rate);
                }
                "embedded" => {
                    embedded.push(crawl::run(&site, FrontierChoice::Embedded, &budget, order).await)
                }
                "aggregation" => aggregation
                    .push(crawl::run(&site, FrontierChoice::Aggregation, &budget, order).await),
                _ => queue.push(crawl::run(&site, FrontierChoice::Queue, &budget, order).await),
            }
        }
    }

    let politeness = hosts as f64 / DELAY;
    let fetcher_rate = Spread::of(&fetcher).median;
    let limit = politeness.min(fetcher_rate);
    let rate = |runs: &[Run]| {
        Spread::of(&runs.iter().map(|r| r.pages_per_second).collect::<Vec<_>>()).median
    };
    let report = json!({
        "benchmark": "end_to_end",
        "commit": std::env::var("SQUALL_BENCH_COMMIT").ok(),
        "hosts": hosts,
        "pages_per_host": pages,
        "site_urls": urls.len(),
        "delay_seconds": DELAY,
        "warmup_seconds": budget.warmup.as_secs_f64(),
        "window_seconds": budget.window.as_secs_f64(),
        "runs": runs,
        "settings": crawl::settings(hosts, DELAY),
        "politeness_pages_per_second": politeness,
        "fetcher_alone_pages_per_second": Spread::of(&fetcher).json(),
        "fetcher_alone_runs": fetcher,
        "baseline_pages_per_second": limit,
        "embedded": summary(&embedded),
        "queue": summary(&queue),
        "aggregation": summary(&aggregation),
        "ratio_embedded_to_baseline": rate(&embedded) / limit,
        "ratio_queue_to_baseline": rate(&queue) / limit,
        "ratio_aggregation_to_baseline": rate(&aggregation) / limit,
        "ratio_queue_to_aggregation": rate(&queue) / rate(&aggregation),
    });
    println!("{report:#}");
    site.shutdown().await;
}
