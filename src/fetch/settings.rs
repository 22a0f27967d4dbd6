//! The fetcher's settings: its `fetcher.*` keys, read straight from the configuration (each field
//! names its key, and `Default` holds each key's default).

use std::num::NonZeroU32;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::settings::KeyedSettings;

/// Politeness and concurrency settings of the fetcher: the `fetcher.*` keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FetcherSettings {
    /// `fetcher.server.delay`: seconds from the end of one fetch to the start of the next on a
    /// queue.
    #[serde(
        rename = "fetcher.server.delay",
        with = "crate::settings::units::seconds"
    )]
    pub server_delay: Duration,
    /// `fetcher.server.min.delay`: seconds; the delay used instead when a queue allows several
    /// fetches at once.
    #[serde(
        rename = "fetcher.server.min.delay",
        with = "crate::settings::units::seconds"
    )]
    pub server_min_delay: Duration,
    /// `fetcher.server.delay.force`: keep `fetcher.server.delay` when robots.txt asks for less.
    #[serde(rename = "fetcher.server.delay.force")]
    pub server_delay_force: bool,
    /// `fetcher.threads.per.queue`: fetches at once on one queue.
    #[serde(rename = "fetcher.threads.per.queue")]
    pub threads_per_queue: usize,
    /// `fetcher.threads.number`: fetches at once over all queues.
    #[serde(rename = "fetcher.threads.number")]
    pub threads_number: usize,
    /// `fetcher.max.urls.in.queues`: URLs waiting in the fetcher's queues before it stops taking
    /// more. -1: no limit of its own (`topology.max.spout.pending` still bounds them).
    #[serde(
        rename = "fetcher.max.urls.in.queues",
        with = "crate::settings::units::count_or_unlimited"
    )]
    pub max_urls_in_queues: usize,
    /// `fetcher.max.crawl.delay`: seconds; a robots.txt Crawl-delay above this gives the URL
    /// ERROR...
    #[serde(
        rename = "fetcher.max.crawl.delay",
        with = "crate::settings::units::seconds"
    )]
    pub max_crawl_delay: Duration,
    /// `fetcher.max.crawl.delay.force`: ...unless this is set: then the delay is capped at
    /// `fetcher.max.crawl.delay`.
    #[serde(rename = "fetcher.max.crawl.delay.force")]
    pub max_crawl_delay_force: bool,
    /// `fetcher.max.retry.after`: seconds; the longest Retry-After hold honoured on 429 and 503.
    #[serde(
        rename = "fetcher.max.retry.after",
        with = "crate::settings::units::seconds"
    )]
    pub max_retry_after: Duration,
    /// `fetcher.max.fetches.per.second`: a cap over all queues; 0 for none.
    #[serde(
        rename = "fetcher.max.fetches.per.second",
        with = "crate::settings::units::zero_is_none"
    )]
    pub max_fetches_per_second: Option<NonZeroU32>,
    /// On stop, how long fetches already started may take to finish before they are cut short:
    /// not a key of its own, half of `topology.shutdown.timeout`.
    #[serde(skip)]
    pub stop_grace: Duration,
}

impl Default for FetcherSettings {
    fn default() -> Self {
        FetcherSettings {
            server_delay: Duration::from_secs(1),
            server_min_delay: Duration::ZERO,
            server_delay_force: false,
            threads_per_queue: 1,
            threads_number: 50,
            max_urls_in_queues: 2000,
            max_crawl_delay: Duration::from_secs(30),
            max_crawl_delay_force: false,
            max_retry_after: Duration::from_secs(300),
            max_fetches_per_second: None,
            stop_grace: Duration::from_secs(10),
        }
    }
}

impl KeyedSettings for FetcherSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        let at_least_one = [
            ("fetcher.threads.per.queue", self.threads_per_queue),
            ("fetcher.threads.number", self.threads_number),
            ("fetcher.max.urls.in.queues", self.max_urls_in_queues),
        ];
        match at_least_one.into_iter().find(|(_, value)| *value == 0) {
            Some((key, _)) => Err((key, "must be at least 1".to_string())),
            None => Ok(()),
        }
    }
}
