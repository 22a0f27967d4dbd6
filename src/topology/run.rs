//! Running a crawler: the stages as tasks, the limits, and a graceful stop.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info, info_span, warn};

use super::seeds::SeedFilters;
use crate::config::CrawlConfig;
use crate::fetch::FetcherBolt;
use crate::frontier::Spout;
use crate::frontier::StatusStore;
use crate::index::ContentIndexer;
use crate::message::{CrawlObserver, CrawlStats};
use crate::model::Status;
use crate::parse::ParserBolt;
use crate::schedule::Scheduler;
use crate::spout::{RunnerState, SpoutRunner};
use crate::status::{StatusUpdater, UpdaterContext};
use crate::warc::WarcWriter;

pub(crate) struct Parts {
    pub(crate) config: CrawlConfig,
    pub(crate) spout: Box<dyn Spout>,
    pub(crate) store: Arc<dyn StatusStore>,
    pub(crate) fetcher: FetcherBolt,
    pub(crate) parser: ParserBolt,
    pub(crate) indexer: Option<ContentIndexer>,
    pub(crate) updater_context: UpdaterContext,
    pub(crate) observer: Arc<dyn CrawlObserver>,
    pub(crate) page_sinks: Vec<Arc<dyn crate::message::PageSink>>,
    pub(crate) stats: Arc<CrawlStats>,
    pub(crate) seed_filters: SeedFilters,
    pub(crate) scheduler: Arc<dyn Scheduler>,
    pub(crate) archive: Option<WarcWriter>,
}

/// When a run stops by itself. Built from [`RunLimits::default`] (no limit: the run goes on until
/// stopped) or [`RunLimits::until_idle`], then the `with_` methods; new limits may come (the type
/// is `#[non_exhaustive]`), each off by default.
///
/// ```
/// use std::time::Duration;
/// use squall::RunLimits;
///
/// let limits = RunLimits::until_idle().with_max_duration(Duration::from_secs(60));
/// assert!(limits.until_idle);
/// assert_eq!(limits.max_pages, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct RunLimits {
    /// Stop emitting once servers answered this many fetches (those in flight still finish).
    pub max_pages: Option<u64>,
    /// Stop after this long.
    pub max_duration: Option<Duration>,
    /// Stop once nothing is due, buffered or in flight.
    pub until_idle: bool,
}

impl RunLimits {
    /// Stop once nothing is due, buffered or in flight.
    pub fn until_idle() -> Self {
        RunLimits::default().with_until_idle(true)
    }

    /// These limits, stopping (or not) once nothing is due, buffered or in flight.
    #[must_use]
    pub fn with_until_idle(mut self, until_idle: bool) -> Self {
        self.until_idle = until_idle;
        self
    }

    /// These limits, stopping once servers answered `pages` fetches (`None`: no such limit).
    #[must_use]
    pub fn with_max_pages(mut self, pages: impl Into<Option<u64>>) -> Self {
        self.max_pages = pages.into();
        self
    }

    /// These limits, stopping after `duration` (`None`: no such limit).
    #[must_use]
    pub fn with_max_duration(mut self, duration: impl Into<Option<Duration>>) -> Self {
        self.max_duration = duration.into();
        self
    }
}

/// Why a run ended. New reasons may come (the type is `#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// [`Crawler::stop_token`] was cancelled (Ctrl-C in the crawl binary).
    Requested,
    /// `max_pages` was reached.
    MaxPages,
    /// `max_duration` passed.
    MaxDuration,
    /// Nothing was left to do.
    Idle,
    /// A stage ended on its own (see the log for why).
    StageFailed,
}

/// The outcome of a run. New figures may come (the type is `#[non_exhaustive]`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CrawlSummary {
    /// Why it ended.
    pub stop_reason: StopReason,
    /// URLs processed, per status.
    pub statuses: Vec<(Status, u64)>,
    /// Fetches that got an answer from a server.
    pub pages: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Distinct partition keys (hosts, domains or IPs) processed.
    pub hosts: u64,
    /// URLs whose writes failed (they stay due in the frontier).
    pub write_failures: u64,
    /// Wall-clock seconds.
    pub elapsed_seconds: f64,
    /// Whether every stage stopped within `topology.shutdown.timeout`.
    pub clean_shutdown: bool,
}

