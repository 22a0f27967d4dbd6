//! The queue spout's settings.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use squall::frontier::LearnedPace;

use crate::status_index::schema::KeyField;

/// Settings of a queue spout.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSpoutConfig {
    /// The urls index.
    pub urls_index: String,
    /// The queues index.
    pub queues_index: String,
    /// Where the key is in URL documents.
    pub key_field: KeyField,
    /// This process (host name and PID by default). A claim writes it in `leaseOwner` followed by
    /// `#` and the hold's own name (`owner#1f3a9c07.12`), which the lease's later edits name.
    pub owner: String,
    /// How long a lease lasts without renewal; another process takes the queue after it. Leases are
    /// renewed in the background every quarter of it, and this process stops fetching from a queue
    /// once four fifths of it passed without a renewal.
    pub lease_ttl: Duration,
    /// Queues held at once, at most; fewer when other processes share the frontier (each holds its
    /// fair share: the queues with work divided by the live processes).
    pub max_queues: usize,
    /// Queues claimed by one query at most: a spout holding many queues fills up over a few
    /// queries, and its first URLs come after a small claim rather than a large one.
    pub max_claims_per_query: usize,
    /// URLs of a queue handed to the fetcher at once at most (waiting for it there).
    pub max_urls_per_queue: usize,
    /// URLs of a queue waiting for the fetcher (handed out and not being fetched yet) at once: the
    /// rest of what was read waits in the spout, so that the topology's pending URLs spread over
    /// every queue held rather than filling up with the first ones (see
    /// [`Self::reads_for_delay`]). At most [`max_urls_per_queue`](Self::max_urls_per_queue).
    pub waiting_per_queue: usize,
    /// Due URLs one read of a queue asks for: enough for a long hold, so that one read serves many
    /// fetches (about the lease over the politeness delay; see [`Self::reads_for_delay`]).
    pub urls_per_read: usize,
    /// The longest a queue is held while other due queues wait for a process: then it is given back
    /// and goes behind them.
    pub max_hold: Duration,
    /// How long a write takes to show in queries (the indices' refresh interval).
    pub refresh_interval: Duration,
    /// The fetcher's delay between two fetches of a queue (`fetcher.server.delay`): a queue given
    /// back is not claimed again (by any process) before this long after its last fetch, or its
    /// crawl delay when longer. Zero by default; the frontier opened from configuration sets it.
    pub politeness_delay: Duration,
    /// Where a pace learned from the queue's server takes the politeness delay's place between
    /// holders, and within which bounds; `None` (the default, and the `fixed` policy): the
    /// politeness delay, whatever pace a queue stores.
    pub pace_bounds: Option<PaceBounds>,
}

/// How a learned pace is honoured between holders: within `fetcher.pace.floor` (else the
/// politeness delay: never faster than configured unless the user opted in) and
/// `fetcher.pace.backoff.max`, aged as the fetcher ages a pace it adopts. A pace stored out of
/// them (another version's, or a document edited by hand) is brought within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaceBounds {
    /// The shortest.
    pub floor: Duration,
    /// The longest.
    pub max: Duration,
    /// A pace halves for every this long since it was learned (`urlfrontier.backoff.decay.secs`):
    /// a host that pushed back days ago is not kept slow by a pace nobody reports any more.
    pub decay: Duration,
}

impl PaceBounds {
    /// The interval `pace` asks for at `now`: halved for every [`decay`](Self::decay) since it
    /// was learned (a date ahead of `now` counts as `now`), then within the floor and the max.
    pub fn aged(&self, pace: LearnedPace, now: DateTime<Utc>) -> Duration {
        let delay = pace.aged_delay(self.decay, now);
        delay.clamp(self.floor, self.max.max(self.floor))
    }
}

impl QueueSpoutConfig {
    /// Defaults for the two indices: 60 s leases, 100 queues (claimed up to 100 per query) read 60
    /// URLs at a time and handed to the fetcher 10 at a time, held 30 s at most while others wait,
    /// owner from host and PID.
    pub fn new(urls_index: &str, queues_index: &str) -> Self {
        QueueSpoutConfig {
            urls_index: urls_index.to_string(),
            queues_index: queues_index.to_string(),
            key_field: KeyField::default(),
            owner: default_owner(),
            lease_ttl: Duration::from_secs(60),
            max_queues: 100,
            max_claims_per_query: 100,
            max_urls_per_queue: 10,
            urls_per_read: 60,
            waiting_per_queue: 10,
            max_hold: Duration::from_secs(30),
            refresh_interval: Duration::from_secs(1),
            politeness_delay: Duration::ZERO,
            pace_bounds: None,
        }
    }

