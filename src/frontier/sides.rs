//! A frontier's three sides together, as a crawl or a server takes them.

use std::sync::Arc;

use std::time::Duration;

use super::{Catalog, Spout, StatusStore};

/// A frontier ready to use: what reads its due URLs, what takes status writes, and what lists,
/// counts and deletes what it holds; opened from configuration by the kind `frontier.kind` names
/// ([`Frontiers::open`](crate::config::Frontiers::open)), used by
/// [`CrawlerBuilder`](crate::topology::CrawlerBuilder) (spout and store), by the crawl binary (the
/// catalog counts what is left to crawl) and by the URLFrontier server (all three).
#[derive(derive_more::Debug)]
pub struct Frontier {
    /// Reads due URLs.
    #[debug(skip)]
    pub spout: Box<dyn Spout>,
    /// Takes status writes.
    #[debug(skip)]
    pub store: Arc<dyn StatusStore>,
    /// Lists, counts and deletes what the frontier holds; `None` for a frontier that cannot be
    /// listed from here (a URLFrontier server, seen by its client).
    #[debug(skip)]
    pub catalog: Option<Arc<dyn Catalog>>,
    /// One line for people: where the frontier is (for an engine: its indices and how they were
    /// found, created now or existing, the routing and the spout).
    pub description: String,
    /// The queues this process holds under leases, for a frontier shared by several processes
    /// (the queue frontier); `None` for one without leases.
    #[debug(skip)]
    pub leases: Option<Arc<dyn LeaseView>>,
}

/// A queue this process holds under a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLease {
    /// The queue's key.
    pub key: String,
    /// How long the lease holds from now, unless renewed.
    pub remaining: Duration,
}

/// The leases a frontier shared by several processes holds for this one, for live views.
pub trait LeaseView: Send + Sync {
    /// The queues held now, in key order.
    fn held(&self) -> Vec<HeldLease>;
}
