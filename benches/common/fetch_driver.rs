//! squall's fetcher bolt alone, fed the URLs of a site as fast as it takes them: the fetcher-alone
//! rate that the fetcher benchmark compares with a load generator and the end-to-end benchmark
//! compares the whole crawl with.

use std::sync::Arc;
use std::time::{Duration, Instant};

use squall::fetch::{FetcherBolt, FetcherSettings};
use squall::message::{AckHandle, Tuple};
use squall::model::{CrawlUrl, PartitionMode, partition_key};
use squall::protocol::{HttpClient, HttpContext, HttpSettings};
use squall_testsite::Site;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

/// Fetches at once.
pub const CONCURRENCY: usize = 50;

/// URLs the fetcher holds at most (queued or in flight): enough that it never waits for work.
const OUTSTANDING: usize = 4 * CONCURRENCY;

/// An HTTP client's context that sends every host name of `site` to its loopback address.
pub fn http_context(site: &Site, config: &HttpSettings) -> HttpContext {
    let mut context = HttpContext::new(config);
    context.resolve = site
        .host_names()
        .into_iter()
        .map(|h| (h, site.addr()))
        .collect();
    // As the crawler sizes it from fetcher.threads.per.queue (here CONCURRENCY).
    context.max_idle_per_host = CONCURRENCY;
    context
}

/// Every in-scope URL of `site` that a crawl from its seeds reaches.
pub fn site_urls(site: &Site) -> Vec<Url> {
    site.expected()
        .reachable_in_scope_urls()
        .into_iter()
        .filter_map(|u| Url::parse(&u).ok())
        .collect()
}

/// The URLs of `urls` round and round, until `window` has passed since `started`.
pub fn for_window(
    urls: &[Url],
    started: Instant,
    window: Duration,
) -> impl Iterator<Item = Url> + '_ {
    urls.iter()
        .cycle()
        .take_while(move |_| started.elapsed() < window)
        .cloned()
}

/// squall's fetcher bolt with politeness off (no delay, any number of fetches per queue), fed for
/// `window` with at most [`OUTSTANDING`] URLs given and not yet back (as a spout keeps its queues
/// short); pages completed within the window, per second.
pub async fn fetcher_alone(site: &Site, urls: &[Url], window: Duration) -> f64 {
    let config = HttpSettings::default();
    let http = match HttpClient::new(&config, &http_context(site, &config)) {
        Ok(http) => http,
        Err(e) => panic!("client: {e}"),
    };
    let settings = FetcherSettings {
        server_delay: Duration::ZERO,
        server_min_delay: Duration::ZERO,
        threads_per_queue: CONCURRENCY,
        threads_number: CONCURRENCY,
        max_urls_in_queues: 10_000,
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
                let tuple = Tuple {
                    url: crawl_url,
                    key,
                    hints: Default::default(),
                    ack,
                };
                if in_tx.send(tuple).await.is_err() {
                    break;
                }
            }
        })
    };
    let mut pages = 0usize;
    while let Some(page) = out_rx.recv().await {
        permits.add_permits(1);
        let answered = page
            .record
            .as_ref()
            .is_some_and(|r| r.http_status.is_some());
        if answered && started.elapsed() <= window {
            pages += 1;
        }
        page.tuple.ack.ack();
    }
    let _ = feeder.await;
    let _ = run.await;
    pages as f64 / window.as_secs_f64()
}
