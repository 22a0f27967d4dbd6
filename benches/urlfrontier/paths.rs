//! The two ways through one frontier that the benchmark compares: in process (the spout runner's
//! URLs written back by the same process) and through the URLFrontier API (squall's server, clients
//! on loopback gRPC).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use squall::config::CrawlConfig;
use squall::frontier::{QueueReport, StatusWrite};
use squall::message::{AckMessage, Tuple};
use squall::model::Status;
use squall::spout::{RunnerSettings, RunnerState, SpoutRunner};
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{GetParams, KnownUrlItem, UrlItem, get_params};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Writes back per batch, in both paths.
pub const BATCH: usize = 500;

/// A URL done: fetched, never to be fetched again.
fn done(tuple: &Tuple) -> StatusWrite {
    StatusWrite {
        url: tuple.url.clone(),
        key: tuple.key.clone(),
        status: Status::Fetched,
        next_fetch: None,
        queue: QueueReport::default(),
    }
}

/// In process: the frontier's spout under the spout runner, every URL it emits written back as
/// FETCHED in batches of up to [`BATCH`] and acked once written. Returns how long `total` URLs took.
pub async fn in_process(config: &CrawlConfig, total: usize) -> anyhow::Result<Duration> {
    let frontier = squall_spouts::frontier::open(config).await?;
    let store = frontier.store;
    let (tuples, incoming) = mpsc::channel::<Tuple>(BATCH);
    let (ack_sender, acks) = mpsc::unbounded_channel::<AckMessage>();
    let (state_sender, _state): (watch::Sender<RunnerState>, _) =
        watch::channel(RunnerState::default());
    let stop = CancellationToken::new();
    let runner = SpoutRunner::new(frontier.spout, RunnerSettings::from_config(&config.spout));
    let running = tokio::spawn(runner.run(tuples, ack_sender, acks, state_sender, stop.clone()));
    let started = Instant::now();
    let mut batches = tokio_stream::wrappers::ReceiverStream::new(incoming).ready_chunks(BATCH);
    let mut written = 0;
    while written < total {
        let Some(batch) = batches.next().await else {
            break;
        };
        let writes = batch.iter().map(done).collect();
        let results = store.store(writes).await;
        for (tuple, result) in batch.into_iter().zip(results) {
            match result {
                Ok(()) => {
                    tuple.ack.ack();
                    written += 1;
                }
                Err(error) => tuple.ack.fail(error.message().to_string()),
            }
        }
    }
    let took = started.elapsed();
    stop.cancel();
    drop(batches);
    running.await?;
    anyhow::ensure!(
        written == total,
        "in process: {written} of {total} URLs written"
    );
    Ok(took)
}

/// Through the API: squall's server over the frontier, `clients` clients each asking GetURLs
/// (`max_queues` queues of up to `per_queue` URLs) and putting every URL back as known (never
/// again) on a PutURLs stream, until `total` URLs are back. Returns how long that took.
pub async fn through_api(
    config: CrawlConfig,
    total: usize,
    clients: usize,
    (max_queues, per_queue): (u32, u32),
) -> anyhow::Result<Duration> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let server = squall_urlfrontier::server::start(config, listener).await?;
    let address = format!("http://{}", server.addr());
    let back = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let client = UrlFrontierClient::connect(address.clone()).await?;
        let back = Arc::clone(&back);
        workers.push(tokio::spawn(client_loop(
            client,
            back,
            total,
            (max_queues, per_queue),
        )));
    }
    for worker in workers {
        worker.await??;
    }
    let took = started.elapsed();
    server.shutdown().await;
    let count = back.load(Ordering::Relaxed);
    anyhow::ensure!(
        count == total,
        "through the API: {count} of {total} URLs put back"
    );
    Ok(took)
}

async fn client_loop(
    mut client: UrlFrontierClient<tonic::transport::Channel>,
    back: Arc<AtomicUsize>,
    total: usize,
    (max_queues, per_queue): (u32, u32),
) -> anyhow::Result<()> {
    while back.load(Ordering::Relaxed) < total {
        let params = GetParams {
            max_urls_per_queue: per_queue,
            max_queues,
            key: String::new(),
            delay_requestable: 600,
            item: Some(get_params::Item::CrawlId("DEFAULT".into())),
        };
        let mut answer = client.get_ur_ls(params).await?.into_inner();
        let mut items = Vec::new();
        while let Some(info) = answer.message().await? {
            items.push(UrlItem {
                id: info.url.clone(),
                item: Some(Item::Known(KnownUrlItem {
                    info: Some(info),
                    refetchable_from_date: 0,
                })),
            });
        }
        if items.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        let sent = items.len();
        let mut acks = client
            .put_ur_ls(futures::stream::iter(items))
            .await?
            .into_inner();
        let mut ok = 0;
        while let Some(ack) = acks.message().await? {
            if ack.status == 0 {
                ok += 1;
            }
        }
        anyhow::ensure!(ok == sent, "{ok} of {sent} puts acked OK");
        back.fetch_add(ok, Ordering::Relaxed);
    }
    Ok(())
}
