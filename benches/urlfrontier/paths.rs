//! The two ways through one frontier that the benchmark compares: in process (the spout runner's
//! URLs written back by the same process) and through the URLFrontier API (squall's server, clients
//! on loopback gRPC).

use std::time::{Duration, Instant};

use futures::StreamExt;
use squall::config::CrawlConfig;
use squall::frontier::{QueueReport, StatusWrite};
use squall::message::{AckMessage, Tuple};
use squall::model::Status;
use squall::spout::{RunnerState, SpoutRunner};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::common::urlfrontier_load::cycle;

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
    let frontier = squall_engine::setup::open(config).await?;
    let store = frontier.store;
    let (tuples, incoming) = mpsc::channel::<Tuple>(BATCH);
    let (ack_sender, acks) = mpsc::unbounded_channel::<AckMessage>();
    let (state_sender, _state): (watch::Sender<RunnerState>, _) =
        watch::channel(RunnerState::default());
    let stop = CancellationToken::new();
    let runner = SpoutRunner::new(frontier.spout, config.spout.clone());
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
/// (50 queues of up to 50 URLs) and putting every URL back as known (never again) on a PutURLs
/// stream, until `total` URLs are back ([`cycle`]). Returns how long that took.
pub async fn through_api(
    config: CrawlConfig,
    total: usize,
    clients: usize,
) -> anyhow::Result<Duration> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let server = squall_urlfrontier::server::start(config, listener).await?;
    let address = format!("http://{}", server.addr());
    let phase = cycle(&address, "DEFAULT", total, clients).await;
    server.shutdown().await;
    Ok(phase?.took)
}
