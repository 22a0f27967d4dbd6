//! The fetcher's settings: its `fetcher.*` keys, read straight from the configuration (each field
//! names its key, and `Default` holds each key's default).

use std::num::NonZeroU32;
use std::time::Duration;

use crate::model::PartitionMode;
use crate::protocol::HttpContext;
use crate::settings::{KeyedSettings, at_least_one, keyed_settings, units};

keyed_settings! {
    /// Politeness and concurrency settings of the fetcher: the `fetcher.*` keys.
    #[derive(Debug, Clone, PartialEq)]
    pub struct FetcherSettings {
        /// `fetcher.server.delay`: seconds from the end of one fetch to the start of the next on a
        /// queue.
        "fetcher.server.delay" with "units::seconds" => server_delay: Duration =
            Duration::from_secs(1),
        /// `fetcher.server.min.delay`: seconds; the delay used instead when a queue allows several
        /// fetches at once.
        "fetcher.server.min.delay" with "units::seconds" => server_min_delay: Duration =
            Duration::ZERO,
        /// `fetcher.server.delay.force`: keep `fetcher.server.delay` when robots.txt asks for less.
        "fetcher.server.delay.force" => server_delay_force: bool = false,
        /// `fetcher.threads.per.queue`: fetches at once on one queue.
        "fetcher.threads.per.queue" => threads_per_queue: usize = 1,
        /// `fetcher.threads.number`: fetches at once over all queues.
        "fetcher.threads.number" => threads_number: usize = 50,
        /// `fetcher.max.urls.in.queues`: URLs waiting in the fetcher's queues before it stops
        /// taking more. -1: no limit of its own (`topology.max.spout.pending` still bounds them).
        "fetcher.max.urls.in.queues" with "units::count_or_unlimited" => max_urls_in_queues: usize =
            2000,
        /// `fetcher.max.crawl.delay`: seconds; a robots.txt Crawl-delay above this gives the URL
        /// ERROR...
        "fetcher.max.crawl.delay" with "units::seconds" => max_crawl_delay: Duration =
            Duration::from_secs(30),
        /// `fetcher.max.crawl.delay.force`: ...unless this is set: then the delay is capped at
        /// `fetcher.max.crawl.delay`.
        "fetcher.max.crawl.delay.force" => max_crawl_delay_force: bool = false,
        /// `fetcher.max.retry.after`: seconds; the longest Retry-After hold honoured on 429 and
        /// 503.
        "fetcher.max.retry.after" with "units::seconds" => max_retry_after: Duration =
            Duration::from_secs(300),
        /// `fetcher.max.fetches.per.second`: a cap over all queues; 0 for none.
        "fetcher.max.fetches.per.second" with "units::zero_is_none" => max_fetches_per_second: Option<NonZeroU32> =
            None,
        /// `partition.url.mode`: how URLs are grouped into queues, `byHost`, `byDomain` or `byIP`
        /// (the parser keys outlinks and the frontier its queues the same way).
        "partition.url.mode" => partition: PartitionMode = PartitionMode::ByHost,
        derived {
            /// On stop, how long fetches already started may take to finish before they are cut
            /// short: not a key of its own, half of `topology.shutdown.timeout`.
            stop_grace: Duration = Duration::from_secs(10),
        }
    }
}

impl FetcherSettings {
    /// Idle connections the HTTP client keeps per host: one for each fetch a queue may run at once
    /// (`fetcher.threads.per.queue`), and at least [`HttpContext::MIN_IDLE_PER_HOST`] (a few for
    /// robots.txt).
    pub fn idle_connections_per_host(&self) -> usize {
        self.threads_per_queue.max(HttpContext::MIN_IDLE_PER_HOST)
    }
}

impl KeyedSettings for FetcherSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        at_least_one(&[
            ("fetcher.threads.per.queue", self.threads_per_queue),
            ("fetcher.threads.number", self.threads_number),
            ("fetcher.max.urls.in.queues", self.max_urls_in_queues),
        ])
    }
}
