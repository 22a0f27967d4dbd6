//! Queue state crossing the topology, typed: what a frontier tells the fetcher about a URL's queue
//! (a crawl delay another process learned, and the lease under which this process may fetch from
//! the queue at all), and what the fetcher reports back about it for the frontier to share
//! (a Retry-After hold, a robots.txt crawl delay, the pace it learned from the server's answers).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_with::{As, DisplayFromStr};

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
    /// The pace a fetcher learned for the queue from its server's answers (this process before a
    /// restart, or another): the fetcher takes it when it is newer than its own.
    pub pace: Option<LearnedPace>,
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
    /// The pace the queue keeps now and why, when it changed enough to be worth sharing.
    pub pace: Option<LearnedPace>,
}

impl QueueReport {
    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.blocked_until.is_none()
            && self.crawl_delay.is_none()
            && self.last_fetch.is_none()
            && self.pace.is_none()
    }

    /// `self` with what `later` reports over it: the later of the two fetch ends and holds, the
    /// newer crawl delay, the pace learned last ([`LearnedPace::newer`]).
    pub fn merged(self, later: &QueueReport) -> QueueReport {
        let latest = |a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>| a.max(b);
        QueueReport {
            blocked_until: latest(self.blocked_until, later.blocked_until),
            crawl_delay: later.crawl_delay.or(self.crawl_delay),
            last_fetch: latest(self.last_fetch, later.last_fetch),
            pace: LearnedPace::newer(self.pace, later.pace),
        }
    }

    /// What a frontier that remembers this report tells the fetcher about the queue.
    pub fn hints(&self) -> QueueHints {
        QueueHints {
            crawl_delay: self.crawl_delay,
            lease: None,
            last_fetch: self.last_fetch,
            blocked_until: self.blocked_until,
            pace: self.pace,
        }
    }
}

/// The pace a fetcher learned for a queue from its server's answers: the delay it keeps between
/// fetches and the signal that set it. It travels like the Crawl-delay does (fetcher → frontier in
/// [`QueueReport`], frontier → fetcher in [`QueueHints`]), so that every process sharing the
/// frontier, and the crawl after a restart, starts from it; where two meet, the one learned last
/// (`at`) wins.
///
/// ```
/// use std::time::Duration;
/// use chrono::{TimeZone, Utc};
/// use squall::frontier::{LearnedPace, PaceCause};
///
/// let at = |s| Utc.timestamp_opt(s, 0).single();
/// let pace = |s| at(s).map(|at| LearnedPace {
///     delay: Duration::from_secs(2),
///     cause: PaceCause::Http(429),
///     strikes: 1,
///     limit: Some(Duration::from_secs(1)),
///     at,
/// });
/// assert_eq!(LearnedPace::newer(pace(10), pace(20)), pace(20));
/// assert_eq!(LearnedPace::newer(pace(20), pace(10)), pace(20));
/// assert_eq!(PaceCause::Http(429).to_string(), "http_429");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LearnedPace {
    /// The interval the queue keeps now, from the end of one fetch to the start of the next.
    pub delay: Duration,
    /// The signal that set it.
    pub cause: PaceCause,
    /// Push-back incidents in a row (0 after a healthy answer).
    pub strikes: u32,
    /// The delay that last drew push-back, while it is remembered.
    pub limit: Option<Duration>,
    /// When it was learned: the newest wins everywhere.
    pub at: DateTime<Utc>,
}

impl LearnedPace {
    /// The one of `a` and `b` learned last (`b` when both were learned at once), or the one
    /// there is.
    pub fn newer(a: Option<LearnedPace>, b: Option<LearnedPace>) -> Option<LearnedPace> {
        match (a, b) {
            (Some(a), Some(b)) if a.at > b.at => Some(a),
            (a, b) => b.or(a),
        }
    }

    /// How many whole `decay`s passed from when it was learned to `now` (a date ahead of `now`
    /// counts as `now`), at most 64; 64 when `decay` is zero (nothing learned lasts).
    pub fn decays(&self, decay: Duration, now: DateTime<Utc>) -> u32 {
        if decay.is_zero() {
            return 64;
        }
        let age = (now - self.at.min(now)).to_std().unwrap_or_default();
        (age.as_secs_f64() / decay.as_secs_f64()).min(64.0) as u32
    }

    /// Its delay as it stands at `now`: halved for every `decay` it aged ([`decays`](Self::decays)),
    /// as every holder ages a pace it takes over.
    pub fn aged_delay(&self, decay: Duration, now: DateTime<Utc>) -> Duration {
        let factor = 0.5f64.powi(self.decays(decay, now) as i32);
        Duration::try_from_secs_f64(self.delay.as_secs_f64() * factor).unwrap_or(Duration::MAX)
    }
}

