//! Queue state crossing the topology, typed: what a frontier tells the fetcher about a URL's queue
//! (a crawl delay another process learned, and the lease under which this process may fetch from
//! the queue at all), and what the fetcher reports back about it for the frontier to share
//! (a Retry-After hold, a robots.txt crawl delay).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// A process's right to fetch from one queue of a shared frontier, valid until a deadline that the
/// spout pushes back each time it renews the lease in the frontier.
///
/// Clones share one deadline: the spout keeps one, every URL of the queue carries another, and the
/// fetcher checks [`is_valid`](Lease::is_valid) before each fetch, so that a process that lost a
/// queue (paused past its lease, or its renewals failed) starts no new fetch of it.
///
/// ```
/// use std::time::{Duration, Instant};
/// use squall::frontier::Lease;
///
/// let lease = Lease::until(Instant::now() + Duration::from_secs(30));
/// let carried = lease.clone();
/// assert!(carried.is_valid());
/// lease.revoke();
/// assert!(!carried.is_valid());
/// ```
#[derive(Debug, Clone)]
pub struct Lease {
    cell: Arc<LeaseCell>,
}

#[derive(Debug)]
struct LeaseCell {
    /// What deadlines are measured from.
    base: Instant,
    /// The deadline in microseconds after `base`.
    deadline_micros: AtomicU64,
    /// Set once the lease ended for good.
    revoked: AtomicBool,
}

impl Lease {
    /// A lease valid until `deadline`.
    pub fn until(deadline: Instant) -> Self {
        let base = Instant::now();
        let lease = Lease {
            cell: Arc::new(LeaseCell {
                base,
                deadline_micros: AtomicU64::new(0),
                revoked: AtomicBool::new(false),
            }),
        };
        lease.extend_to(deadline);
        lease
    }

    /// Moves the deadline to `deadline` (a renewal). A revoked lease stays revoked.
    pub fn extend_to(&self, deadline: Instant) {
        let micros = deadline
            .saturating_duration_since(self.cell.base)
            .as_micros()
            .min(u128::from(u64::MAX)) as u64;
        self.cell.deadline_micros.store(micros, Ordering::Release);
    }

    /// Ends the lease for good: the queue was given back or found taken by another process.
    pub fn revoke(&self) {
        self.cell.revoked.store(true, Ordering::Release);
    }

    /// Whether the lease still holds now.
    pub fn is_valid(&self) -> bool {
        self.remaining() > Duration::ZERO
    }

    /// How long the lease holds from now (zero once past or revoked).
    pub fn remaining(&self) -> Duration {
        if self.cell.revoked.load(Ordering::Acquire) {
            return Duration::ZERO;
        }
        let micros = self.cell.deadline_micros.load(Ordering::Acquire);
        let deadline = self.cell.base + Duration::from_micros(micros);
        deadline.saturating_duration_since(Instant::now())
    }
}

impl PartialEq for Lease {
    /// The same lease (one queue, one claim), not merely the same deadline.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }
}

impl Eq for Lease {}

/// What the frontier says about a URL's queue, for the fetcher.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueHints {
    /// A crawl delay for the queue that some process learned from its robots.txt: the fetcher
    /// keeps the longer of it and its own.
    pub crawl_delay: Option<Duration>,
    /// The lease under which this process holds the queue, for frontiers shared by several
    /// processes; `None` when the frontier has no leases (the URL may always be fetched).
    pub lease: Option<Lease>,
    /// When the queue's last fetch that reached its server ended, as the frontier remembers it
    /// (from this process before a restart, or from another): the fetcher waits the queue's delay
    /// from then.
    pub last_fetch: Option<DateTime<Utc>>,
    /// Until when the server asked for no more requests (a Retry-After remembered across a
    /// restart): the fetcher starts nothing of the queue before.
    pub blocked_until: Option<DateTime<Utc>>,
}

impl QueueHints {
    /// Whether the URL may be fetched now: no lease is needed, or the lease still holds.
    pub fn may_fetch(&self) -> bool {
        self.lease.as_ref().is_none_or(Lease::is_valid)
    }
}

/// What the fetcher learned about a URL's queue, on its way back to the frontier with the URL's
/// status write: a frontier shared by several processes keeps it on the queue, so that every
/// process honours it; others ignore it. It is never stored with the URL.
///
/// ```
/// use std::time::Duration;
/// use squall::frontier::QueueReport;
///
/// assert!(QueueReport::default().is_empty());
/// let report = QueueReport {
///     crawl_delay: Some(Duration::from_millis(2500)),
///     ..QueueReport::default()
/// };
/// assert!(!report.is_empty());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueReport {
    /// Until when the server asked for no more requests (Retry-After on a 429 or 503, capped at
    /// `fetcher.max.retry.after`).
    pub blocked_until: Option<DateTime<Utc>>,
    /// The Crawl-delay the queue's robots.txt asks for.
    pub crawl_delay: Option<Duration>,
    /// When this fetch ended, if it reached the server: the queue's delay runs from then, also
    /// for a process that takes the queue over or a crawl resumed after a restart.
    pub last_fetch: Option<DateTime<Utc>>,
}

impl QueueReport {
    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.blocked_until.is_none() && self.crawl_delay.is_none() && self.last_fetch.is_none()
    }

    /// `self` with what `later` reports over it: the later of the two fetch ends and holds, the
    /// newer crawl delay.
    pub fn merged(self, later: &QueueReport) -> QueueReport {
        let latest = |a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>| a.max(b);
        QueueReport {
            blocked_until: latest(self.blocked_until, later.blocked_until),
            crawl_delay: later.crawl_delay.or(self.crawl_delay),
            last_fetch: latest(self.last_fetch, later.last_fetch),
        }
    }

    /// What a frontier that remembers this report tells the fetcher about the queue.
    pub fn hints(&self) -> QueueHints {
        QueueHints {
            crawl_delay: self.crawl_delay,
            lease: None,
            last_fetch: self.last_fetch,
            blocked_until: self.blocked_until,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_expires_and_renewal_moves_it() {
        let lease = Lease::until(Instant::now() + Duration::from_millis(20));
        assert!(lease.is_valid());
        std::thread::sleep(Duration::from_millis(30));
        assert!(!lease.is_valid(), "past its deadline");
        lease.extend_to(Instant::now() + Duration::from_secs(5));
        assert!(lease.is_valid(), "renewed");
        lease.revoke();
        lease.extend_to(Instant::now() + Duration::from_secs(5));
        assert!(!lease.is_valid(), "a revoked lease stays revoked");
    }

    #[test]
    fn hints_without_a_lease_allow_fetching() {
        assert!(QueueHints::default().may_fetch());
        let lease = Lease::until(Instant::now() + Duration::from_secs(5));
        let hints = QueueHints {
            lease: Some(lease.clone()),
            ..QueueHints::default()
        };
        assert!(hints.may_fetch());
        lease.revoke();
        assert!(!hints.may_fetch());
    }
}
