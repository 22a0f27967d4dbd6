//! Spouts: the frontier query strategies, and the runner that turns their answers into a steady,
//! polite stream of URLs.
//!
//! A [`Spout`] only knows how to ask its frontier for due URLs. The [`SpoutRunner`] around it owns
//! everything else: the buffer (round-robin over queues), the in-flight set, the purgatory, the pacing
//! of queries, and the acks and fails coming back from the topology.
//!
//! Queries are driven by demand: as soon as the topology has taken every buffered URL into the
//! fetcher's queues, the runner asks again, at once if the last answer brought new URLs. What keeps a
//! host from filling the topology is its share: a spout returns at most `frontier.max.urls.per.bucket`
//! URLs per queue that are still waiting for the fetcher ([`BusyUrls::waiting_in`]). The minimum
//! delay between queries (`spout.min.delay.queries`) applies after an answer with nothing new (and
//! after a failed query); an ack after such an answer shortens it to the time the frontier takes to
//! show writes, and so does, for spouts that read past busy URLs, a queue whose last waiting URL the
//! fetcher has started.

mod buffer;
mod hints;
mod runner;
mod waiting;

pub use buffer::UrlBuffer;
pub use hints::{Lease, QueueHints, QueueReport};
pub use runner::{RunnerSettings, RunnerState, SpoutRunner};

use std::sync::Arc;

use async_trait::async_trait;
use dashmap::{DashMap, DashSet};
use moka::sync::Cache;

use crate::model::CrawlUrl;

/// The URLs a spout need not return: buffered or in flight in the runner, or in the purgatory.
///
/// Spouts that can skip them while reading (the embedded frontier can) read further into the
/// frontier instead of returning URLs that the runner would discard.
#[derive(Clone)]
pub struct BusyUrls {
    tracked: Arc<DashSet<String>>,
    waiting: Arc<DashSet<String>>,
    waiting_per_key: Arc<DashMap<String, usize>>,
    recently_done: Arc<[String]>,
    purgatory: Cache<String, ()>,
}

impl BusyUrls {
    /// A set of URLs in the topology (buffered or in flight, none waiting for the fetcher), for
    /// spouts used outside a runner, e.g. in tests.
    pub fn in_topology_of<I: IntoIterator<Item = String>>(urls: I) -> Self {
        let busy = BusyUrls::none();
        for url in urls {
            busy.tracked.insert(url);
        }
        busy
    }

    /// An empty set, for spouts used outside a runner.
    pub fn none() -> Self {
        BusyUrls {
            tracked: Arc::new(DashSet::new()),
            waiting: Arc::new(DashSet::new()),
            waiting_per_key: Arc::new(DashMap::new()),
            recently_done: Arc::from(Vec::new()),
            purgatory: Cache::new(1),
        }
    }

    pub(crate) fn new(
        tracked: Arc<DashSet<String>>,
        waiting: Arc<DashSet<String>>,
        waiting_per_key: Arc<DashMap<String, usize>>,
        recently_done: Arc<[String]>,
        purgatory: Cache<String, ()>,
    ) -> Self {
        BusyUrls {
            tracked,
            waiting,
            waiting_per_key,
            recently_done,
            purgatory,
        }
    }

    /// Whether `url` is busy.
    pub fn contains(&self, url: &str) -> bool {
        self.tracked.contains(url) || self.purgatory.contains_key(url)
    }

    /// Whether `url` is still in the topology (buffered or in flight), as opposed to done and
    /// waiting out the purgatory.
    pub fn in_topology(&self, url: &str) -> bool {
        self.tracked.contains(url)
    }

    /// Every URL still in the topology (buffered or in flight), for spouts that leave them out of
    /// their queries. At most `topology.max.spout.pending` plus what is buffered.
    pub fn in_topology_urls(&self) -> Vec<String> {
        self.tracked.iter().map(|url| url.key().clone()).collect()
    }

