//! The fetcher's politeness and concurrency settings.

use std::time::Duration;

/// Politeness and concurrency settings of the fetcher.
#[derive(Debug, Clone, PartialEq)]
pub struct FetcherSettings {
    /// Time from the end of one fetch to the start of the next on a queue (`fetcher.server.delay`).
    pub server_delay: Duration,
    /// The delay used instead when a queue allows several fetches at once (`fetcher.server.min.delay`).
    pub min_delay: Duration,
    /// Fetches at once on one queue (`fetcher.threads.per.queue`).
    pub threads_per_queue: usize,
    /// Fetches at once overall (`fetcher.threads.number`).
    pub threads_total: usize,
    /// URLs waiting in queues before the fetcher stops taking more (`fetcher.max.urls.in.queues`).
    pub max_queued: usize,
    /// A robots.txt Crawl-delay above this gives the URL ERROR (`fetcher.max.crawl.delay`)...
    pub max_crawl_delay: Duration,
    /// ...unless this is set: then the delay is capped at `max_crawl_delay` (`fetcher.max.crawl.delay.force`).
    pub max_crawl_delay_force: bool,
    /// Keep `server_delay` when robots.txt asks for a shorter one (`fetcher.server.delay.force`).
    pub server_delay_force: bool,
    /// Longest `Retry-After` hold honoured on 429 and 503 (`fetcher.max.retry.after`).
    pub max_retry_after: Duration,
    /// Fetches per second over all queues; `None`: no global cap (`fetcher.max.fetches.per.second`).
    pub max_fetches_per_second: Option<std::num::NonZeroU32>,
    /// On stop, how long fetches already started may take to finish before they are cut short.
    pub stop_grace: Duration,
}

impl Default for FetcherSettings {
    fn default() -> Self {
        FetcherSettings {
            server_delay: Duration::from_secs(1),
            min_delay: Duration::ZERO,
            threads_per_queue: 1,
            threads_total: 50,
            max_queued: 2000,
            max_crawl_delay: Duration::from_secs(30),
            max_crawl_delay_force: false,
            server_delay_force: false,
            max_retry_after: Duration::from_secs(300),
            max_fetches_per_second: None,
            stop_grace: Duration::from_secs(10),
        }
    }
}

impl FetcherSettings {
    /// The delay a queue keeps between fetches, given its robots.txt Crawl-delay.
    pub fn queue_delay(&self, crawl_delay: Option<Duration>) -> Duration {
        let base = if self.threads_per_queue > 1 {
            self.min_delay
        } else {
            self.server_delay
        };
        match crawl_delay.map(|robots| robots.min(self.max_crawl_delay)) {
            None => base,
            Some(robots) if self.server_delay_force => robots.max(base),
            Some(robots) => robots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_delay_follows_robots_within_the_limits() {
        let secs = Duration::from_secs;
        let settings = FetcherSettings {
            server_delay: secs(2),
            min_delay: secs(1),
            max_crawl_delay: secs(10),
            ..FetcherSettings::default()
        };
        assert_eq!(settings.queue_delay(None), secs(2));
        assert_eq!(settings.queue_delay(Some(secs(1))), secs(1), "robots wins");
        assert_eq!(settings.queue_delay(Some(secs(60))), secs(10), "capped");
        let forced = FetcherSettings {
            server_delay_force: true,
            ..settings.clone()
        };
        assert_eq!(forced.queue_delay(Some(secs(1))), secs(2), "never shorter");
        let parallel = FetcherSettings {
            threads_per_queue: 2,
            ..settings
        };
        assert_eq!(parallel.queue_delay(None), secs(1), "the min delay");
    }
}
