//! One crawl of the server: a frontier (spout, status store, catalog), the spout runner that reads
//! its due URLs, and the dispenser that hands them out.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use squall::frontier::{
    Catalog, CrawlRules, Frontier, QueueRules, RuleChange, StatusStore, StatusWrite, StoreError,
    UrlQuery,
};
use squall::message::{AckMessage, Tuple};
use squall::spout::{RunnerState, SpoutRunner, SpoutSettings};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::dispenser::{Ask, Dispenser, HandedOut};
use super::writer::{PutOutcome, WriteJob, write_loop};

/// How every crawl of a server runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlRunConfig {
    /// The reader's pacing and bound (`spout.*`, `topology.max.spout.pending`).
    pub runner: SpoutSettings,
    /// The gap between two holders of a queue, unless a client sets another
    /// (`fetcher.server.delay`).
    pub gap: Duration,
    /// The most writes in one frontier batch: `status.updater.batch.size`, and at least
    /// 2,000.
    pub write_batch: usize,
    /// Frontier batches written at once: [`ENGINE_WRITES_IN_FLIGHT`] on a frontier in the
    /// engine, whose batches mostly wait on round trips; 1 on the embedded frontier, whose
    /// transactions take turns anyway (and merge more when they wait).
    pub writes_in_flight: usize,
}

/// Frontier batches a crawl on a frontier in the engine writes at once. One at a time, a batch of
/// the queue frontier is three round trips in a row (known-URL check, queue edits, URL bulk) and
/// the engine sat at 0.62 of a core; in the `urlfrontier_servers` benchmark, one-run checks
/// alternating 1 and 3 on one node gave 15,455 and 15,599 new URLs/s and 8,327 and 8,584 URLs/s
/// got and put back with 1, against 17,854 and 20,399, and 13,138 and 17,048 with 3 (5 did no
/// better than 3).
pub const ENGINE_WRITES_IN_FLIGHT: usize = 3;

/// The least a server writes to its frontier in one batch when clients' PutURLs calls wait
/// together: a store's cost is per batch (a transaction of the embedded frontier, a bulk request
/// to the engine), and with the crawler's default of 200 the writer, not the frontier, bounded the
/// server (30,000 new URLs/s with 4 clients on the embedded frontier, 98,000 with 2,000, in the
/// `urlfrontier_servers` benchmark).
pub const MIN_WRITE_BATCH: usize = 2_000;

impl CrawlRunConfig {
    /// The settings `config` gives.
    pub fn from_config(config: &squall::config::CrawlConfig) -> Self {
        CrawlRunConfig {
            runner: config.spout.clone(),
            gap: config.fetcher.server_delay,
            write_batch: config.status.batch_size.max(MIN_WRITE_BATCH),
            writes_in_flight: match config.frontier.kind.as_str() {
                squall::frontier::EMBEDDED => 1,
                _ => ENGINE_WRITES_IN_FLIGHT,
            },
        }
    }
}

/// Puts the rules kept in the frontier in force at once, then reads them back every
/// [`RULES_READ_EVERY`] until the crawl is gone or stopped.
async fn read_rules_back(crawl: std::sync::Weak<Crawl>) {
    let mut first = true;
    loop {
        let Some(live) = crawl.upgrade() else { return };
        if live.stop.is_cancelled() {
            return;
        }
        match live.read_rules(first).await {
            Ok(()) => first = false,
            Err(error) => warn!(%error, "the rules kept in the frontier could not be read"),
        }
        let stop = live.stop.clone();
        drop(live);
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(RULES_READ_EVERY) => {}
        }
    }
}

/// One crawl: its frontier, reader and dispenser.
#[derive(derive_more::Debug)]
#[debug("Crawl {{ .. }}")]
pub struct Crawl {
    dispenser: Arc<Mutex<Dispenser>>,
    store: Arc<dyn StatusStore>,
    writer: mpsc::Sender<WriteJob>,
    catalog: Arc<dyn Catalog>,
    state: watch::Receiver<RunnerState>,
    stop: CancellationToken,
    tasks: tokio::sync::Mutex<Option<(JoinHandle<()>, JoinHandle<()>)>>,
    /// The gap between two holders of a queue when no `SetDelay` set one.
    gap: Duration,
    /// Held while rules are changed or read back, so that neither undoes the other.
    rules: tokio::sync::Mutex<CrawlRules>,
}

/// How often a crawl reads its rules back from a frontier that keeps them: what another server
/// over the same frontier set holds here within this.
pub const RULES_READ_EVERY: Duration = Duration::from_secs(2);

