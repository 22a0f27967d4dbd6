//! `squall-frontier`'s live view: [`FrontierLive`] makes the status document of a server (its
//! crawls with their URLs by status, queues and URLs in process, its calls per second by kind, the
//! workers connected), which [`squall::live::serve`] serves as the same page the crawler has.
//!
//! Calls are counted by a layer on the gRPC server ([`CallBoard`]); the crawls' counts are taken
//! in the background, the pause after a count fifty times what it took (at least 2 s), so that a
//! large frontier is never counted more than 2 % of the time.

mod calls;
mod compose;

pub use calls::{CallBoard, PeerCalls};

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use squall::live::{DocumentCache, DocumentSource, RateTrack, StatusDocument};
use squall::model::Status;

use super::crawls::Crawls;

/// Samples of the call rates a chart shows (five minutes at one a second).
const HISTORY: usize = 300;
/// The shortest pause between two counts of the crawls.
const COUNT_PERIOD: Duration = Duration::from_secs(2);
/// How much longer than a count the pause after it is.
const PAUSE_FACTOR: u32 = 50;

/// One crawl's numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrawlCounts {
    /// The crawl ID.
    pub crawl: String,
    /// URLs by status (when counted).
    pub by_status: Vec<(Status, u64)>,
    /// URLs due now or later.
    pub scheduled: u64,
    /// Queues holding URLs due now or later.
    pub queues: u64,
    /// URLs handed out to workers and not yet put back.
    pub in_process: usize,
    /// URLs read from the frontier, waiting to be handed out.
    pub buffered: usize,
}

/// A server's live view; clones share it.
#[derive(Clone)]
pub struct FrontierLive {
    inner: Arc<Inner>,
}

struct Inner {
    crawls: Arc<Crawls>,
    calls: Arc<CallBoard>,
    subtitle: String,
    started: Instant,
    tracks: Mutex<Vec<(String, RateTrack)>>,
    counts: Mutex<Vec<CrawlCounts>>,
    counted: Mutex<Option<(Instant, Duration)>>,
    cached: DocumentCache,
}

impl FrontierLive {
    /// The view of the server of `crawls`, whose calls `calls` counts, named by `subtitle`. Call
    /// it inside a tokio runtime: it samples on a task of its own, until the last clone is dropped.
    pub fn new(crawls: Arc<Crawls>, calls: Arc<CallBoard>, subtitle: String) -> Self {
        let inner = Arc::new(Inner {
            crawls,
            calls,
            subtitle,
            started: Instant::now(),
            tracks: Mutex::new(Vec::new()),
            counts: Mutex::new(Vec::new()),
            counted: Mutex::new(None),
            cached: DocumentCache::default(),
        });
        spawn_sampler(Arc::downgrade(&inner));
        FrontierLive { inner }
    }
}

impl DocumentSource for FrontierLive {
    fn document(&self) -> Arc<StatusDocument> {
        compose::cached_document(&self.inner)
    }

    fn json(&self) -> Result<bytes::Bytes, serde_json::Error> {
        compose::cached_json(&self.inner)
    }
}

/// Once a second: the call rates, and the crawls' numbers (their catalogs counted when due).
fn spawn_sampler(inner: Weak<Inner>) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(Duration::from_secs(1));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        let mut last = Instant::now();
        let mut next_count = Instant::now();
        loop {
            ticks.tick().await;
            let Some(inner) = inner.upgrade() else { return };
            let now = Instant::now();
            sample_calls(&inner, now.duration_since(last).as_secs_f64());
            last = now;
            let count_now = now >= next_count;
            let took = refresh_crawls(&inner, count_now).await;
            if count_now {
                next_count = Instant::now() + COUNT_PERIOD.max(took * PAUSE_FACTOR);
            }
        }
    });
}

fn sample_calls(inner: &Inner, seconds: f64) {
    let kinds = inner.calls.kinds();
    let Ok(mut tracks) = inner.tracks.lock() else {
        return;
    };
    for (kind, total) in kinds {
        RateTrack::sample_named(&mut tracks, kind, total, seconds, HISTORY);
    }
}

/// Reads each crawl's URLs in process and buffered, and, with `count`, counts its catalog (the
/// counts before are kept otherwise, and when a count fails). Returns how long counting took.
async fn refresh_crawls(inner: &Inner, count: bool) -> Duration {
    let started = Instant::now();
    let before = inner.counts.lock().map(|c| c.clone()).unwrap_or_default();
    let mut fresh = Vec::new();
    for (id, crawl) in inner.crawls.all().await {
        let mut counts = before
            .iter()
            .find(|c| c.crawl == id)
            .cloned()
            .unwrap_or_else(|| CrawlCounts {
                crawl: id.clone(),
                ..CrawlCounts::default()
            });
        {
            let dispenser = crawl.dispenser();
            counts.in_process = dispenser.in_process(None);
            counts.buffered = dispenser.buffered();
        }
        if count {
            count_catalog(crawl.catalog().as_ref(), &mut counts).await;
        }
        fresh.push(counts);
    }
    let took = started.elapsed();
    if let Ok(mut counts) = inner.counts.lock() {
        *counts = fresh;
    }
    if count && let Ok(mut counted) = inner.counted.lock() {
        *counted = Some((Instant::now(), took));
    }
    took
}

async fn count_catalog(catalog: &dyn squall::frontier::Catalog, counts: &mut CrawlCounts) {
    if let Ok(census) = catalog.census().await {
        counts.by_status = census.by_status;
        counts.scheduled = census.scheduled;
        counts.queues = census.queues_scheduled;
    }
}
