//! The crawler's live view: [`LiveCrawl`] gathers what a person watching a crawl wants to see (rates
//! over the last minutes, each stage's totals and latencies, the frontier's counts, the busiest and
//! slowest hosts, the last errors, what the crawl waits on) into the [`StatusDocument`] that the
//! status page draws and `/status.json` serves.
//!
//! Memory is fixed: rates keep the last few minutes, latencies the last minute, hosts a bounded
//! number, errors the last 25. The cost is a few atomic additions per event, a sample a step (5 s),
//! and a document made at most twice a second, only when someone asks.
//!
//! With the `live-page` feature, `live::serve` shows the view as the status page:
//!
#![cfg_attr(feature = "live-page", doc = "```no_run")]
#![cfg_attr(not(feature = "live-page"), doc = "```ignore")]
//! # async fn example(builder: squall::CrawlerBuilder) -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use squall::live::{self, LiveCrawl, LiveSettings};
//!
//! let view = LiveCrawl::new(LiveSettings::default());
//! let crawler = builder.live(&view).build()?;
//! let page = live::serve("127.0.0.1:9899".parse()?, Arc::new(view.clone())).await?;
//! println!("status page: {}", page.url());
//! crawler.run(squall::RunLimits::default()).await;
//! # Ok(())
//! # }
//! ```

mod compose;
mod frontier;
mod hosts;
mod tables;
mod tally;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use self::frontier::FrontierCounts;
use self::tally::Tally;
use super::cache::DocumentCache;
use super::document::StatusDocument;
use super::series::RateTrack;
use super::source::DocumentSource;
use crate::fetch::QueueBoard;
use crate::frontier::{Catalog, LeaseView};
use crate::message::CrawlObserver;
use crate::spout::RunnerState;

/// How long one slot of a latency window covers.
const LATENCY_SLOT: Duration = Duration::from_secs(10);
/// Slots of a latency window (with the above: the last minute).
const LATENCY_SLOTS: usize = 6;
/// The span the "per second" figures average.
const RECENT: Duration = Duration::from_secs(10);

/// What the live view keeps and how often it looks.
#[derive(Debug, Clone)]
pub struct LiveSettings {
    /// The time between two samples of the rates, the charts' resolution (default 5 s).
    pub step: Duration,
    /// How many samples a chart shows (default 60: five minutes).
    pub history: usize,
    /// Rows of the host tables (default 10).
    pub rows: usize,
    /// Hosts whose figures are remembered (default 2,000; the least recently seen go first).
    pub hosts_remembered: u64,
    /// The shortest time between two counts of the frontier (default 60 s; see
    /// [`LiveCrawl::count_frontier`]).
    pub frontier_period: Duration,
}

impl Default for LiveSettings {
    fn default() -> Self {
        LiveSettings {
            step: Duration::from_secs(5),
            history: 60,
            rows: 10,
            hosts_remembered: 2_000,
            frontier_period: Duration::from_secs(60),
        }
    }
}

impl LiveSettings {
    /// How many steps make `span` (at least one).
    fn steps_in(&self, span: Duration) -> usize {
        let steps = span.as_secs_f64() / self.step.as_secs_f64().max(1e-3);
        (steps.round() as usize).max(1)
    }
}

/// A crawl's live view; clones share it. See the [module docs](crate::live).
#[derive(Clone)]
pub struct LiveCrawl {
    inner: Arc<Inner>,
}

struct Inner {
    settings: LiveSettings,
    started: Instant,
    subtitle: Mutex<String>,
    tally: Arc<Tally>,
    board: QueueBoard,
    runner: Mutex<Option<watch::Receiver<RunnerState>>>,
    frontier: Arc<Mutex<FrontierCounts>>,
    frontier_readers: Arc<frontier::Readers>,
    counting: std::sync::atomic::AtomicBool,
    leases: Mutex<Option<Arc<dyn LeaseView>>>,
    tracks: Mutex<Tracks>,
    cached: DocumentCache,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The frontier's counter holds the frontier: it lets go with the view.
        self.frontier_readers.close();
    }
}

/// The rates the charts show.
struct Tracks {
    emitted: RateTrack,
    fetched: RateTrack,
    written: RateTrack,
    acked: RateTrack,
    bytes: RateTrack,
    errors: RateTrack,
    causes: Vec<(String, RateTrack)>,
    steps: u64,
}

