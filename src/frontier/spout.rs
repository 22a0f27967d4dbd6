//! The read side of a frontier: the [`Spout`] trait and the URLs it returns.

use async_trait::async_trait;

use super::{BusyUrls, QueueHints, SpoutError};
use crate::model::CrawlUrl;

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
