//! What the spout runner has in hand, told to the spout so it can read past it.

use std::sync::Arc;

use dashmap::{DashMap, DashSet};
use moka::sync::Cache;

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

    /// URLs in the topology and waiting for the fetcher (buffered or queued, not started), each
    /// with its queue's key, for spouts used outside a runner, e.g. in tests.
    pub fn waiting_of<I: IntoIterator<Item = (String, String)>>(urls: I) -> Self {
        let busy = BusyUrls::none();
        for (url, key) in urls {
            busy.tracked.insert(url.clone());
            busy.waiting.insert(url);
            *busy.waiting_per_key.entry(key).or_default() += 1;
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

    /// The URLs in the topology, as a set (for [`share`](Self::share)).
    pub(crate) fn tracked_set(&self) -> &DashSet<String> {
        &self.tracked
    }

    /// The same view with only `tracked` in the topology and `recently_done` done lately, the
    /// waiting counts and the purgatory shared: one spout instance's share
    /// ([`SpoutInstances`](crate::spout::SpoutInstances)).
    pub(crate) fn share(&self, tracked: DashSet<String>, recently_done: Vec<String>) -> BusyUrls {
        BusyUrls {
            tracked: Arc::new(tracked),
            recently_done: Arc::from(recently_done),
            ..self.clone()
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
    /// (within its [`write_visibility`](crate::frontier::Spout::write_visibility) and a second): a query that leaves
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
