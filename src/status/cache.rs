//! The outlink cache (StormCrawler's `status.updater.use.cache` and `status.updater.cache.spec`): a
//! bounded per-process set of URLs whose status this process has written, so that an outlink seen
//! again (a menu, a footer, a link back) is neither written nor looked up again.
//!
//! A URL enters the cache only once a write of it is durable, so a write that failed is sent
//! again when the link is next seen. The cache only ever leaves out DISCOVERED writes, which are
//! create-only: a URL already in the frontier stays as it is whether or not the write is sent.
//! (A URL deleted from the frontier while it is cached is found again once it leaves the cache.)

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use moka::sync::Cache;

use super::cache_spec::CacheSpec;

/// The cache itself: cheap to clone (clones share the URLs and the counts).
#[derive(Clone)]
pub struct OutlinkCache {
    urls: Cache<Arc<str>, ()>,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    lookups: AtomicU64,
    hits: AtomicU64,
}

impl std::fmt::Debug for OutlinkCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutlinkCache")
            .field("entries", &self.urls.entry_count())
            .field("lookups", &self.lookups())
            .field("hits", &self.hits())
            .finish()
    }
}

impl OutlinkCache {
    /// An empty cache bounded by `spec`.
    pub fn new(spec: &CacheSpec) -> Self {
        let mut builder = Cache::builder().max_capacity(spec.maximum_size);
        if let Some(idle) = spec.expire_after_access {
            builder = builder.time_to_idle(idle);
        }
        if let Some(live) = spec.expire_after_write {
            builder = builder.time_to_live(live);
        }
        OutlinkCache {
            urls: builder.build(),
            counts: Arc::new(Counts::default()),
        }
    }

    /// Whether `url`'s status was written by this process lately; counted as a lookup, and as a hit
    /// when it was (the `squall_status_cache_*` metrics too).
    pub fn seen(&self, url: &str) -> bool {
        // A lookup that finds it counts as an access, for expireAfterAccess.
        let hit = self.urls.get(url).is_some();
        self.counts.lookups.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("squall_status_cache_lookups_total").increment(1);
        if hit {
            self.counts.hits.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("squall_status_cache_hits_total").increment(1);
        }
        hit
    }

    /// Records that a write of `url` is durable.
    pub fn insert(&self, url: &str) {
        self.urls.insert(Arc::from(url), ());
    }

    /// Lookups so far.
    pub fn lookups(&self) -> u64 {
        self.counts.lookups.load(Ordering::Relaxed)
    }

    /// Lookups that found the URL.
    pub fn hits(&self) -> u64 {
        self.counts.hits.load(Ordering::Relaxed)
    }

    /// URLs held now (approximately: the cache settles its bookkeeping lazily).
    pub fn entries(&self) -> u64 {
        self.urls.run_pending_tasks();
        self.urls.entry_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_seen_once_inserted_and_hits_are_counted() {
        let cache = OutlinkCache::new(&CacheSpec::default());
        assert!(!cache.seen("http://a.test/"));
        cache.insert("http://a.test/");
        assert!(cache.seen("http://a.test/"));
        assert!(!cache.seen("http://a.test/other"));
        assert_eq!((cache.lookups(), cache.hits()), (3, 1));
        assert_eq!(cache.entries(), 1);
    }

    #[test]
    fn the_cache_stays_within_its_size() {
        let cache = OutlinkCache::new(&CacheSpec {
            maximum_size: 100,
            ..CacheSpec::default()
        });
        for i in 0..10_000 {
            cache.insert(&format!("http://a.test/{i}"));
        }
        assert!(cache.entries() <= 100, "{}", cache.entries());
    }
}