    /// The least time from a queue's last fetch to the next holder's first, for a queue given
    /// back at `now`: the pace learned last for it, as [`pace_bounds`](Self::pace_bounds) age and
    /// bound it, where they are set; otherwise the politeness delay. (The queue's crawl delay wins
    /// when longer: see the hold's `given_back_at`.)
    pub fn gap_between_holders(
        &self,
        learned: Option<LearnedPace>,
        now: DateTime<Utc>,
    ) -> Duration {
        match (self.pace_bounds, learned) {
            (Some(bounds), Some(pace)) => bounds.aged(pace, now),
            _ => self.politeness_delay,
        }
    }

    /// Sets [`urls_per_read`](Self::urls_per_read) and
    /// [`waiting_per_queue`](Self::waiting_per_queue) for a politeness delay of `delay`: a read
    /// holds the fetches a lease allows at that pace (between
    /// [`max_urls_per_queue`](Self::max_urls_per_queue) and 500), and a queue keeps half a second
    /// of fetches waiting, and one more (at least 2, at most `max_urls_per_queue`).
    pub fn reads_for_delay(mut self, delay: Duration) -> Self {
        let delay = delay.as_secs_f64().max(0.001);
        let cap = self.max_urls_per_queue.max(1);
        let fetches = self.lease_ttl.as_secs_f64() / delay;
        self.urls_per_read = (fetches.ceil() as usize).clamp(cap, 500.max(cap));
        let waiting = (0.5 / delay).ceil() as usize + 1;
        self.waiting_per_queue = waiting.clamp(2.min(cap), cap);
        self
    }

    /// The index where live processes of this frontier announce themselves.
    pub fn workers_index(&self) -> String {
        format!("{}-workers", self.queues_index)
    }

    /// How long a write may take to show in the urls index: a refresh, with a margin for replicas
    /// refreshing on their own schedule.
    pub fn visibility(&self) -> Duration {
        self.refresh_interval * 2 + Duration::from_secs(1)
    }

    /// [`visibility`](Self::visibility) as a span of index dates: a queue given back less than this
    /// before a claim is still cooling down, and a due date written less than this before it may
    /// not show in the claim's reads.
    pub(crate) fn visibility_span(&self) -> TimeDelta {
        TimeDelta::from_std(self.visibility()).unwrap_or(TimeDelta::seconds(3))
    }

    /// How long after a write its first look is: one refresh and a quarter of a second, by when
    /// the index most likely shows it (the sure look waits the whole visibility delay).
    pub(crate) fn early_look_span(&self) -> TimeDelta {
        TimeDelta::from_std(self.refresh_interval + Duration::from_millis(250))
            .unwrap_or(TimeDelta::milliseconds(1250))
    }

    /// How long this process trusts a lease after the request that set it was sent: four fifths of
    /// the TTL, so that it stops fetching before any other process may claim the queue.
    pub fn trusted_lease(&self) -> Duration {
        self.lease_ttl * 4 / 5
    }
}

/// `host-pid`, the default lease owner.
pub fn default_owner() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}-{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall::frontier::PaceCause;

    #[test]
    fn a_learned_pace_ages_and_stays_within_its_bounds() {
        let now = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let bounds = PaceBounds {
            floor: Duration::from_secs(1),
            max: Duration::from_secs(60),
            decay: Duration::from_secs(100),
        };
        let pace = |secs: u64, ago: i64| LearnedPace {
            delay: Duration::from_secs(secs),
            cause: PaceCause::Http(429),
            strikes: 1,
            limit: None,
            at: now - TimeDelta::seconds(ago),
        };
        let cases = [
            (pace(8, 0), 8, "fresh"),
            (pace(8, 99), 8, "within one decay"),
            (pace(8, 100), 4, "one decay: halved"),
            (pace(8, 250), 2, "two decays"),
            (pace(8, 100_000), 1, "long ago: the floor"),
            (pace(8, -3_600), 8, "learned ahead of now: fresh"),
            (pace(600, 0), 60, "beyond the max"),
            (pace(0, 0), 1, "below the floor"),
        ];
        for (learned, secs, case) in cases {
            assert_eq!(
                bounds.aged(learned, now),
                Duration::from_secs(secs),
                "{case}"
            );
        }
        let settings = QueueSpoutConfig {
            politeness_delay: Duration::from_secs(3),
            ..QueueSpoutConfig::new("u", "q")
        };
        assert_eq!(
            settings.gap_between_holders(Some(pace(8, 0)), now),
            Duration::from_secs(3),
            "a policy that learns nothing keeps the politeness delay"
        );
    }
}