/// Why a queue keeps the pace it keeps: one word for the frontiers' stored pace, the status page
/// and the `cause` label of the pace metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaceCause {
    /// `configured`: at the configured delay, nothing learned.
    Configured,
    /// `recovering`: coming back down after push-back.
    Recovering,
    /// `faster`: below `fetcher.server.delay`, down to the floor the user opted in to.
    Faster,
    /// `slow_answers`: answers typically slower than the host's usual time.
    SlowAnswers,
    /// `http_429`, `http_503`, ...: a status of `urlfrontier.backoff.status.codes` without
    /// Retry-After.
    Http(u16),
    /// `retry_after`: a 429, a 503 or a status of those codes, with Retry-After.
    RetryAfter,
    /// `connection`: the connection failed (refused, reset, DNS, TLS).
    Connection,
    /// `timeout`: the server did not answer in time.
    Timeout,
}

impl PaceCause {
    /// The words without a code, each with its cause.
    const WORDS: [(&'static str, PaceCause); 7] = [
        ("configured", PaceCause::Configured),
        ("recovering", PaceCause::Recovering),
        ("faster", PaceCause::Faster),
        ("slow_answers", PaceCause::SlowAnswers),
        ("retry_after", PaceCause::RetryAfter),
        ("connection", PaceCause::Connection),
        ("timeout", PaceCause::Timeout),
    ];
}

impl fmt::Display for PaceCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let PaceCause::Http(code) = self {
            return write!(f, "http_{code}");
        }
        let word = Self::WORDS.iter().find(|(_, cause)| cause == self);
        f.write_str(word.map_or("", |(word, _)| word))
    }
}

/// A word that names no [`PaceCause`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a pace cause (configured, recovering, faster, slow_answers, http_NNN, retry_after, connection, timeout)"
)]
pub struct UnknownPaceCause(pub String);

/// Written as its word ([`Display`](fmt::Display)).
impl Serialize for PaceCause {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        As::<DisplayFromStr>::serialize(self, serializer)
    }
}

/// Read from its word ([`FromStr`]).
impl<'de> Deserialize<'de> for PaceCause {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        As::<DisplayFromStr>::deserialize(deserializer)
    }
}

impl FromStr for PaceCause {
    type Err = UnknownPaceCause;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(digits) = text.strip_prefix("http_") {
            // Only the form Display writes: `http_429`, not `http_+429` nor `http_0429`.
            return digits
                .parse::<u16>()
                .ok()
                .filter(|code| code.to_string() == digits)
                .map(PaceCause::Http)
                .ok_or_else(|| UnknownPaceCause(text.to_string()));
        }
        Self::WORDS
            .iter()
            .find(|(word, _)| *word == text)
            .map(|(_, cause)| *cause)
            .ok_or_else(|| UnknownPaceCause(text.to_string()))
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
    fn each_pace_cause_reads_back_from_its_word() {
        let causes = PaceCause::WORDS.map(|(_, cause)| cause);
        for cause in causes
            .into_iter()
            .chain([PaceCause::Http(429), PaceCause::Http(503)])
        {
            let word = cause.to_string();
            assert_eq!(word.parse::<PaceCause>(), Ok(cause), "{word}");
            let json = serde_json::to_string(&cause).expect("serialized");
            assert_eq!(json, format!("\"{word}\""));
        }
        for other in ["http_", "http_+429", "http_0429", "http_70000", "slow"] {
            assert!(other.parse::<PaceCause>().is_err(), "{other}");
        }
    }

    #[test]
    fn a_report_merged_keeps_the_pace_learned_last() {
        let pace = |seconds, delay| LearnedPace {
            delay: Duration::from_secs(delay),
            cause: PaceCause::Http(429),
            strikes: 1,
            limit: None,
            at: DateTime::from_timestamp(seconds, 0).unwrap_or_default(),
        };
        let report = |pace| QueueReport {
            pace,
            ..QueueReport::default()
        };
        let (older, newer) = (pace(10, 4), pace(20, 2));
        assert_eq!(
            report(Some(older)).merged(&report(Some(newer))).pace,
            Some(newer)
        );
        assert_eq!(
            report(Some(newer)).merged(&report(Some(older))).pace,
            Some(newer)
        );
        assert_eq!(report(Some(older)).merged(&report(None)).pace, Some(older));
        assert!(!report(Some(older)).is_empty());
        assert_eq!(report(Some(newer)).hints().pace, Some(newer));
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
