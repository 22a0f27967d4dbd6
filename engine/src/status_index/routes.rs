//! Where the documents read from the status index live, so that their updates go there.
//!
//! A status document is found on the shard its routing chose when it was written: the key when the
//! writer routes by key (StormCrawler's `es.status.routing: true`), its own `_id` otherwise. An update
//! written with another routing does not replace the document: it creates a second one with the same
//! `_id` on another shard, and the original stays as it was (DISCOVERED and due, fetched again and
//! again). Indices filled by other tools, or by StormCrawler with routing off, hold unrouted
//! documents; a search hit tells which, by its `_routing` (absent when the document has none).
//!
//! [`DocumentRoutes`] carries that fact from the spouts, which read the hits, to the writer, which
//! writes the URL's next status.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use dashmap::DashMap;

use crate::client::SearchHit;

/// How a document found in the index was routed when it was written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Routing {
    /// Written without routing: it lives on the shard of its `_id`.
    Unrouted,
    /// Written with this routing value (the key, when squall or StormCrawler routed it).
    Routed(String),
}

impl Routing {
    /// The routing of a search hit: its `_routing`, or [`Routing::Unrouted`] when it has none.
    pub fn of_hit(hit: &SearchHit) -> Routing {
        match &hit.routing {
            Some(routing) => Routing::Routed(routing.clone()),
            None => Routing::Unrouted,
        }
    }
}

/// The routing of the documents a spout returned and the writer has not yet updated, by URL.
///
/// A cheap handle (clones share one map), safe to use from any task. The status-index spouts
/// ([`AggregationSpout`], [`CollapsingSpout`], [`HybridSpout`], each with `with_routes`) record the
/// routing of every hit they turn into a URL; the writer ([`EsStatusStore`], whose
/// [`EsStatusStore::routes`] gives the handle to share) writes a non-DISCOVERED status of such a URL
/// with the recorded routing and, once the write succeeded, removes the record.
///
/// Memory stays bounded by the URLs in flight: a record is made when the spout returns a URL that
/// is not busy, and removed when that URL's status is written, which ends its trip through the
/// topology. What is left over at any time is the URLs between those two points (buffered, being
/// fetched or parsed, waiting for their write), plus those whose write failed or that were dropped
/// at shutdown; the spout records such a URL again (replacing, not adding) when it returns it again.
///
/// [`AggregationSpout`]: crate::status_index::spouts::AggregationSpout
/// [`CollapsingSpout`]: crate::status_index::spouts::CollapsingSpout
/// [`HybridSpout`]: crate::status_index::spouts::HybridSpout
/// [`EsStatusStore`]: crate::EsStatusStore
/// [`EsStatusStore::routes`]: crate::EsStatusStore::routes
#[derive(Debug, Clone, Default)]
pub struct DocumentRoutes {
    by_url: Arc<DashMap<String, ReadDocument>>,
}

/// What a spout read of a document, for its next write.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ReadDocument {
    routing: Routing,
    /// Its creation date as read (`Some(None)`: undated); `None` when the reader did not say.
    created: Option<Option<DateTime<Utc>>>,
}

impl DocumentRoutes {
    /// An empty record.
    pub fn new() -> Self {
        DocumentRoutes::default()
    }

    /// Records that the document of `url` was read with `routing`, replacing an earlier record;
    /// its creation date is not known (the writer keeps whatever the document holds).
    pub fn record(&self, url: &str, routing: Routing) {
        let read = ReadDocument {
            routing,
            created: None,
        };
        self.by_url.insert(url.to_string(), read);
    }

    /// Records that the document of `url` was read with `routing` and creation date `created`
    /// (`None`: undated), replacing an earlier record: the writer's next replacement of it carries
    /// that date.
    pub fn record_read(&self, url: &str, routing: Routing, created: Option<DateTime<Utc>>) {
        let read = ReadDocument {
            routing,
            created: Some(created),
        };
        self.by_url.insert(url.to_string(), read);
    }

    /// The recorded routing of `url`'s document, if a spout returned it and it was not updated since.
    pub fn get(&self, url: &str) -> Option<Routing> {
        self.by_url
            .get(url)
            .map(|entry| entry.value().routing.clone())
    }

    /// The creation date read with `url`'s document: `Some(None)` when it was undated, `None` when
    /// nothing says.
    pub fn created(&self, url: &str) -> Option<Option<DateTime<Utc>>> {
        self.by_url.get(url).and_then(|entry| entry.value().created)
    }

    /// Forgets `url` (its document was updated); returns what was recorded.
    pub fn remove(&self, url: &str) -> Option<Routing> {
        self.by_url.remove(url).map(|(_, read)| read.routing)
    }

    /// The number of URLs recorded.
    pub fn len(&self) -> usize {
        self.by_url.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.by_url.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(json: serde_json::Value) -> SearchHit {
        serde_json::from_value(json).expect("a hit")
    }

    #[test]
    fn a_hit_without_routing_is_unrouted() {
        assert_eq!(
            Routing::of_hit(&hit(json!({ "_id": "a" }))),
            Routing::Unrouted
        );
        assert_eq!(
            Routing::of_hit(&hit(json!({ "_id": "a", "_routing": "host.test" }))),
            Routing::Routed("host.test".into())
        );
    }

    #[test]
    fn clones_share_the_records_and_removal_empties_them() {
        let routes = DocumentRoutes::new();
        let writer = routes.clone();
        routes.record("http://a.test/", Routing::Unrouted);
        routes.record("http://a.test/", Routing::Routed("a.test".into()));
        assert_eq!(writer.len(), 1);
        assert_eq!(
            writer.get("http://a.test/"),
            Some(Routing::Routed("a.test".into()))
        );
        assert_eq!(
            writer.remove("http://a.test/"),
            Some(Routing::Routed("a.test".into()))
        );
        assert!(routes.is_empty());
        assert_eq!(routes.get("http://a.test/"), None);
    }
}
