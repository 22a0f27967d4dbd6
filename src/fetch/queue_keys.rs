//! The fetcher's side of partitioning: each arriving URL's queue, without ever blocking the
//! fetcher's loop. The key the frontier gave it is used as it is, unless byIP asks the
//! [`Partitioner`] for its address; those lookups run beside the loop, so that host names served
//! from one address share one politeness queue even when the frontier keyed them otherwise (seeds
//! written before, another process's keys). A host that does not resolve gives its URL FETCH_ERROR
//! (`error.cause` `connection`), without a request.

use tokio::task::JoinSet;

use super::partition::Partitioner;
use crate::frontier::QueueReport;
use crate::message::{FetchFailure, FetchOutcome, FetchedPage, Tuple};
use crate::model::{PartitionMode, Status, keys};
use crate::protocol::ResolveError;

/// A URL whose host was looked up, with its queue or why it has none.
pub(super) type Looked = (Result<String, ResolveError>, Tuple);

/// Gives each URL its fetch queue; see the module docs.
pub(super) struct QueueKeys {
    partitioner: Option<Partitioner>,
    lookups: JoinSet<Looked>,
}

impl QueueKeys {
    /// Queues by the frontier's key, or by resolved address when `partitioner` is byIP.
    pub fn new(partitioner: Option<Partitioner>) -> Self {
        let partitioner = partitioner.filter(|p| p.mode() == PartitionMode::ByIp);
        QueueKeys {
            partitioner,
            lookups: JoinSet::new(),
        }
    }

    /// `tuple` with its queue when it is known now; otherwise its host is looked up and the URL
    /// comes back from [`looked_up`](Self::looked_up).
    pub fn admit(&mut self, tuple: Tuple) -> Option<(String, Tuple)> {
        let Some(partitioner) = &self.partitioner else {
            return Some((tuple.key.clone(), tuple));
        };
        if let Some(key) = partitioner.key_without_lookup(&tuple.url.url, &tuple.url.metadata) {
            return Some((key, tuple));
        }
        let partitioner = partitioner.clone();
        self.lookups.spawn(async move {
            let key = partitioner.key(&tuple.url.url, &tuple.url.metadata).await;
            (key, tuple)
        });
        None
    }

    /// URLs whose host is being looked up.
    pub fn pending(&self) -> usize {
        self.lookups.len()
    }

    /// The next URL whose lookup ended; `None` when none is pending. (A lookup task that died
    /// dropped its URL, whose ack handle then fails it back to the spout.)
    pub async fn looked_up(&mut self) -> Option<Looked> {
        loop {
            match self.lookups.join_next().await? {
                Ok(looked) => return Some(looked),
                Err(error) => tracing::warn!(%error, "a host lookup task died"),
            }
        }
    }

    /// Stops the lookups still running: their URLs are dropped, which fails them back to the spout.
    pub fn abandon(&mut self) -> usize {
        let pending = self.lookups.len();
        self.lookups.abort_all();
        pending
    }
}

/// The page of a URL whose host does not resolve: FETCH_ERROR, no request made.
pub(super) fn unresolved(mut tuple: Tuple, error: &ResolveError) -> FetchedPage {
    let cause = FetchFailure::Connection;
    tuple.url.metadata.set(keys::ERROR_CAUSE, cause.as_str());
    tuple.ack.started();
    FetchedPage {
        tuple,
        record: None,
        outcome: FetchOutcome::Failed {
            status: Status::FetchError,
            cause,
            message: format!("{error} (needed for its queue: partition.url.mode byIP)"),
        },
        sitemaps: Vec::new(),
        queue: QueueReport::default(),
    }
}