impl LiveCrawl {
    /// A live view with nothing seen yet. Call it inside a tokio runtime: it samples the rates on
    /// a task of its own, which ends when the last clone is dropped.
    pub fn new(settings: LiveSettings) -> Self {
        let track = || RateTrack::new(0, settings.history);
        let inner = Arc::new(Inner {
            started: Instant::now(),
            subtitle: Mutex::new(String::new()),
            tally: Arc::new(Tally::new(LATENCY_SLOTS, settings.hosts_remembered)),
            board: QueueBoard::new(settings.rows),
            runner: Mutex::new(None),
            frontier: Arc::default(),
            frontier_readers: Arc::default(),
            counting: Default::default(),
            leases: Mutex::new(None),
            tracks: Mutex::new(Tracks {
                emitted: track(),
                fetched: track(),
                written: track(),
                acked: track(),
                bytes: track(),
                errors: track(),
                causes: Vec::new(),
                steps: 0,
            }),
            cached: DocumentCache::default(),
            settings,
        });
        spawn_sampler(Arc::downgrade(&inner));
        LiveCrawl { inner }
    }

    /// The observer to register with the crawler (done by [`CrawlerBuilder::live`]).
    ///
    /// [`CrawlerBuilder::live`]: crate::CrawlerBuilder::live
    pub fn observer(&self) -> Arc<dyn CrawlObserver> {
        self.inner.tally.clone()
    }

    /// The board the fetcher publishes its queues on (given to it by [`CrawlerBuilder::live`]).
    ///
    /// [`CrawlerBuilder::live`]: crate::CrawlerBuilder::live
    pub fn queue_board(&self) -> QueueBoard {
        self.inner.board.clone()
    }

    /// Follows the spout runner's state (done by [`CrawlerBuilder::live`]).
    ///
    /// [`CrawlerBuilder::live`]: crate::CrawlerBuilder::live
    pub fn watch_runner(&self, state: watch::Receiver<RunnerState>) {
        if let Ok(mut runner) = self.inner.runner.lock() {
            *runner = Some(state);
        }
    }

    /// Counts the frontier's URLs by status in the background, for the page's frontier table: at
    /// most every [`frontier_period`](LiveSettings::frontier_period), and never more than 1 % of
    /// the time (the pause after a count is 100 times what it took), while the counts are read
    /// (the page, the progress line, a metrics writer read them). Once; later calls do nothing.
    pub fn count_frontier(&self, catalog: Arc<dyn Catalog>) {
        use std::sync::atomic::Ordering;
        if self.inner.counting.swap(true, Ordering::SeqCst) {
            return;
        }
        frontier::spawn_counter(
            catalog,
            Arc::clone(&self.inner.frontier),
            Arc::clone(&self.inner.frontier_readers),
            self.inner.settings.frontier_period,
        );
    }

    /// Shows the queues this process holds under leases, and how long each lease has left (the
    /// queue frontier: `Frontier::leases`).
    pub fn show_leases(&self, leases: Arc<dyn LeaseView>) {
        if let Ok(mut shown) = self.inner.leases.lock() {
            *shown = Some(leases);
        }
    }

    /// The line under the page's title (e.g. the frontier and the engine).
    pub fn set_subtitle(&self, subtitle: impl Into<String>) {
        if let Ok(mut line) = self.inner.subtitle.lock() {
            *line = subtitle.into();
        }
    }
}

/// The few numbers a one-line progress display shows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Pages fetched (a server answered).
    pub pages: u64,
    /// Fetches per second over the last 10 s (the last steps that make 10 s).
    pub rate: f64,
    /// Body bytes received.
    pub bytes: u64,
    /// URLs that failed, or whose writes failed.
    pub errors: u64,
    /// URLs emitted and not yet acked or failed.
    pub in_flight: usize,
    /// URLs the frontier holds as DISCOVERED (never fetched), when it was counted.
    pub discovered: Option<u64>,
}

impl Progress {
    /// How long the DISCOVERED URLs take at the current rate (None when unknown or not moving).
    pub fn eta(&self) -> Option<Duration> {
        let left = self.discovered? as f64;
        (self.rate > 0.0).then(|| Duration::from_secs_f64(left / self.rate))
    }
}

