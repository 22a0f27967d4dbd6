//! What a running crawl tells the outside world: one event per fetch attempt as it completes, one
//! per processed URL once its writes were attempted, and running totals.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::FetchRecord;
use crate::model::Status;

/// Something that happened in a crawl. New kinds of event may come (the type is
/// `#[non_exhaustive]`): an observer matches the ones it wants and ignores the rest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CrawlEvent {
    /// A fetch attempt just completed (the server answered or the attempt failed), before the page
    /// is parsed and its writes made: a log kept from these events holds every completed fetch,
    /// even of a process that dies before writing its statuses. Emitted on the fetcher's tasks.
    Fetched {
        /// The URL.
        url: String,
        /// Its partition key.
        key: String,
        /// The attempt.
        fetch: FetchRecord,
    },
    /// A URL went through the topology and its writes were attempted.
    Processed {
        /// The URL.
        url: String,
        /// Its partition key.
        key: String,
        /// Its final status.
        status: Status,
        /// The fetch attempt, if there was one.
        fetch: Option<FetchRecord>,
        /// Outlinks written as DISCOVERED.
        outlinks: usize,
        /// Whether the writes succeeded (if not, the URL was failed back to the spout).
        written: bool,
        /// Why the URL failed, when its status says it did: the `error.cause` and `error.message`
        /// it was given (a write that failed is told by `written`, not here).
        error: Option<EventError>,
    },
}

/// Why a URL failed, as its metadata records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventError {
    /// The `error.cause` (`timeout`, `robots.txt`, `http`, ... see
    /// [`FetchFailure`](super::FetchFailure)).
    pub cause: String,
    /// The `error.message`, when there is one.
    pub message: Option<String>,
}

impl EventError {
    /// The error a URL's metadata records, if any, with the password of any URL it quotes
    /// masked ([`redact::url_text`](crate::redact::url_text)).
    pub fn of(url: &crate::model::CrawlUrl) -> Option<Self> {
        use crate::model::keys;
        let cause = url.metadata.first(keys::ERROR_CAUSE)?;
        let message = url.metadata.first(keys::ERROR_MESSAGE);
        Some(EventError {
            cause: cause.to_string(),
            message: message.map(|text| crate::redact::url_text(text).into_owned()),
        })
    }
}

/// Receives crawl events. Called on the fetcher's and the status updater's tasks: keep it quick.
pub trait CrawlObserver: Send + Sync {
    /// One event.
    fn on_event(&self, event: &CrawlEvent);
}

/// An observer that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoObserver;

impl CrawlObserver for NoObserver {
    fn on_event(&self, _event: &CrawlEvent) {}
}

/// Running totals of a crawl, cheap to read from another task.
#[derive(Debug, Default)]
pub struct CrawlStats {
    answered: AtomicU64,
    answered_changed: tokio::sync::Notify,
    fetched_pages: AtomicU64,
    bytes: AtomicU64,
    outlinks: AtomicU64,
    write_failures: AtomicU64,
    per_status: [AtomicU64; 5],
    hosts: dashmap::DashSet<String>,
}

impl CrawlStats {
    /// Fetch attempts that got an answer from a server, counted as each completes (before its page
    /// is parsed and its writes made). [`pages`](Self::pages) counts the same once written.
    pub fn answered(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }

    /// Completes once [`answered`](Self::answered) grew after the last call (or right away if it grew
    /// since). Meant for one watcher, such as the run's page limit.
    pub async fn answered_grew(&self) {
        self.answered_changed.notified().await;
    }

    /// Fetch attempts that got an answer from a server, whose writes were made.
    pub fn pages(&self) -> u64 {
        self.fetched_pages.load(Ordering::Relaxed)
    }

    /// Body bytes received.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Outlinks written.
    pub fn outlinks(&self) -> u64 {
        self.outlinks.load(Ordering::Relaxed)
    }

    /// URLs whose writes failed.
    pub fn write_failures(&self) -> u64 {
        self.write_failures.load(Ordering::Relaxed)
    }

    /// URLs processed with `status`.
    pub fn count(&self, status: Status) -> u64 {
        self.per_status[status_index(status)].load(Ordering::Relaxed)
    }

    /// Distinct partition keys processed.
    pub fn hosts(&self) -> u64 {
        self.hosts.len() as u64
    }

    /// URLs processed in all.
    pub fn processed(&self) -> u64 {
        Status::ALL.iter().map(|s| self.count(*s)).sum()
    }
}

fn status_index(status: Status) -> usize {
    match status {
        Status::Discovered => 0,
        Status::Fetched => 1,
        Status::FetchError => 2,
        Status::Redirection => 3,
        Status::Error => 4,
    }
}

impl CrawlObserver for CrawlStats {
    fn on_event(&self, event: &CrawlEvent) {
        if let CrawlEvent::Fetched { fetch, .. } = event {
            if fetch.http_status.is_some() {
                self.answered.fetch_add(1, Ordering::Relaxed);
                self.answered_changed.notify_one();
            }
            return;
        }
        let CrawlEvent::Processed {
            key,
            status,
            fetch,
            outlinks,
            written,
            ..
        } = event
        else {
            return;
        };
        if !written {
            self.write_failures.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.per_status[status_index(*status)].fetch_add(1, Ordering::Relaxed);
        if !self.hosts.contains(key) {
            self.hosts.insert(key.clone());
        }
        self.outlinks.fetch_add(*outlinks as u64, Ordering::Relaxed);
        if let Some(fetch) = fetch {
            if fetch.http_status.is_some() {
                self.fetched_pages.fetch_add(1, Ordering::Relaxed);
            }
            self.bytes.fetch_add(fetch.bytes, Ordering::Relaxed);
        }
    }
}

/// Sends each event to several observers in turn.
#[derive(Clone, Default)]
pub struct Observers(Vec<Arc<dyn CrawlObserver>>);

impl Observers {
    /// Adds an observer.
    pub fn push(&mut self, observer: Arc<dyn CrawlObserver>) {
        self.0.push(observer);
    }
}

impl CrawlObserver for Observers {
    fn on_event(&self, event: &CrawlEvent) {
        for observer in &self.0 {
            observer.on_event(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetched(http_status: Option<u16>) -> CrawlEvent {
        let now = chrono::Utc::now();
        CrawlEvent::Fetched {
            url: "http://a.test/".into(),
            key: "a.test".into(),
            fetch: FetchRecord {
                started: now,
                finished: now,
                http_status,
                error: None,
                bytes: 10,
                protocol: "http",
            },
        }
    }

    #[tokio::test]
    async fn answered_fetches_are_counted_as_they_complete_and_wake_the_watcher() {
        let stats = CrawlStats::default();
        stats.on_event(&fetched(None));
        assert_eq!(
            stats.answered(),
            0,
            "a fetch nobody answered is not counted"
        );
        stats.on_event(&fetched(Some(404)));
        assert_eq!(stats.answered(), 1);
        // The wake-up is kept for a watcher that was not waiting yet.
        tokio::time::timeout(std::time::Duration::from_secs(5), stats.answered_grew())
            .await
            .expect("woken");
        assert_eq!(stats.pages(), 0, "pages counts only once written");
    }
}
