//! A frontier's three sides together, as a crawl or a server takes them.

use std::sync::Arc;

use super::{Catalog, Spout, StatusStore};

/// A frontier ready to use: what reads its due URLs, what takes status writes, and what lists,
/// counts and deletes what it holds; opened from configuration by `squall_engine::setup::open`,
/// used by [`CrawlerBuilder`](crate::topology::CrawlerBuilder) (spout and store) and by the
/// URLFrontier server (all three).
#[derive(derive_more::Debug)]
pub struct Frontier {
    /// Reads due URLs.
    #[debug(skip)]
    pub spout: Box<dyn Spout>,
    /// Takes status writes.
    #[debug(skip)]
    pub store: Arc<dyn StatusStore>,
    /// Lists, counts and deletes what the frontier holds.
    #[debug(skip)]
    pub catalog: Arc<dyn Catalog>,
    /// One line for people: where the frontier is (for an engine: its indices and how they were
    /// found, created now or existing, the routing and the spout).
    pub description: String,
}
