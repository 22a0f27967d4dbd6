//! One crawl of the server: a frontier (spout, status store, catalog), the spout runner that reads
//! its due URLs, and the dispenser that hands them out.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use squall::frontier::{Catalog, Spout, StatusStore, StatusWrite, StoreError};
use squall::message::{AckMessage, Tuple};
use squall::spout::{RunnerSettings, RunnerState, SpoutRunner};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::dispenser::{Ask, Dispenser, HandedOut};

/// A frontier's three sides, as the server uses them.
pub struct Backend {
    /// Reads due URLs.
    pub spout: Box<dyn Spout>,
    /// Takes status writes.
    pub store: Arc<dyn StatusStore>,
    /// Lists, counts and deletes.
    pub catalog: Arc<dyn Catalog>,
    /// One line for people: where the frontier is.
    pub description: String,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// One crawl: its frontier, reader and dispenser.
pub struct Crawl {
    dispenser: Arc<Mutex<Dispenser>>,
    store: Arc<dyn StatusStore>,
    catalog: Arc<dyn Catalog>,
    state: watch::Receiver<RunnerState>,
    stop: CancellationToken,
    tasks: tokio::sync::Mutex<Option<(JoinHandle<()>, JoinHandle<()>)>>,
}

impl std::fmt::Debug for Crawl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crawl").finish_non_exhaustive()
    }
}

/// The outcome of one write put by a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutOutcome {
    /// Durable.
    Done,
    /// The write failed; sending it again may work.
    Failed(String),
}

impl Crawl {
    /// Starts reading `backend`'s due URLs; `gap` is the default delay between two holders of a
    /// queue.
    pub fn start(backend: Backend, runner: RunnerSettings, gap: Duration) -> Arc<Crawl> {
        let (tuples, mut incoming) = mpsc::channel::<Tuple>(64);
        let (ack_sender, acks) = mpsc::unbounded_channel::<AckMessage>();
        let (state_sender, state) = watch::channel(RunnerState::default());
        let stop = CancellationToken::new();
        let dispenser = Arc::new(Mutex::new(Dispenser::new(gap)));
        let runner = SpoutRunner::new(backend.spout, runner);
        let runner_task =
            tokio::spawn(runner.run(tuples, ack_sender, acks, state_sender, stop.clone()));
        let feeding = Arc::clone(&dispenser);
        let feeder_task = tokio::spawn(async move {
            while let Some(tuple) = incoming.recv().await {
                lock(&feeding).add(tuple);
            }
        });
        Arc::new(Crawl {
            dispenser,
            store: backend.store,
            catalog: backend.catalog,
            state,
            stop,
            tasks: tokio::sync::Mutex::new(Some((runner_task, feeder_task))),
        })
    }

    /// Hands out what `ask` allows now.
    pub fn hand_out(&self, ask: &Ask) -> Vec<HandedOut> {
        let handed = lock(&self.dispenser).hand_out(ask, Instant::now(), SystemTime::now());
        metrics::counter!("squall_urlfrontier_handed_out_total").increment(handed.len() as u64);
        handed
    }

    /// Writes what clients put, in one batch; a URL put back as processed (`processed[i]`) is then
    /// taken back from the dispenser and acked to the frontier's reader. One outcome per write.
    pub async fn put(&self, writes: Vec<StatusWrite>, processed: Vec<bool>) -> Vec<PutOutcome> {
        let urls: Vec<String> = writes.iter().map(|w| w.url.url.to_string()).collect();
        let results = self.store.store(writes).await;
        let mut outcomes = Vec::with_capacity(results.len());
        for ((result, url), processed) in results.into_iter().zip(urls).zip(processed) {
            match result {
                Ok(()) => {
                    if processed {
                        let handle = lock(&self.dispenser).complete(&url, Instant::now());
                        if let Some(handle) = handle {
                            handle.ack();
                        }
                    }
                    outcomes.push(PutOutcome::Done);
                }
                Err(error) => outcomes.push(PutOutcome::Failed(describe(&error))),
            }
        }
        outcomes
    }

    /// The dispenser, for the rules clients set and the counts they read.
    pub fn dispenser(&self) -> MutexGuard<'_, Dispenser> {
        lock(&self.dispenser)
    }

    /// The frontier's catalog.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// Whether nothing is due, buffered or handed out (the reader's view, see
    /// [`RunnerState::idle`]).
    pub fn idle(&self) -> bool {
        self.state.borrow().idle
    }

    /// Stops: no more reads, every URL held or buffered is let go (it stays due in the frontier),
    /// and the reader gives back what it holds on the frontier (leases). Writes already acked are
    /// durable, so nothing is lost.
    pub async fn stop(&self) {
        self.stop.cancel();
        let Some((runner, feeder)) = self.tasks.lock().await.take() else {
            return;
        };
        if let Err(error) = feeder.await {
            warn!(%error, "the dispenser's feeder ended badly");
        }
        lock(&self.dispenser).clear();
        if let Err(error) = runner.await {
            warn!(%error, "the frontier's reader ended badly");
        }
        if let Err(error) = self.store.flush().await {
            warn!(%error, "the last writes could not be made visible");
        }
        info!("crawl stopped");
    }
}

fn describe(error: &StoreError) -> String {
    format!("{:?}: {}", error.kind(), error.message())
}

/// The dispenser's lock; a panic while it was held leaves state that is still consistent for
/// reading (every operation completes its changes before anything can panic), so poisoning is
/// ignored.
fn lock(dispenser: &Mutex<Dispenser>) -> MutexGuard<'_, Dispenser> {
    dispenser
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
