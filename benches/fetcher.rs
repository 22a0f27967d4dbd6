//! Fetcher throughput with politeness off, against a plain load generator on the same local server.
//!
//! `cargo bench --bench fetcher` prints JSON: pages per second for both, and the ratio fetcher /
//! load generator (the goal is at least 0.8). Both use 50 connections' worth of concurrency against
//! the generated multi-host site on loopback, going round its pages for the same window of time
//! (`SQUALL_BENCH_WINDOW_SECS`, 10 s; 1 s with `--quick`). The runs alternate which one goes first
//! (`SQUALL_BENCH_RUNS`, 5), so that neither always has the warmer machine, and each figure is
//! reported as its median with the spread (max / min) over the runs.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Spread, quick, runs};
use futures::StreamExt;
use squall::fetch::{FetcherBolt, FetcherSettings, HttpClient, HttpSettings};
use squall::message::{AckHandle, Tuple};
use squall::model::{CrawlUrl, PartitionMode, partition_key};
use squall_testsite::{Site, SiteSpec};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

const CONCURRENCY: usize = 50;

/// URLs the fetcher holds at most (queued or in flight): enough that it never waits for work.
const OUTSTANDING: usize = 4 * CONCURRENCY;

fn http_settings(site: &Site) -> HttpSettings {
    HttpSettings {
        resolve: site
            .host_names()
            .into_iter()
            .map(|h| (h, site.addr()))
            .collect(),
        // As the crawler sizes it from fetcher.threads.per.queue (here CONCURRENCY).
        max_idle_per_host: CONCURRENCY,
        ..HttpSettings::default()
    }
}

/// The URLs of `urls` round and round, until `window` has passed since `started`.
fn for_window(urls: &[Url], started: Instant, window: Duration) -> impl Iterator<Item = Url> + '_ {
    urls.iter()
        .cycle()
        .take_while(move |_| started.elapsed() < window)
        .cloned()
}

/// The baseline: a bare reqwest client, CONCURRENCY requests in flight, bodies read in full, new
/// requests started for `window`; pages completed within the window, per second.
async fn load_generator(site: &Site, urls: &[Url], window: Duration) -> f64 {
    let mut builder = reqwest::Client::builder();
    for host in site.host_names() {
        builder = builder.resolve(&host, site.addr());
    }
    let client = match builder.build() {
        Ok(client) => client,
        Err(e) => panic!("client: {e}"),
    };
    let started = Instant::now();
    let pages = futures::stream::iter(for_window(urls, started, window))
        .map(|url| {
            let client = client.clone();
            async move {
                let ok = match client.get(url).send().await {
                    Ok(response) => response.bytes().await.is_ok(),
                    Err(_) => false,
                };
                ok && started.elapsed() <= window
            }
        })
        .buffer_unordered(CONCURRENCY)
        .filter(|counted| futures::future::ready(*counted))
        .count()
        .await;
    pages as f64 / window.as_secs_f64()
}

