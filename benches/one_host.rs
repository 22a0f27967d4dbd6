//! A crawl of one host: does the frontier keep the fetcher busy at the politeness limit?
//!
//! `cargo bench --bench one_host` crawls a generated one-host site (loopback, default settings but
//! the delay; every page of the host injected as a seed, as the politeness benchmark does, so that
//! link discovery does not limit the rate) on the embedded frontier, on the queue frontier and on a
//! StormCrawler status index read by the aggregation spout (both at SQUALL_BENCH_ES), for per-host
//! delays of 0.5, 0.1 and 0.02 s. Each crawl has the same budget (`SQUALL_BENCH_ONE_HOST_SECONDS`,
//! default 30 s; 3 s with SQUALL_BENCH_QUICK=1); the frontiers take turns, each going first in turn
//! (`SQUALL_BENCH_RUNS`, default 3).
//!
//! Figures, from the fetch records: pages per second from the first fetch to the last, against the
//! ideal 1 / delay (the politeness limit); the smallest gap between the end of one fetch and the
//! start of the next (never below the delay); overlapping fetches (must be 0). Prints JSON.

mod common;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::crawler::{self, FetchRecorder};
use common::frontier_data::delete;
use common::{Spread, engine_client, env_or, print_result, quick, seconds, start_closed_site};
use squall::config::CrawlConfig;
use squall::frontier::EmbeddedFrontier;
use squall::topology::CrawlerBuilder;
use squall_bench_schema::Run;
use squall_bench_schema::one_host::{OneHost, OneHostCrawl};
use squall_engine::client::EsClient;
use squall_engine::client::indices::ensure_index;
use squall_engine::queue::schema::queues_index_body;
use squall_engine::queue::{QueueSpout, QueueSpoutConfig, QueueStatusStore};
use squall_engine::status_index::index::{StatusIndexConfig, ensure_status_index};
use squall_engine::status_index::schema::KeyField;
use squall_engine::status_index::spouts::{AggregationSpout, StatusSpoutConfig};
use squall_engine::{EsStatusStore, WriterConfig};
use squall_testsite::Site;

const DELAYS: [f64; 3] = [0.5, 0.1, 0.02];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frontier {
    Embedded,
    Queue,
    /// StormCrawler's status index read by the aggregation spout.
    Aggregation,
}

impl Frontier {
    const ALL: [Frontier; 3] = [Frontier::Embedded, Frontier::Queue, Frontier::Aggregation];

    fn name(self) -> &'static str {
        match self {
            Frontier::Embedded => "embedded",
            Frontier::Queue => "queue",
            Frontier::Aggregation => "status index (aggregation)",
        }
    }

    /// The name as it goes into index and directory names.
    fn slug(self) -> &'static str {
        match self {
            Frontier::Embedded => "embedded",
            Frontier::Queue => "queue",
            Frontier::Aggregation => "aggregation",
        }
    }
}

/// What one crawl measured.
struct Measured {
    fetches: usize,
    pages_per_second: f64,
    smallest_gap: f64,
    overlaps: usize,
}

fn measure(mut spans: Vec<(DateTime<Utc>, DateTime<Utc>)>) -> Measured {
    spans.sort();
    let mut smallest_gap = f64::INFINITY;
    let mut overlaps = 0;
    for pair in spans.windows(2) {
        let gap = seconds(pair[1].0 - pair[0].1);
        if gap < 0.0 {
            overlaps += 1;
        }
        smallest_gap = smallest_gap.min(gap);
    }
    if std::env::var("SQUALL_BENCH_GAPS").is_ok() {
        let mut gaps: Vec<(f64, f64)> = spans
            .windows(2)
            .map(|p| (seconds(p[1].0 - p[0].0), seconds(p[0].0 - spans[0].0)))
            .collect();
        gaps.sort_by(|a, b| b.0.total_cmp(&a.0));
        eprintln!("largest gaps (gap, at): {:?}", &gaps[..gaps.len().min(8)]);
    }
    let pages_per_second = match (spans.first(), spans.last()) {
        (Some(first), Some(last)) if spans.len() > 1 => {
            (spans.len() - 1) as f64 / seconds(last.0 - first.0)
        }
        _ => 0.0,
    };
    Measured {
        fetches: spans.len(),
        pages_per_second,
        smallest_gap,
        overlaps,
    }
}

fn config(delay: f64) -> CrawlConfig {
    crawler::config(&[
        "http.agent.name=squall-bench",
        &format!("fetcher.server.delay={delay}"),
        "urlfilter.ignore.outside.host=true",
    ])
}

/// Creates the status (or urls) index `name`: one shard, no replicas; `what` names it in a panic.
async fn create_status_index(client: &EsClient, name: &str, what: &str) {
    let settings = StatusIndexConfig {
        name: name.to_string(),
        shards: 1,
        replicas: 0,
        refresh_interval: "1s".to_string(),
    };
    if let Err(e) = ensure_status_index(client, &settings).await {
        panic!("{what}: {e}");
    }
}

/// A fresh pair of queue-frontier indices.
async fn queue_frontier(client: &EsClient, run: &str) -> (QueueSpout, QueueStatusStore) {
    let urls = format!("bench-one-host-urls-{run}");
    let queues = format!("bench-one-host-queues-{run}");
    delete(client, &[&urls, &queues]).await;
    create_status_index(client, &urls, "urls index").await;
    if let Err(e) = ensure_index(client, &queues, queues_index_body(1, 0, "1s")).await {
        panic!("queues index: {e}");
    }
    let spout = QueueSpout::new(client.clone(), QueueSpoutConfig::new(&urls, &queues));
    let store = spout.status_store();
    (spout, store)
}