    /// URLs that left the topology so recently that the frontier may not show their writes yet
    /// (within its [`write_visibility`](Spout::write_visibility) and a second): a query that leaves
    /// them out does not get back, with their old dates, URLs that are already done.
    pub fn recently_done(&self) -> &[String] {
        &self.recently_done
    }

    /// Whether `url` is buffered or waiting in the fetcher's queue, not yet started: what counts
    /// toward a queue's share of the topology. A URL being fetched, parsed or written no longer
    /// does, so a busy host is paced by its politeness delay, not by the round trip of its writes.
    pub fn is_waiting(&self, url: &str) -> bool {
        self.waiting.contains(url)
    }

    /// How many URLs of queue `key` are waiting ([`is_waiting`](Self::is_waiting)): a spout that
    /// reads past busy URLs returns at most its per-queue share minus this, so that a host with a
    /// long backlog does not fill the topology while others wait.
    pub fn waiting_in(&self, key: &str) -> usize {
        self.waiting_per_key.get(key).map_or(0, |count| *count)
    }
}

/// Why a frontier query failed. The runner logs it, waits, and tries again.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SpoutError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl SpoutError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        SpoutError {
            message: message.into(),
            source: None,
        }
    }

    /// An error with a message and its cause.
    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SpoutError {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

/// A URL read from the frontier, with the queue it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueUrl {
    /// The URL and its stored metadata.
    pub url: CrawlUrl,
    /// Its partition key (host, domain or IP), as stored in the frontier.
    pub key: String,
    /// What the frontier says about the queue: a shared crawl delay, the lease to fetch under.
    pub hints: QueueHints,
}

impl DueUrl {
    /// A URL of queue `key`, with no hints.
    pub fn new(url: CrawlUrl, key: impl Into<String>) -> Self {
        DueUrl {
            url,
            key: key.into(),
            hints: QueueHints::default(),
        }
    }
}

/// A frontier query strategy: reads URLs that are due for fetching.
///
/// Implementations need not track what is in flight: the runner filters out URLs it has already
/// emitted and not yet heard back about, and URLs that are in the purgatory.
#[async_trait]
pub trait Spout: Send {
    /// Reads a batch of due URLs. An empty batch means nothing is due right now. URLs in `busy` may be
    /// skipped (the runner discards them anyway).
    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError>;

    /// Told when a URL it returned has been processed and its status written.
    async fn ack(&mut self, _url: &CrawlUrl) {}

    /// Told when a URL it returned could not be processed; it stays due in the frontier.
    async fn fail(&mut self, _url: &CrawlUrl) {}

    /// How long a write may take to become visible to this spout's queries (an index's refresh
    /// interval). The runner calls the crawl idle only after finding nothing for at least this long.
    fn visibility_delay(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// Whether a query can bring URLs of a queue beyond those busy in the topology (the spout skips
    /// busy URLs while reading). The runner then asks again as soon as the fetcher has started the
    /// last waiting URL of a queue, rather than after the minimum delay between queries.
    fn reads_past_busy(&self) -> bool {
        false
    }

    /// How long a status write takes to show in this spout's answers: zero for a store that shows
    /// writes at once, an index's refresh interval otherwise (the default: [`visibility_delay`]).
    /// After an answer with nothing new, an ack (a URL's writes are done, so new URLs may be due)
    /// lets the runner ask again once this has passed, rather than after the minimum delay.
    ///
    /// [`visibility_delay`]: Spout::visibility_delay
    fn write_visibility(&self) -> std::time::Duration {
        self.visibility_delay()
    }

    /// Whether the whole frontier is idle: nothing due and no queue held by any process. Asked
    /// only after this spout's own answers came back empty; a frontier shared by several processes
    /// answers for all of them, so that one process does not stop while another still holds work.
    /// The default, for frontiers one process owns, is `true`: its empty answers say it all.
    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        Ok(true)
    }

    /// Called once when the runner stops, after the URLs in flight came back: a spout that holds
    /// shared state (leases) gives it back here.
    async fn close(&mut self) {}
}
