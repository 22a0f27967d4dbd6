//! What the crawl's events add up to: totals, errors by cause, latencies, the recent errors and
//! each host's figures. Fed by [`CrawlObserver::on_event`] on the fetcher's and the status
//! updater's tasks, so each event costs a few atomic additions and two short locks.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::hosts::HostTable;
use crate::live::latency::LatencyWindow;
use crate::message::{CrawlEvent, CrawlObserver, EventError, FetchRecord};
use crate::model::Status;

/// Causes counted apart; others are counted as `other`.
const MAX_CAUSES: usize = 12;
/// Recent errors kept.
const RECENT_ERRORS: usize = 25;

/// One URL that failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ErrorEntry {
    pub at: DateTime<Utc>,
    pub url: String,
    pub cause: String,
    pub message: String,
}

/// The totals and the rest, shared by the observer and the page.
#[derive(Debug)]
pub(crate) struct Tally {
    /// Fetch attempts completed (answered or not).
    pub fetches: AtomicU64,
    /// Fetch attempts a server answered.
    pub answered: AtomicU64,
    /// Body bytes received.
    pub bytes: AtomicU64,
    /// URLs whose writes were made.
    pub written: AtomicU64,
    /// URLs whose writes failed.
    pub write_failures: AtomicU64,
    /// URLs that failed (FETCH_ERROR, ERROR) or whose writes failed.
    pub errors: AtomicU64,
    /// Errors by cause, in the order first seen.
    pub causes: Mutex<Vec<(String, u64)>>,
    /// How long fetches took.
    pub fetch_latency: LatencyWindow,
    /// From a fetch's end to its URL's writes being made (parse, outlinks, status, content).
    pub process_latency: LatencyWindow,
    /// The last errors, newest last.
    pub recent: Mutex<VecDeque<ErrorEntry>>,
    /// Each host's figures.
    pub hosts: HostTable,
}

impl Tally {
    /// Nothing counted yet; latencies over `window_slots` slots, `host_rows` hosts remembered.
    pub fn new(window_slots: usize, hosts_remembered: u64) -> Self {
        Tally {
            fetches: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            written: AtomicU64::new(0),
            write_failures: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            causes: Mutex::new(Vec::new()),
            fetch_latency: LatencyWindow::new(window_slots),
            process_latency: LatencyWindow::new(window_slots),
            recent: Mutex::new(VecDeque::with_capacity(RECENT_ERRORS)),
            hosts: HostTable::new(hosts_remembered),
        }
    }