impl Crawl {
    /// Starts reading `frontier`'s due URLs; `catalog` lists what it holds.
    pub fn start(
        frontier: Frontier,
        catalog: Arc<dyn Catalog>,
        settings: &CrawlRunConfig,
    ) -> Arc<Crawl> {
        let gap = settings.gap;
        let (tuples, mut incoming) = mpsc::channel::<Tuple>(64);
        let (ack_sender, acks) = mpsc::unbounded_channel::<AckMessage>();
        let (state_sender, state) = watch::channel(RunnerState::default());
        let stop = CancellationToken::new();
        let dispenser = Arc::new(Mutex::new(Dispenser::new(gap)));
        // PutURLs' writes wake the reader, so that a URL put is handed out without waiting for
        // the reader's next scheduled query.
        let written = Arc::new(tokio::sync::Notify::new());
        let runner = SpoutRunner::new(frontier.spout, settings.runner.clone())
            .with_writes_signal(Arc::clone(&written));
        let runner_task =
            tokio::spawn(runner.run(tuples, ack_sender, acks, state_sender, stop.clone()));
        let feeding = Arc::clone(&dispenser);
        let feeder_task = tokio::spawn(async move {
            while let Some(tuple) = incoming.recv().await {
                lock(&feeding).add(tuple);
            }
        });
        let (writer, jobs) = mpsc::channel(64);
        let store = Arc::clone(&frontier.store);
        tokio::spawn(write_loop(
            store,
            Arc::clone(&dispenser),
            jobs,
            settings.write_batch,
            settings.writes_in_flight,
            written,
        ));
        let crawl = Arc::new(Crawl {
            dispenser,
            writer,
            store: frontier.store,
            catalog,
            state,
            stop,
            tasks: tokio::sync::Mutex::new(Some((runner_task, feeder_task))),
            gap,
            rules: tokio::sync::Mutex::new(CrawlRules::default()),
        });
        if crawl.catalog.keeps_rules() {
            tokio::spawn(read_rules_back(Arc::downgrade(&crawl)));
        }
        crawl
    }

    /// The crawl's own rules (default delay, active flag, log levels) as they are in force.
    pub async fn crawl_rules(&self) -> CrawlRules {
        self.rules.lock().await.clone()
    }

    /// Changes the crawl's own rules by `edit`: kept in the frontier first (when it keeps rules),
    /// then in force.
    pub async fn change_crawl_rules(
        &self,
        edit: impl FnOnce(&mut CrawlRules),
    ) -> Result<(), StoreError> {
        let mut rules = self.rules.lock().await;
        let mut changed = rules.clone();
        edit(&mut changed);
        if self.catalog.keeps_rules() {
            self.catalog
                .keep_rule(RuleChange::Crawl(changed.clone()))
                .await?;
        }
        lock(&self.dispenser).apply_crawl_rules(&changed, self.gap);
        *rules = changed;
        Ok(())
    }

    /// Changes queue `key`'s rules by `edit`: kept in the frontier first (when it keeps rules),
    /// then in force.
    pub async fn change_queue_rules(
        &self,
        key: &str,
        edit: impl FnOnce(&mut QueueRules),
    ) -> Result<(), StoreError> {
        let _rules = self.rules.lock().await;
        let mut changed = lock(&self.dispenser).queue_rules(key);
        edit(&mut changed);
        if self.catalog.keeps_rules() {
            let change = RuleChange::Queue(key.to_string(), changed.clone());
            self.catalog.keep_rule(change).await?;
        }
        lock(&self.dispenser).apply_queue_rules(key, &changed);
        Ok(())
    }

    /// Reads the rules back from the frontier and puts them in force; the first time, also counts
    /// the URLs already done in each queue with a crawl limit.
    async fn read_rules(&self, first: bool) -> Result<(), StoreError> {
        let mut in_force = self.rules.lock().await;
        let kept = self.catalog.rules().await?;
        if first {
            for (key, queue) in &kept.queues {
                if queue.limit.is_some() {
                    let done = UrlQuery {
                        key: Some(key.clone()),
                        scheduled: Some(false),
                        ..UrlQuery::default()
                    };
                    let count = self.catalog.count(&done).await?;
                    lock(&self.dispenser).count_completed(key, count);
                }
            }
        }
        lock(&self.dispenser).apply_rules(&kept, self.gap);
        *in_force = kept.crawl;
        Ok(())
    }

    /// Hands out what `ask` allows now.
    pub fn hand_out(&self, ask: &Ask) -> Vec<HandedOut> {
        let handed = lock(&self.dispenser).hand_out(ask, Instant::now(), SystemTime::now());
        metrics::counter!("squall_urlfrontier_handed_out_total").increment(handed.len() as u64);
        handed
    }

    /// Writes what a client put; a URL put back as processed (`processed[i]`) is then taken back
    /// from the dispenser and acked to the frontier's reader. One outcome per write, once durable.
    /// Writes of several clients waiting at once go to the frontier as one batch.
    pub async fn put(&self, writes: Vec<StatusWrite>, processed: Vec<bool>) -> Vec<PutOutcome> {
        let count = writes.len();
        let (reply, outcome) = oneshot::channel();
        let job = WriteJob {
            writes,
            processed,
            reply,
        };
        if self.writer.send(job).await.is_err() {
            return vec![PutOutcome::Failed("the crawl is stopping".to_string()); count];
        }
        outcome
            .await
            .unwrap_or_else(|_| vec![PutOutcome::Failed("the writer stopped".to_string()); count])
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

/// The dispenser's lock; a panic while it was held leaves state that is still consistent for
/// reading (every operation completes its changes before anything can panic), so poisoning is
/// ignored.
fn lock(dispenser: &Mutex<Dispenser>) -> MutexGuard<'_, Dispenser> {
    dispenser
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