impl fmt::Display for CrawlSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = if self.elapsed_seconds > 0.0 {
            self.pages as f64 / self.elapsed_seconds
        } else {
            0.0
        };
        writeln!(
            f,
            "crawl stopped ({:?}) after {:.1} s: {} pages, {} bytes, {} hosts, {:.1} pages/s",
            self.stop_reason, self.elapsed_seconds, self.pages, self.bytes, self.hosts, rate
        )?;
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(status, n)| format!("{status} {n}"))
            .collect();
        write!(f, "statuses: {}", statuses.join(", "))?;
        if self.write_failures > 0 {
            write!(
                f,
                "\nstatus writes failed for {} URLs (they stay due)",
                self.write_failures
            )?;
        }
        if !self.clean_shutdown {
            write!(
                f,
                "\nsome stages did not stop within topology.shutdown.timeout"
            )?;
        }
        Ok(())
    }
}

/// A built crawler: inject seeds, then run it.
pub struct Crawler {
    pub(super) parts: Parts,
    stop: CancellationToken,
    state_tx: watch::Sender<RunnerState>,
}

impl Crawler {
    pub(crate) fn new(parts: Parts) -> Self {
        Crawler {
            parts,
            stop: CancellationToken::new(),
            state_tx: watch::Sender::new(RunnerState::default()),
        }
    }

    /// Cancel this token to stop the crawl gracefully.
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Running totals, readable while the crawl runs.
    pub fn stats(&self) -> Arc<CrawlStats> {
        Arc::clone(&self.parts.stats)
    }

    /// The spout runner's state (in flight, buffered, emitted, idle), updated as it changes.
    pub fn state(&self) -> watch::Receiver<RunnerState> {
        self.state_tx.subscribe()
    }

    /// Runs until a limit is reached or the stop token is cancelled, then drains every stage, writes
    /// the last statuses and returns the summary.
    pub async fn run(self, limits: RunLimits) -> CrawlSummary {
        let started = Instant::now();
        let Crawler {
            mut parts,
            stop,
            state_tx,
        } = self;
        let state_rx = state_tx.subscribe();
        let store = Arc::clone(&parts.store);
        let stats = Arc::clone(&parts.stats);
        let shutdown_timeout = parts.config.topology.shutdown_timeout;
        let archive = parts.archive.take();
        let mut tasks = spawn_stages(parts, state_tx, &stop);
        let stop_reason = wait_for_stop(&limits, &stats, state_rx, &stop).await;
        info!(?stop_reason, "stopping the crawl: draining every stage");
        stop.cancel();
        let mut clean_shutdown = drain(&mut tasks, shutdown_timeout).await;
        if let Err(error) = store.flush().await {
            warn!(%error, "final flush of the status store failed");
            clean_shutdown = false;
        }
        if let Some(archive) = archive {
            clean_shutdown &= finish_archive(archive).await;
        }
        CrawlSummary {
            stop_reason,
            statuses: Status::ALL.iter().map(|s| (*s, stats.count(*s))).collect(),
            pages: stats.pages(),
            bytes: stats.bytes(),
            hosts: stats.hosts(),
            write_failures: stats.write_failures(),
            elapsed_seconds: started.elapsed().as_secs_f64(),
            clean_shutdown,
        }
    }
}

/// Closes the last WARC file; whether every exchange was archived.
async fn finish_archive(archive: WarcWriter) -> bool {
    match archive.finish().await {
        Ok(report) => {
            info!(
                files = report.files.len(),
                records = report.records,
                failed = report.failed,
                "WARC output finished"
            );
            report.failed == 0
        }
        Err(error) => {
            tracing::error!(%error, "WARC output did not finish cleanly");
            false
        }
    }
}