    /// The errors by cause, as counted so far.
    pub fn causes(&self) -> Vec<(String, u64)> {
        self.causes.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The recent errors, newest first.
    pub fn recent_errors(&self) -> Vec<ErrorEntry> {
        match self.recent.lock() {
            Ok(recent) => recent.iter().rev().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    fn fetched(&self, key: &str, fetch: &FetchRecord) {
        self.fetches.fetch_add(1, Ordering::Relaxed);
        if fetch.http_status.is_some() {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
        self.bytes.fetch_add(fetch.bytes, Ordering::Relaxed);
        let took = (fetch.finished - fetch.started)
            .to_std()
            .unwrap_or_default();
        self.fetch_latency.record(took);
        self.hosts.fetched(key, took, fetch.http_status);
    }

    fn processed(&self, url: &str, key: &str, outcome: Outcome<'_>) {
        if let Some(fetch) = outcome.fetch {
            let since = (Utc::now() - fetch.finished)
                .to_std()
                .unwrap_or(Duration::ZERO);
            self.process_latency.record(since);
        }
        let failed = matches!(outcome.status, Status::FetchError | Status::Error);
        self.hosts.processed(key, outcome.status, failed);
        if outcome.written {
            self.written.fetch_add(1, Ordering::Relaxed);
        } else {
            self.write_failures.fetch_add(1, Ordering::Relaxed);
        }
        if !failed && outcome.written {
            return;
        }
        let (cause, message) = describe(&outcome);
        self.count_cause(&cause);
        self.remember(ErrorEntry {
            at: Utc::now(),
            url: url.to_string(),
            cause,
            message,
        });
    }

    fn count_cause(&self, cause: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let Ok(mut causes) = self.causes.lock() else {
            return;
        };
        let name = if causes.len() < MAX_CAUSES || causes.iter().any(|(c, _)| c == cause) {
            cause
        } else {
            "other"
        };
        match causes.iter_mut().find(|(c, _)| c == name) {
            Some((_, count)) => *count += 1,
            None => causes.push((name.to_string(), 1)),
        }
    }

    fn remember(&self, entry: ErrorEntry) {
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() == RECENT_ERRORS {
                recent.pop_front();
            }
            recent.push_back(entry);
        }
    }
}

/// What a processed event says of its URL.
struct Outcome<'a> {
    status: Status,
    fetch: Option<&'a FetchRecord>,
    written: bool,
    error: Option<&'a EventError>,
}

/// The cause and message of a URL that failed: a failed write first, then the `error.cause` the
/// URL was given (`http` with its status code), then the status code alone.
fn describe(outcome: &Outcome<'_>) -> (String, String) {
    let code = outcome.fetch.and_then(|fetch| fetch.http_status);
    if !outcome.written {
        return (
            "write failed".into(),
            "the URL's writes failed: it stays due".into(),
        );
    }
    let message = outcome
        .error
        .and_then(|error| error.message.clone())
        .unwrap_or_default();
    match (outcome.error, code) {
        (Some(error), Some(code)) if error.cause == "http" => (format!("HTTP {code}"), message),
        (Some(error), _) => (error.cause.clone(), message),
        (None, Some(code)) => (format!("HTTP {code}"), message),
        (None, None) => ("unknown".into(), message),
    }
}

impl CrawlObserver for Tally {
    fn on_event(&self, event: &CrawlEvent) {
        match event {
            CrawlEvent::Fetched { key, fetch, .. } => self.fetched(key, fetch),
            CrawlEvent::Processed {
                url,
                key,
                status,
                fetch,
                written,
                error,
                ..
            } => self.processed(
                url,
                key,
                Outcome {
                    status: *status,
                    fetch: fetch.as_ref(),
                    written: *written,
                    error: error.as_ref(),
                },
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(http_status: Option<u16>) -> FetchRecord {
        let now = Utc::now();
        FetchRecord {
            started: now - chrono::TimeDelta::milliseconds(40),
            finished: now,
            http_status,
            error: None,
            bytes: 100,
            protocol: "http",
        }
    }

    fn processed(status: Status, code: Option<u16>, cause: Option<&str>) -> CrawlEvent {
        CrawlEvent::Processed {
            url: "http://a.test/x".into(),
            key: "a.test".into(),
            status,
            fetch: Some(record(code)),
            outlinks: 0,
            written: true,
            error: cause.map(|cause| EventError {
                cause: cause.into(),
                message: Some("why".into()),
            }),
        }
    }

    #[test]
    fn errors_are_counted_by_cause_and_kept_newest_first() {
        let tally = Tally::new(6, 100);
        tally.on_event(&processed(Status::Fetched, Some(200), None));
        tally.on_event(&processed(Status::FetchError, Some(503), Some("http")));
        tally.on_event(&processed(Status::Error, None, Some("robots.txt")));
        tally.on_event(&processed(Status::FetchError, Some(503), Some("http")));
        assert_eq!(
            tally.causes(),
            vec![("HTTP 503".to_string(), 2), ("robots.txt".to_string(), 1)]
        );
        assert_eq!(tally.errors.load(Ordering::Relaxed), 3);
        assert_eq!(tally.written.load(Ordering::Relaxed), 4);
        let recent = tally.recent_errors();
        assert_eq!(recent.len(), 3);
        assert_eq!(recent[0].cause, "HTTP 503");
        assert_eq!(recent[1].cause, "robots.txt");
    }

    #[test]
    fn causes_beyond_the_limit_are_counted_as_other() {
        let tally = Tally::new(6, 100);
        for n in 0..MAX_CAUSES + 3 {
            let cause = format!("cause {n}");
            tally.on_event(&processed(Status::Error, None, Some(&cause)));
        }
        let causes = tally.causes();
        assert_eq!(causes.len(), MAX_CAUSES + 1);
        assert_eq!(causes.last(), Some(&("other".to_string(), 3)));
    }

    #[test]
    fn fetches_count_answers_bytes_and_latency() {
        let tally = Tally::new(6, 100);
        tally.on_event(&CrawlEvent::Fetched {
            url: "http://a.test/".into(),
            key: "a.test".into(),
            fetch: record(Some(200)),
        });
        tally.on_event(&CrawlEvent::Fetched {
            url: "http://a.test/y".into(),
            key: "a.test".into(),
            fetch: record(None),
        });
        assert_eq!(tally.fetches.load(Ordering::Relaxed), 2);
        assert_eq!(tally.answered.load(Ordering::Relaxed), 1);
        assert_eq!(tally.bytes.load(Ordering::Relaxed), 200);
        let p50 = tally.fetch_latency.percentiles().expect("recorded").p50;
        assert!((40.0..50.0).contains(&p50), "{p50}");
    }
}
