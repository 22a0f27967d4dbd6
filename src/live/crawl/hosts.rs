//! Each host's figures as the crawl's events tell them: fetches, errors, the mean fetch time and
//! the last answer. At most a fixed number of hosts are remembered (and a quarter more before the
//! least recently seen are forgotten, all at once), so memory stays the same however long the crawl
//! runs, and an event costs one short lock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

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
    hosts: Mutex<Hosts>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Hosts {
    figures: HashMap<String, (u64, HostFigures)>,
    /// Counts the updates: an entry's stamp says when it was last seen.
    clock: u64,
}

impl HostTable {
    /// Remembers `capacity` hosts at most.
    pub fn new(capacity: u64) -> Self {
        HostTable {
            hosts: Mutex::default(),
            capacity: usize::try_from(capacity).unwrap_or(usize::MAX).max(1),
        }
    }

    fn update(&self, key: &str, change: impl FnOnce(&mut HostFigures)) {
        let Ok(mut hosts) = self.hosts.lock() else {
            return;
        };
        hosts.clock += 1;
        let clock = hosts.clock;
        match hosts.figures.get_mut(key) {
            Some((seen, figures)) => {
                *seen = clock;
                change(figures);
            }
            None => {
                let mut figures = HostFigures::default();
                change(&mut figures);
                hosts.figures.insert(key.to_string(), (clock, figures));
                // A quarter over: the least recently seen go, so that this costs little per host.
                if hosts.figures.len() > self.capacity + self.capacity / 4 {
                    forget_oldest(&mut hosts.figures, self.capacity);
                }
            }
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
        let hosts = self.hosts.lock().ok()?;
        hosts.figures.get(key).map(|(_, figures)| figures.clone())
    }

    /// The `rows` hosts whose fetches took longest on average, slowest first.
    pub fn slowest(&self, rows: usize) -> Vec<(String, HostFigures)> {
        let Ok(hosts) = self.hosts.lock() else {
            return Vec::new();
        };
        let mut all: Vec<(f64, &String, &HostFigures)> = hosts
            .figures
            .iter()
            .filter(|(_, (_, figures))| figures.fetches > 0)
            .map(|(key, (_, figures))| (figures.mean_fetch_ms(), key, figures))
            .collect();
        let slowest_first = |a: &(f64, &String, &HostFigures), b: &(f64, &String, &HostFigures)| {
            b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1))
        };
        // Only the first rows are put in order: the rest are cut off unsorted.
        if rows > 0 && rows < all.len() {
            all.select_nth_unstable_by(rows - 1, slowest_first);
            all.truncate(rows);
        }
        all.sort_by(slowest_first);
        all.into_iter()
            .map(|(_, key, figures)| (key, figures))
            .take(rows)
            .map(|(key, figures)| (key.clone(), figures.clone()))
            .collect()
    }

    /// Hosts remembered now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.hosts.lock().map_or(0, |hosts| hosts.figures.len())
    }
}

/// Keeps the `keep` most recently seen hosts.
fn forget_oldest(figures: &mut HashMap<String, (u64, HostFigures)>, keep: usize) {
    let mut stamps: Vec<u64> = figures.values().map(|(seen, _)| *seen).collect();
    let cut = stamps.len().saturating_sub(keep);
    if cut == 0 {
        return;
    }
    let (_, oldest_kept, _) = stamps.select_nth_unstable(cut);
    let oldest_kept = *oldest_kept;
    figures.retain(|_, (seen, _)| *seen >= oldest_kept);
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
        assert!(table.len() <= 62, "{}", table.len());
        assert!(table.get("h1999.test").is_some(), "the latest is kept");
        assert!(table.get("h0.test").is_none(), "the oldest went");
    }
}