/// Joins the stages with channels and starts each as a task. The channels between stages are
/// bounded; the ack channel back to the spout runner is not, and needs no bound: every URL in flight
/// (at most `topology.max.spout.pending`) sends at most two messages on it (started, then its
/// outcome), so it never holds more than twice that.
fn spawn_stages(
    parts: Parts,
    state_tx: watch::Sender<RunnerState>,
    stop: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    let (fetch_tx, fetch_rx) = mpsc::channel(parts.config.fetcher.threads_number.max(16));
    let (parse_tx, parse_rx) = mpsc::channel(64);
    let (status_tx, status_rx) = mpsc::channel(parts.config.status.batch_size.max(64));
    let (ack_tx, ack_rx) = mpsc::unbounded_channel();
    let runner = SpoutRunner::new(parts.spout, parts.config.spout.clone());
    let updater = StatusUpdater::new(
        parts.store,
        parts.config.status.clone(),
        parts.updater_context,
        parts.observer,
    )
    .flush_when_waited_on(state_tx.subscribe())
    .page_sinks(parts.page_sinks);
    // With an indexer, parsed pages pass through it: a URL reaches the status updater only once
    // its content is durable.
    let (status_tx, mut tasks) = match parts.indexer {
        Some(indexer) => {
            let (index_tx, index_rx) = mpsc::channel(parts.config.status.batch_size.max(64));
            let task = tokio::spawn(
                indexer
                    .flush_when_waited_on(state_tx.subscribe())
                    .run(index_rx, status_tx)
                    .instrument(info_span!("indexer")),
            );
            (index_tx, vec![task])
        }
        None => (status_tx, Vec::new()),
    };
    tasks.extend([
        tokio::spawn(
            runner
                .run(fetch_tx, ack_tx, ack_rx, state_tx, stop.clone())
                .instrument(info_span!("spout")),
        ),
        tokio::spawn(
            parts
                .fetcher
                .run(fetch_rx, parse_tx, stop.clone())
                .instrument(info_span!("fetcher")),
        ),
        tokio::spawn(
            parts
                .parser
                .run(parse_rx, status_tx)
                .instrument(info_span!("parser")),
        ),
        tokio::spawn(
            updater
                .run(status_rx)
                .instrument(info_span!("status_updater")),
        ),
    ]);
    tasks
}

/// Waits for the first of the run's limits, a stop request, or a stage that failed.
async fn wait_for_stop(
    limits: &RunLimits,
    stats: &CrawlStats,
    mut state_rx: watch::Receiver<RunnerState>,
    stop: &CancellationToken,
) -> StopReason {
    let deadline = limits.max_duration.map(|d| tokio::time::Instant::now() + d);
    loop {
        if let Some(max) = limits.max_pages
            && stats.answered() >= max
        {
            return StopReason::MaxPages;
        }
        if limits.until_idle && state_rx.borrow().idle {
            return StopReason::Idle;
        }
        let until =
            deadline.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            _ = stop.cancelled() => return StopReason::Requested,
            _ = tokio::time::sleep_until(until), if deadline.is_some() => return StopReason::MaxDuration,
            changed = state_rx.changed() => {
                // The runner goes away when asked to stop (both branches may be ready at once,
                // and select! picks either), and otherwise only when a stage after it is gone.
                if changed.is_err() {
                    return if stop.is_cancelled() {
                        StopReason::Requested
                    } else {
                        StopReason::StageFailed
                    };
                }
            }
            _ = stats.answered_grew(), if limits.max_pages.is_some() => {}
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// Lets every stage finish within the shutdown deadline, or cuts them short (their unwritten URLs
/// fail back and stay due in the frontier). Whether the stop was clean.
async fn drain(tasks: &mut [JoinHandle<()>], shutdown_timeout: Duration) -> bool {
    let drained = futures::future::join_all(tasks.iter_mut());
    match tokio::time::timeout(shutdown_timeout, drained).await {
        Ok(results) => {
            let mut clean = true;
            for error in results.into_iter().filter_map(Result::err) {
                warn!(%error, "a stage ended abnormally");
                clean = false;
            }
            clean
        }
        Err(_) => {
            warn!(
                ?shutdown_timeout,
                "stages did not stop in time; cutting them short"
            );
            for task in tasks.iter() {
                task.abort();
            }
            false
        }
    }
}