/// squall's fetcher bolt with politeness off (no delay, any number of fetches per queue), fed for
/// `window` with at most [`OUTSTANDING`] URLs given and not yet back (as a spout keeps its queues
/// short); pages completed within the window, per second.
async fn fetcher(site: &Site, urls: &[Url], window: Duration) -> f64 {
    let http = match HttpClient::new(&http_settings(site)) {
        Ok(http) => http,
        Err(e) => panic!("client: {e}"),
    };
    let settings = FetcherSettings {
        server_delay: Duration::ZERO,
        min_delay: Duration::ZERO,
        threads_per_queue: CONCURRENCY,
        threads_total: CONCURRENCY,
        max_queued: 10_000,
        ..FetcherSettings::default()
    };
    let bolt = FetcherBolt::new(http, None, settings);
    let (in_tx, in_rx) = mpsc::channel(1024);
    let (out_tx, mut out_rx) = mpsc::channel(1024);
    let (ack_tx, _ack_rx) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let permits = Arc::new(tokio::sync::Semaphore::new(OUTSTANDING));
    let started = Instant::now();
    let run = tokio::spawn(bolt.run(in_rx, out_tx, stop.clone()));
    let feeder = {
        let urls = urls.to_vec();
        let permits = Arc::clone(&permits);
        tokio::spawn(async move {
            for url in for_window(&urls, started, window) {
                match Arc::clone(&permits).acquire_owned().await {
                    Ok(permit) => permit.forget(),
                    Err(_) => break,
                }
                let crawl_url = CrawlUrl::new(url);
                let key = partition_key(&crawl_url.url, &crawl_url.metadata, PartitionMode::ByHost);
                let ack = AckHandle::new(crawl_url.clone(), ack_tx.clone());
                if in_tx
                    .send(Tuple {
                        url: crawl_url,
                        key,
                        hints: Default::default(),
                        ack,
                    })
                    .await
                    .is_err()
                {
                    break;
                }
            }
        })
    };
    let mut pages = 0usize;
    while let Some(page) = out_rx.recv().await {
        permits.add_permits(1);
        if page
            .record
            .as_ref()
            .is_some_and(|r| r.http_status.is_some())
            && started.elapsed() <= window
        {
            pages += 1;
        }
        page.tuple.ack.ack();
    }
    let _ = feeder.await;
    let _ = run.await;
    pages as f64 / window.as_secs_f64()
}

/// How long each run feeds its client.
fn window() -> Duration {
    let default = if quick() { 1.0 } else { 10.0 };
    let seconds = std::env::var("SQUALL_BENCH_WINDOW_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(default);
    Duration::from_secs_f64(seconds)
}

#[tokio::main]
async fn main() {
    let spec = if quick() {
        SiteSpec::small()
    } else {
        SiteSpec::default()
    };
    let site = match Site::start(spec).await {
        Ok(site) => site,
        Err(e) => panic!("site: {e}"),
    };
    let urls: Vec<Url> = site
        .expected()
        .reachable_in_scope_urls()
        .into_iter()
        .filter_map(|u| Url::parse(&u).ok())
        .collect();
    let window = window();

    // Warm up both (connections, caches), then alternate which goes first.
    let warm_up = Duration::from_millis(500);
    let _ = load_generator(&site, &urls, warm_up).await;
    let _ = fetcher(&site, &urls, warm_up).await;
    let mut baseline = Vec::new();
    let mut ours = Vec::new();
    for run in 0..runs() {
        if run % 2 == 0 {
            baseline.push(load_generator(&site, &urls, window).await);
            ours.push(fetcher(&site, &urls, window).await);
        } else {
            ours.push(fetcher(&site, &urls, window).await);
            baseline.push(load_generator(&site, &urls, window).await);
        }
    }
    let ratios: Vec<f64> = ours.iter().zip(&baseline).map(|(o, b)| o / b).collect();
    let report = serde_json::json!({
        "benchmark": "fetcher",
        "window_seconds": window.as_secs_f64(),
        "runs": ours.len(),
        "order": "alternating, load generator first in even runs",
        "concurrency": CONCURRENCY,
        "site_pages": urls.len(),
        "load_generator_runs": baseline,
        "fetcher_runs": ours,
        "load_generator_pages_per_second": Spread::of(&baseline).json(),
        "fetcher_pages_per_second": Spread::of(&ours).json(),
        "spread_load_generator": spread(&baseline),
        "spread_fetcher": spread(&ours),
        "ratio_runs": ratios,
        "ratio_spread": spread(&ratios),
        "ratio_fetcher_to_load_generator": Spread::of(&ours).median / Spread::of(&baseline).median,
    });
    println!("{report:#}");
    site.shutdown().await;
}

/// The largest figure over the smallest: 1.0 for runs that agree exactly.
fn spread(values: &[f64]) -> f64 {
    let figures = Spread::of(values);
    if figures.min > 0.0 {
        figures.max / figures.min
    } else {
        f64::INFINITY
    }
}
