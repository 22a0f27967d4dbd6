//! Each host's figures as the crawl's events tell them: fetches, errors, the mean fetch time and
//! the last answer. At most a fixed number of hosts are remembered (those seen least recently go
//! first), so memory stays the same however long the crawl runs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use moka::sync::Cache;

use crate::model::Status;

/// One host's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HostFigures {
    /// Fetch attempts completed.
    pub fetches: u64,
    /// URLs that failed (FETCH_ERROR, ERROR).
    pub errors: u64,
    /// The time all its fetches took.
    pub fetch_time: Duration,
    /// The last HTTP status code a server gave.
    pub last_http: Option<u16>,
    /// The last status one of its URLs got.
    pub last_status: Option<Status>,
}

impl HostFigures {
    /// The mean time a fetch took, in milliseconds (0 before the first).
    pub fn mean_fetch_ms(&self) -> f64 {
        if self.fetches == 0 {
            return 0.0;
        }
        self.fetch_time.as_secs_f64() * 1000.0 / self.fetches as f64
    }
}

/// The hosts' figures, the most recently seen kept.
#[derive(Debug)]
pub(crate) struct HostTable {
    hosts: Cache<String, Arc<Mutex<HostFigures>>>,
}

impl HostTable {
    /// Remembers `capacity` hosts at most.
    pub fn new(capacity: u64) -> Self {
        HostTable {
            hosts: Cache::new(capacity),
        }
    }

    fn update(&self, key: &str, change: impl FnOnce(&mut HostFigures)) {
        let entry = self.hosts.get_with_by_ref(key, Arc::default);
        if let Ok(mut figures) = entry.lock() {
            change(&mut figures);
        }
    }

    /// A fetch of `key` took `took` and got `http` (None: no answer).
    pub fn fetched(&self, key: &str, took: Duration, http: Option<u16>) {
        self.update(key, |figures| {
            figures.fetches += 1;
            figures.fetch_time += took;
            if http.is_some() {
                figures.last_http = http;
            }
        });
    }

    /// A URL of `key` got `status`.
    pub fn processed(&self, key: &str, status: Status, failed: bool) {
        self.update(key, |figures| {
            figures.last_status = Some(status);
            figures.errors += u64::from(failed);
        });
    }

    /// `key`'s figures, if it is remembered.
    pub fn get(&self, key: &str) -> Option<HostFigures> {
        let entry = self.hosts.get(key)?;
        entry.lock().ok().map(|figures| figures.clone())
    }

    /// The `rows` hosts whose fetches took longest on average, slowest first.
    pub fn slowest(&self, rows: usize) -> Vec<(String, HostFigures)> {
        let mut all: Vec<(String, HostFigures)> = self
            .hosts
            .iter()
            .filter_map(|(key, entry)| Some((key.as_ref().clone(), entry.lock().ok()?.clone())))
            .filter(|(_, figures)| figures.fetches > 0)
            .collect();
        all.sort_by(|a, b| {
            b.1.mean_fetch_ms()
                .total_cmp(&a.1.mean_fetch_ms())
                .then_with(|| a.0.cmp(&b.0))
        });
        all.truncate(rows);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_come_first_with_their_last_answer() {
        let table = HostTable::new(10);
        table.fetched("fast.test", Duration::from_millis(10), Some(200));
        table.fetched("slow.test", Duration::from_millis(300), Some(200));
        table.fetched("slow.test", Duration::from_millis(100), Some(503));
        table.processed("slow.test", Status::FetchError, true);
        let slowest = table.slowest(1);
        assert_eq!(slowest.len(), 1);
        let (key, figures) = &slowest[0];
        assert_eq!(key, "slow.test");
        assert_eq!(figures.mean_fetch_ms(), 200.0);
        assert_eq!(figures.last_http, Some(503));
        assert_eq!(figures.errors, 1);
        assert_eq!(figures.last_status, Some(Status::FetchError));
    }

    #[test]
    fn memory_is_bounded_by_the_capacity() {
        let table = HostTable::new(50);
        for n in 0..2_000 {
            table.fetched(&format!("h{n}.test"), Duration::from_millis(1), Some(200));
        }
        table.hosts.run_pending_tasks();
        assert!(
            table.hosts.entry_count() <= 50,
            "{}",
            table.hosts.entry_count()
        );
    }
}
