//! The write side of a frontier: the [`StatusStore`] trait and the writes it takes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{QueueReport, StoreError};
use crate::model::{CrawlUrl, Status};

/// One write to the frontier: a URL's status, when it is due next, the metadata to keep, and what
/// the fetch taught about the URL's queue.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusWrite {
    /// The URL and the metadata to persist.
    pub url: CrawlUrl,
    /// Its partition key.
    pub key: String,
    /// Its status.
    pub status: Status,
    /// When it is due next; `None` means never.
    pub next_fetch: Option<DateTime<Utc>>,
    /// What the fetch of this URL taught about its queue (Retry-After hold, robots.txt crawl
    /// delay), for frontiers that keep politeness state per queue; empty (the default) for
    /// outlinks and for writes that follow no fetch. Never stored with the URL.
    pub queue: QueueReport,
}

/// Where statuses are kept: the frontier's write side.
///
/// Semantics every implementation keeps (and the conformance suite checks):
/// - a DISCOVERED write is create-only: it never replaces an existing URL, and finding one is success;
/// - any other status replaces the URL's record, metadata included;
/// - a write reported `Ok` is durable.
#[async_trait]
pub trait StatusStore: Send + Sync {
    /// Writes a batch, returning one outcome per write, in order.
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>>;

    /// Writes a batch as [`store`](Self::store) does, telling for each write what it did: a
    /// URLFrontier server answers SKIPPED for a discovered URL that was [`Written::Known`]. The
    /// default tells [`Written::Stored`] for every success, for stores that cannot tell a created
    /// URL from a known one without a read.
    async fn store_telling(&self, batch: Vec<StatusWrite>) -> Vec<Result<Written, StoreError>> {
        let outcomes = self.store(batch).await;
        outcomes
            .into_iter()
            .map(|outcome| outcome.map(|()| Written::Stored))
            .collect()
    }

    /// Makes every earlier write visible to the spout (a no-op where writes are visible at once).
    async fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What a successful write did to the URL's record ([`StatusStore::store_telling`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Written {
    /// A DISCOVERED write created it: the URL is new.
    Created,
    /// A DISCOVERED write found it: the URL was known, and stays as it was.
    Known,
    /// Any other status replaced it (or created it, for a URL not known yet).
    Replaced,
    /// Written; the store does not tell which of the above.
    Stored,
}
