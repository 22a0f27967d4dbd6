//! Fetcher throughput with politeness off, against a plain load generator on the same local server.
//!
//! `cargo bench --bench fetcher` prints JSON: pages per second for both, and the ratio fetcher /
//! load generator (the goal is at least 0.8). Both use 50 connections' worth of concurrency against
//! the generated multi-host site on loopback, going round its pages for the same window of time
//! (`SQUALL_BENCH_WINDOW_SECS`, 10 s; 1 s with `--quick`). The runs alternate which one goes first
//! (`SQUALL_BENCH_RUNS`, 5), so that neither always has the warmer machine, and each figure is
//! reported as its median with the spread (max / min) over the runs.

mod common;

use std::time::{Duration, Instant};

use common::fetch_driver::{CONCURRENCY, fetcher_alone as fetcher, for_window, site_urls};
use common::{Spread, print_result, quick, runs};
use futures::StreamExt;
use squall_bench_schema::Run;
use squall_bench_schema::stages::Fetcher;
use squall_testsite::{Site, SiteSpec};
use url::Url;

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
    let urls = site_urls(&site);
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
    print_result(&Fetcher {
        run: Run::named("fetcher"),
        window_seconds: Some(window.as_secs_f64()),
        runs: Some(ours.len() as u64),
        order: Some("alternating, load generator first in even runs".to_string()),
        concurrency: Some(CONCURRENCY as u64),
        site_pages: Some(urls.len() as u64),
        load_generator_pages_per_second: Some(Spread::of(&baseline)),
        fetcher_pages_per_second: Some(Spread::of(&ours)),
        spread_load_generator: Some(Spread::max_over_min(&baseline)),
        spread_fetcher: Some(Spread::max_over_min(&ours)),
        ratio_spread: Some(Spread::max_over_min(&ratios)),
        ratio_fetcher_to_load_generator: Some(
            Spread::of(&ours).median / Spread::of(&baseline).median,
        ),
        load_generator_runs: baseline,
        fetcher_runs: ours,
        ratio_runs: ratios,
        requests_per_run: None,
    });
    site.shutdown().await;
}
