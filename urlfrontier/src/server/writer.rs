//! Group commit: the writes of every client stream of a crawl go through one writer, which merges
//! what is waiting into one frontier batch (a durable commit or a `_bulk` each), so that many small
//! puts cost a few large writes.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use squall::frontier::{StatusStore, StatusWrite, StoreError, Written};
use tokio::sync::{Notify, mpsc, oneshot};

use super::dispenser::Dispenser;

/// The outcome of one write put by a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutOutcome {
    /// Durable.
    Done,
    /// A discovered URL the frontier knew already: left as it was.
    Known,
    /// The write failed; sending it again may work.
    Failed(String),
}

/// One client's writes, waiting for the writer.
#[derive(Debug)]
pub struct WriteJob {
    /// The writes, in the client's order.
    pub writes: Vec<StatusWrite>,
    /// Whether each write puts back a URL handed out (it is then taken back and acked).
    pub processed: Vec<bool>,
    /// Where the outcomes go, one per write.
    pub reply: oneshot::Sender<Vec<PutOutcome>>,
}

/// Runs the writer until every sender is gone. Jobs waiting are merged while the batch stays
/// within `batch` writes (`status.updater.batch.size`); a larger job is written in batches of that
/// size; up to `in_flight` merged batches are written at once. `written` is told after each batch,
/// so that the frontier's reader reads what it brought.
pub async fn write_loop(
    store: Arc<dyn StatusStore>,
    dispenser: Arc<Mutex<Dispenser>>,
    mut jobs: mpsc::Receiver<WriteJob>,
    batch: usize,
    in_flight: usize,
    written: Arc<Notify>,
) {
    let (batch, in_flight) = (batch.max(1), in_flight.max(1));
    let in_flight = Arc::new(tokio::sync::Semaphore::new(in_flight));
    let mut held_over: Option<WriteJob> = None;
    loop {
        // A free slot first, then the jobs: while every slot is busy, jobs wait in the channel
        // and the next batch takes them together (fewer, larger writes under load). A client
        // stream has one job in flight at a time, so its writes keep their order.
        let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
            return;
        };
        let first = match held_over.take() {
            Some(job) => job,
            None => match jobs.recv().await {
                Some(job) => job,
                None => return,
            },
        };
        let merged = take_waiting(first, &mut jobs, &mut held_over, batch);
        let (store, dispenser, written) = (
            Arc::clone(&store),
            Arc::clone(&dispenser),
            Arc::clone(&written),
        );
        tokio::spawn(async move {
            write_merged(store.as_ref(), &dispenser, merged, batch).await;
            written.notify_one();
            drop(permit);
        });
    }
}

/// `first` and the jobs waiting behind it, while they fit in `batch` writes; the first that does
/// not fit is held over for the next batch.
fn take_waiting(
    first: WriteJob,
    jobs: &mut mpsc::Receiver<WriteJob>,
    held_over: &mut Option<WriteJob>,
    batch: usize,
) -> Vec<WriteJob> {
    let mut waiting = first.writes.len();
    let mut merged = vec![first];
    while waiting < batch {
        let Ok(job) = jobs.try_recv() else { break };
        if waiting + job.writes.len() > batch {
            *held_over = Some(job);
            break;
        }
        waiting += job.writes.len();
        merged.push(job);
    }
    merged
}

async fn write_merged(
    store: &dyn StatusStore,
    dispenser: &Mutex<Dispenser>,
    jobs: Vec<WriteJob>,
    batch: usize,
) {
    let mut writes = Vec::new();
    let mut shapes = Vec::with_capacity(jobs.len());
    for job in jobs {
        shapes.push((job.writes.len(), job.processed, job.reply));
        writes.extend(job.writes);
    }
    let urls: Vec<String> = writes.iter().map(|w| w.url.url.to_string()).collect();
    let mut results = Vec::with_capacity(writes.len());
    let mut writes = writes.into_iter().peekable();
    while writes.peek().is_some() {
        let batch: Vec<StatusWrite> = writes.by_ref().take(batch).collect();
        metrics::histogram!("squall_urlfrontier_write_batch").record(batch.len() as f64);
        results.extend(store.store_telling(batch).await);
    }
    let mut results = results.into_iter();
    let mut urls = urls.into_iter();
    for (count, processed, reply) in shapes {
        let mut outcomes = Vec::with_capacity(count);
        for was_processed in processed.into_iter().take(count) {
            let url = urls.next().unwrap_or_default();
            let result = results
                .next()
                .unwrap_or_else(|| Err(StoreError::unavailable("the store gave no outcome")));
            outcomes.push(settle(dispenser, &url, was_processed, result));
        }
        let _ = reply.send(outcomes); // a client gone: its writes are done, only its acks are lost
    }
}

/// A written URL put back as processed is taken back from the dispenser and acked to the reader.
fn settle(
    dispenser: &Mutex<Dispenser>,
    url: &str,
    processed: bool,
    result: Result<Written, StoreError>,
) -> PutOutcome {
    match result {
        Ok(Written::Known) => PutOutcome::Known,
        Ok(_) => {
            if processed {
                let mut guard = dispenser
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let handle = guard.complete(url, Instant::now());
                drop(guard);
                if let Some(handle) = handle {
                    handle.ack();
                }
            }
            PutOutcome::Done
        }
        Err(error) => PutOutcome::Failed(format!("{:?}: {}", error.kind(), error.message())),
    }
}
