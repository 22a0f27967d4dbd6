//! URLFrontier client load for the benchmarks: clients on loopback gRPC putting new URLs, then
//! taking every URL out (GetURLs) and putting it back as known (PutURLs), each call timed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    DiscoveredUrlItem, GetParams, KnownUrlItem, UrlInfo, UrlItem, get_params,
};
use tonic::transport::Channel;

/// URLs per PutURLs call.
pub const PUT_BATCH: usize = 500;
/// A GetURLs call asks for this many queues of up to this many URLs.
pub const ASK: (u32, u32) = (50, 50);

/// How long each call of one kind took, in milliseconds.
#[derive(Debug, Default)]
pub struct Calls {
    /// GetURLs calls (with their whole answer).
    pub get: Vec<f64>,
    /// PutURLs calls (until every ack came).
    pub put: Vec<f64>,
}

impl Calls {
    fn merge(&mut self, other: Calls) {
        self.get.extend(other.get);
        self.put.extend(other.put);
    }
}

/// What one phase measured: how long its `urls` took from its first call to its last answer, and
/// its calls.
pub struct Phase {
    pub urls: usize,
    pub took: Duration,
    pub calls: Calls,
}

impl Phase {
    /// URLs per second.
    pub fn urls_per_s(&self) -> f64 {
        self.urls as f64 / self.took.as_secs_f64()
    }
}

fn discovered(url: String, crawl: &str) -> UrlItem {
    UrlItem {
        creation_date: 0,
        id: url.clone(),
        item: Some(Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url,
                crawl_id: crawl.to_string(),
                ..UrlInfo::default()
            }),
        })),
    }
}

/// Puts `items` on one PutURLs stream, waiting for every ack; fails unless all are OK.
async fn put(client: &mut UrlFrontierClient<Channel>, items: Vec<UrlItem>) -> anyhow::Result<()> {
    let sent = items.len();
    let mut acks = client
        .put_ur_ls(futures::stream::iter(items))
        .await?
        .into_inner();
    let mut ok = 0;
    while let Some(ack) = acks.message().await? {
        ok += usize::from(ack.status == 0);
    }
    anyhow::ensure!(ok == sent, "{ok} of {sent} puts acked OK");
    Ok(())
}

/// `clients` clients put `urls` new URLs over `hosts` hosts into `crawl`, [`PUT_BATCH`] a call.
pub async fn put_new(
    address: &str,
    crawl: &str,
    (urls, hosts, clients): (usize, usize, usize),
) -> anyhow::Result<Phase> {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let mut client = UrlFrontierClient::connect(address.to_string()).await?;
        let (next, crawl) = (Arc::clone(&next), crawl.to_string());
        workers.push(tokio::spawn(async move {
            let mut calls = Calls::default();
            loop {
                let first = next.fetch_add(PUT_BATCH, Ordering::Relaxed);
                if first >= urls {
                    return anyhow::Ok(calls);
                }
                let items = (first..(first + PUT_BATCH).min(urls))
                    .map(|i| discovered(format!("http://h{}.test/page/{i}", i % hosts), &crawl))
                    .collect();
                let call = Instant::now();
                put(&mut client, items).await?;
                calls.put.push(call.elapsed().as_secs_f64() * 1000.0);
            }
        }));
    }
    finish(workers, urls, started).await
}

/// `clients` clients loop GetURLs ([`ASK`], held 600 s) and PutURLs of what came as known (never
/// due again) until `urls` URLs are back.
pub async fn cycle(
    address: &str,
    crawl: &str,
    urls: usize,
    clients: usize,
) -> anyhow::Result<Phase> {
    let back = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let client = UrlFrontierClient::connect(address.to_string()).await?;
        let (back, crawl) = (Arc::clone(&back), crawl.to_string());
        workers.push(tokio::spawn(cycle_loop(client, back, crawl, urls)));
    }
    finish(workers, urls, started).await
}

async fn cycle_loop(
    mut client: UrlFrontierClient<Channel>,
    back: Arc<AtomicUsize>,
    crawl: String,
    total: usize,
) -> anyhow::Result<Calls> {
    let mut calls = Calls::default();
    let deadline = Instant::now() + Duration::from_secs(600);
    while back.load(Ordering::Relaxed) < total {
        anyhow::ensure!(
            Instant::now() < deadline,
            "not every URL came back in 600 s"
        );
        let params = GetParams {
            max_queues: ASK.0,
            max_urls_per_queue: ASK.1,
            key: String::new(),
            delay_requestable: 600,
            item: Some(get_params::Item::CrawlId(crawl.clone())),
        };
        let call = Instant::now();
        let mut answer = client.get_ur_ls(params).await?.into_inner();
        let mut items = Vec::new();
        while let Some(info) = answer.message().await? {
            items.push(UrlItem {
                creation_date: 0,
                id: info.url.clone(),
                item: Some(Item::Known(KnownUrlItem {
                    info: Some(info),
                    refetchable_from_date: 0,
                })),
            });
        }
        calls.get.push(call.elapsed().as_secs_f64() * 1000.0);
        if items.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        let count = items.len();
        let call = Instant::now();
        put(&mut client, items).await?;
        calls.put.push(call.elapsed().as_secs_f64() * 1000.0);
        back.fetch_add(count, Ordering::Relaxed);
    }
    Ok(calls)
}

async fn finish(
    workers: Vec<tokio::task::JoinHandle<anyhow::Result<Calls>>>,
    urls: usize,
    started: Instant,
) -> anyhow::Result<Phase> {
    let mut calls = Calls::default();
    for worker in workers {
        calls.merge(worker.await??);
    }
    Ok(Phase {
        urls,
        took: started.elapsed(),
        calls,
    })
}

/// The `q` quantile (0..1) of `values`, nearest rank; 0 for none.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