impl LiveCrawl {
    /// The numbers of a progress line, as of now.
    pub fn progress(&self) -> Progress {
        use std::sync::atomic::Ordering;
        let inner = &self.inner;
        inner.frontier_readers.read();
        let rate = inner
            .tracks
            .lock()
            .map(|tracks| tracks.fetched.recent(inner.settings.steps_in(RECENT)))
            .unwrap_or_default();
        let discovered = inner.frontier.lock().ok().and_then(|counts| {
            counts.at?;
            let found = counts
                .by_status
                .iter()
                .find(|(s, _)| *s == crate::Status::Discovered);
            Some(found.map_or(0, |(_, n)| *n))
        });
        Progress {
            pages: inner.tally.answered.load(Ordering::Relaxed),
            rate,
            bytes: inner.tally.bytes.load(Ordering::Relaxed),
            errors: inner.tally.errors.load(Ordering::Relaxed),
            in_flight: compose::runner_state(inner).in_flight,
            discovered,
        }
    }
}

/// Running totals and current levels of a crawl, for writers of metrics (such as the metrics
/// index of `squall-engine`): totals only grow, levels are as of now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Fetch attempts completed (answered or not).
    pub fetches: u64,
    /// Fetch attempts a server answered.
    pub answered: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// URLs whose writes were made.
    pub written: u64,
    /// URLs whose writes failed.
    pub write_failures: u64,
    /// URLs that failed (FETCH_ERROR, ERROR) or whose writes failed.
    pub errors: u64,
    /// The same errors by cause (`HTTP 404`, `timeout`, `robots.txt`, ...).
    pub causes: Vec<(String, u64)>,
    /// The spout runner: emitted, acked, failed, in flight, buffered.
    pub runner: RunnerState,
    /// The fetcher's queues (their totals; the busiest are left out), as the fetcher published
    /// them after the previous call asked (a caller reading every few seconds sees that old a view).
    pub fetcher: crate::fetch::FetcherView,
    /// The frontier's URLs by status, when it was counted.
    pub frontier: Option<Vec<(crate::Status, u64)>>,
    /// Fetch times over the last minute, when there were fetches.
    pub fetch_latency: Option<crate::live::Percentiles>,
}

impl LiveCrawl {
    /// The running totals and current levels.
    pub fn totals(&self) -> Totals {
        use std::sync::atomic::Ordering;
        let inner = &self.inner;
        inner.frontier_readers.read();
        let tally = &inner.tally;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let mut fetcher = inner.board.view();
        fetcher.busiest.clear();
        let frontier = inner
            .frontier
            .lock()
            .ok()
            .filter(|counts| counts.at.is_some())
            .map(|counts| counts.by_status.clone());
        Totals {
            fetches: load(&tally.fetches),
            answered: load(&tally.answered),
            bytes: load(&tally.bytes),
            written: load(&tally.written),
            write_failures: load(&tally.write_failures),
            errors: load(&tally.errors),
            causes: tally.causes(),
            runner: compose::runner_state(inner),
            fetcher,
            frontier,
            fetch_latency: tally.fetch_latency.percentiles(),
        }
    }
}

impl DocumentSource for LiveCrawl {
    /// Asks the fetcher for its queues when the next document will be a new one.
    fn prepare(&self) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.inner.cached.is_fresh() {
                self.inner.board.fresh_view().await;
            }
        })
    }

    fn document(&self) -> Arc<StatusDocument> {
        self.inner.frontier_readers.read();
        compose::cached_document(&self.inner)
    }

    fn json(&self) -> Result<bytes::Bytes, serde_json::Error> {
        self.inner.frontier_readers.read();
        compose::cached_json(&self.inner)
    }
}

/// Samples the rates once a step, until the view is dropped.
fn spawn_sampler(inner: Weak<Inner>) {
    let step = inner
        .upgrade()
        .map_or(Duration::from_secs(1), |inner| inner.settings.step);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(step);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        let mut last = Instant::now();
        loop {
            ticks.tick().await;
            let Some(inner) = inner.upgrade() else { return };
            let now = Instant::now();
            compose::sample(&inner, now.duration_since(last).as_secs_f64());
            last = now;
        }
    });
}