/// A fresh status index read by the aggregation spout, with the writer sharing its routes.
async fn status_index_frontier(
    client: &EsClient,
    run: &str,
    config: &CrawlConfig,
) -> (AggregationSpout, EsStatusStore) {
    let index = format!("bench-one-host-status-{run}");
    delete(client, &[&index]).await;
    create_status_index(client, &index, "status index").await;
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.clone(),
            key_field: KeyField::default(),
            routing: true,
        },
    );
    let spout = AggregationSpout::new(
        client.clone(),
        StatusSpoutConfig {
            index,
            max_buckets: config.frontier.max_buckets,
            max_urls_per_bucket: config.frontier.max_urls_per_bucket,
            refresh_interval: Duration::from_secs(1),
            ..StatusSpoutConfig::default()
        },
    )
    .with_routes(store.routes());
    (spout, store)
}

/// One crawl of the site's host with `delay`, for `budget`.
async fn crawl(
    site: &Site,
    frontier: Frontier,
    delay: f64,
    budget: Duration,
    run: &str,
) -> Measured {
    let config = config(delay);
    let fetches = Arc::new(FetchRecorder::default());
    let dir = std::env::temp_dir().join(format!("squall-one-host-{}-{run}", std::process::id()));
    let builder = CrawlerBuilder::new(config.clone()).observer(fetches.clone());
    let builder = match frontier {
        Frontier::Embedded => {
            let embedded = match EmbeddedFrontier::open(&dir) {
                Ok(frontier) => frontier,
                Err(e) => panic!("frontier: {e}"),
            };
            builder.frontier(
                embedded.spout(config.frontier.query_limits()),
                embedded.clone(),
            )
        }
        Frontier::Queue => {
            let (spout, store) = queue_frontier(&engine_client(), run).await;
            builder.frontier(spout, store)
        }
        Frontier::Aggregation => {
            let (spout, store) = status_index_frontier(&engine_client(), run, &config).await;
            builder.frontier(spout, store)
        }
    };
    let crawler = match crawler::resolve_site(builder, site).build() {
        Ok(crawler) => crawler,
        Err(e) => panic!("crawler: {e}"),
    };
    let urls = site.expected().reachable_in_scope_urls();
    crawler.inject(urls.iter().map(String::as_str)).await;
    crawler::run_until_idle(crawler, Some(budget)).await;
    let _ = std::fs::remove_dir_all(&dir);
    let spans = fetches
        .fetches()
        .into_iter()
        .map(|f| (f.started, f.finished))
        .collect();
    measure(spans)
}

#[tokio::main]
async fn main() {
    let budget = Duration::from_secs(env_or("ONE_HOST_SECONDS", if quick() { 3 } else { 30 }));
    let runs = if quick() { 1 } else { env_or("RUNS", 3).max(1) };
    // Enough pages that the fastest crawl does not run out within the budget.
    let pages = (budget.as_secs_f64() / DELAYS[2] * 1.5) as usize;
    let site = start_closed_site(1, pages.max(50)).await;
    let mut rows = Vec::new();
    for delay in DELAYS {
        let mut by_frontier: Vec<(Frontier, Vec<Measured>)> =
            Frontier::ALL.iter().map(|f| (*f, Vec::new())).collect();
        for repetition in 0..runs {
            // Each frontier goes first, second and last in turn.
            let n = by_frontier.len();
            for i in (0..n).map(|k| (k + repetition) % n) {
                let frontier = by_frontier[i].0;
                let run = format!("{}-{delay}-{repetition}", frontier.slug());
                site.clear_requests();
                let measured = crawl(&site, frontier, delay, budget, &run).await;
                eprintln!(
                    "one host, {} frontier, delay {delay} s: {} fetches, {:.2} pages/s",
                    frontier.name(),
                    measured.fetches,
                    measured.pages_per_second
                );
                by_frontier[i].1.push(measured);
            }
        }
        for (frontier, measured) in by_frontier {
            rows.push(row(frontier, delay, &measured));
        }
    }
    print_result(&OneHost {
        run: Run::now("one_host"),
        budget_seconds: Some(budget.as_secs_f64()),
        runs: Some(runs as u64),
        site_pages: Some(site.expected().reachable_in_scope_urls().len() as u64),
        settings: Some(
            "defaults (spout.min.delay.queries 2 s, frontier.max.urls.per.bucket 10, \
             status.updater.flush.interval 1 s) but fetcher.server.delay"
                .to_string(),
        ),
        crawls: rows,
    });
    site.shutdown().await;
}

/// The row of one frontier at one delay.
fn row(frontier: Frontier, delay: f64, measured: &[Measured]) -> OneHostCrawl {
    let rates: Vec<f64> = measured.iter().map(|m| m.pages_per_second).collect();
    let rate = Spread::of(&rates);
    let ideal = 1.0 / delay;
    OneHostCrawl {
        frontier: frontier.name().to_string(),
        delay_seconds: Some(delay),
        ideal_pages_per_second: Some(ideal),
        pages_per_second: Some(rate),
        ratio_to_ideal: Some(rate.median / ideal),
        fetches: measured.iter().map(|m| m.fetches as u64).collect(),
        smallest_gap_seconds: Some(
            measured
                .iter()
                .map(|m| m.smallest_gap)
                .fold(f64::INFINITY, f64::min),
        ),
        overlapping_fetches: Some(measured.iter().map(|m| m.overlaps as u64).sum()),
    }
}
