//! Spouts: the frontier query strategies, and the runner that turns their answers into a steady,
//! polite stream of URLs.
//!
//! A [`Spout`] only knows how to ask its frontier for due URLs. The [`SpoutRunner`] around it owns
//! everything else: the buffer (round-robin over queues), the in-flight set, the purgatory, the pacing
//! of queries, and the acks and fails coming back from the topology.

mod buffer;
mod runner;

pub use buffer::UrlBuffer;
pub use runner::{RunnerSettings, RunnerState, SpoutRunner};

use std::sync::Arc;

use async_trait::async_trait;
use dashmap::DashSet;
use moka::sync::Cache;

use crate::model::CrawlUrl;

/// The URLs a spout need not return: buffered or in flight in the runner, or in the purgatory.
///
/// Spouts that can skip them while reading (the embedded frontier can) read further into the
/// frontier instead of returning URLs that the runner would discard.
#[derive(Clone)]
pub struct BusyUrls {
    tracked: Arc<DashSet<String>>,
    purgatory: Cache<String, ()>,
}

impl BusyUrls {
    /// An empty set, for spouts used outside a runner.
    pub fn none() -> Self {
        BusyUrls {
            tracked: Arc::new(DashSet::new()),
            purgatory: Cache::new(1),
        }
    }

    pub(crate) fn new(tracked: Arc<DashSet<String>>, purgatory: Cache<String, ()>) -> Self {
        BusyUrls { tracked, purgatory }
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
}
