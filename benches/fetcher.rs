//! Fetcher throughput with politeness off, against a plain load generator on the same local server.
//!
//! `cargo bench --bench fetcher` prints JSON: pages per second for both, run interleaved, and the
//! ratio fetcher / load generator (the goal is at least 0.8). Both use 50 connections' worth of
//! concurrency against the generated multi-host site on loopback.

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

fn http_settings(site: &Site) -> HttpSettings {
    HttpSettings {
        resolve: site
            .host_names()
            .into_iter()
            .map(|h| (h, site.addr()))
            .collect(),
        ..HttpSettings::default()
    }
}

/// The baseline: a bare reqwest client, CONCURRENCY requests in flight, bodies read in full.
async fn load_generator(site: &Site, urls: &[Url]) -> f64 {
    let mut builder = reqwest::Client::builder();
    for host in site.host_names() {
        builder = builder.resolve(&host, site.addr());
    }
    let client = match builder.build() {
        Ok(client) => client,
        Err(e) => panic!("client: {e}"),
    };
    let started = Instant::now();
    let pages = futures::stream::iter(urls.iter().cloned())
        .map(|url| {
            let client = client.clone();
            async move {
                match client.get(url).send().await {
                    Ok(response) => response.bytes().await.is_ok(),
                    Err(_) => false,
                }
            }
        })
        .buffer_unordered(CONCURRENCY)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await;
    pages as f64 / started.elapsed().as_secs_f64()
}

/// squall's fetcher bolt with politeness off: no delay, any number of fetches per queue.
async fn fetcher(site: &Site, urls: &[Url]) -> f64 {
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
    let started = Instant::now();
    let run = tokio::spawn(bolt.run(in_rx, out_tx, stop.clone()));
    let feeder = {
        let urls = urls.to_vec();
        tokio::spawn(async move {
            for url in urls {
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
        if page
            .record
            .as_ref()
            .is_some_and(|r| r.http_status.is_some())
        {
            pages += 1;
        }
        page.tuple.ack.ack();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let _ = feeder.await;
    let _ = run.await;
    pages as f64 / elapsed
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
    let mut urls: Vec<Url> = site
        .expected()
        .reachable_in_scope_urls()
        .into_iter()
        .filter_map(|u| Url::parse(&u).ok())
        .collect();
    // Several passes over the site, so a run lasts long enough to measure.
    let passes = if quick() { 1 } else { 4 };
    let one_pass = urls.clone();
    for _ in 1..passes {
        urls.extend(one_pass.iter().cloned());
    }
    let urls = Arc::new(urls);

    // Warm up both (connections, caches), then interleave.
    let _ = load_generator(&site, &urls[..urls.len().min(200)]).await;
    let _ = fetcher(&site, &urls[..urls.len().min(200)]).await;
    let mut baseline = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..runs() {
        baseline.push(load_generator(&site, &urls).await);
        ours.push(fetcher(&site, &urls).await);
    }
    let baseline = Spread::of(&baseline);
    let ours = Spread::of(&ours);
    let report = serde_json::json!({
        "benchmark": "fetcher",
        "requests_per_run": urls.len(),
        "concurrency": CONCURRENCY,
        "load_generator_pages_per_second": baseline.json(),
        "fetcher_pages_per_second": ours.json(),
        "ratio_fetcher_to_load_generator": ours.median / baseline.median,
    });
    println!("{report:#}");
    site.shutdown().await;
}
