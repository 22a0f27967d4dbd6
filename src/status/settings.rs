//! The status updater's settings: its `status.updater.*` keys, read straight from the
//! configuration (each field names its key, and `Default` holds each key's default).

use std::time::Duration;

use serde_with::{As, DisplayFromStr};

use super::{CacheSpec, OutlinkCache};
use crate::settings::{KeyedSettings, at_least_one, keyed_settings, units};

keyed_settings! {
    /// How the status updater batches its writes and which outlinks it leaves out.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct StatusSettings {
        /// `status.updater.batch.size`: status writes sent to the store together.
        "status.updater.batch.size" => batch_size: usize = 200,
        /// `status.updater.flush.interval`: seconds before a partial batch is written anyway. In a
        /// crawl (the topology), a partial batch that holds every URL in flight is written at once:
        /// the crawl waits on it.
        "status.updater.flush.interval" with "units::seconds" => flush_interval: Duration =
            Duration::from_secs(1),
        /// `status.updater.use.cache`: leave out the DISCOVERED writes of URLs this process wrote
        /// lately (an outlink seen again is neither written nor looked up again).
        "status.updater.use.cache" => use_cache: bool = true,
        /// `status.updater.cache.spec`: the bounds of that cache, as a Caffeine spec
        /// (`maximumSize=N`, `expireAfterAccess=D`, `expireAfterWrite=D`; D such as 30s, 10m, 1h,
        /// 1d).
        "status.updater.cache.spec" with "As::<DisplayFromStr>" => cache_spec: CacheSpec = CacheSpec::default(),
        /// `metadata.persist`: metadata keys stored with a URL's status (trailing `*` wildcards
        /// allowed); the keys of `metadata.transfer` are stored too.
        "metadata.persist" => persist: Vec<String> =
            ["_redirTo", "error.cause", "error.source", "isSitemap", "isFeed"] .map(String::from) .to_vec(),
    }
}

impl StatusSettings {
    /// A new outlink cache with the bounds of `status.updater.cache.spec`, when
    /// `status.updater.use.cache` is on.
    pub fn outlink_cache(&self) -> Option<OutlinkCache> {
        self.use_cache.then(|| OutlinkCache::new(&self.cache_spec))
    }
}

impl KeyedSettings for StatusSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        at_least_one(&[("status.updater.batch.size", self.batch_size)])
    }
}
