//! The fetcher's side of each queue's pace (see [`pace`](super::pace)): a finished fetch followed
//! by its queue's pace, what the queue then tells the frontier, and the paces of queues forgotten
//! while idle, kept for when they come back. Each back-off or block counts in
//! `squall_pace_backoffs_total{cause}`.

use chrono::{DateTime, Utc};
use tokio::time::Instant;

use super::pace::{Event, PaceBook, QueuePace, Rules, Signal};
use super::settings::{PaceKind, PacePolicy};
use crate::frontier::{LearnedPace, PaceCause};

/// A finished fetch, as its queue's pace sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FinishedFetch {
    /// What it said.
    pub signal: Signal,
    /// When its request started (none: it made none).
    pub started: Option<Instant>,
    /// When it ended.
    pub finished: Instant,
}

/// What a finished fetch changed in its queue's pace.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct PaceNews {
    /// The end of a new or longer block (`block`).
    pub blocked_until: Option<Instant>,
    /// What the queue learned, when it is worth telling the frontier.
    pub report: Option<LearnedPace>,
}

impl PaceNews {
    /// The block's end on the wall clock, taking `now` as `wall`.
    pub fn blocked_until_wall(&self, now: Instant, wall: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let left = self.blocked_until?.saturating_duration_since(now);
        Some(wall + chrono::TimeDelta::from_std(left).unwrap_or(chrono::TimeDelta::MAX))
    }
}

/// The paces of the fetcher's queues under `fetcher.pace.policy`.
#[derive(Debug)]
pub(super) struct Paces {
    kind: PaceKind,
    book: PaceBook,
    rng: fastrand::Rng,
}

impl Paces {
    /// Paces under `policy`, none kept yet. Every cause a back-off can have starts counted at 0,
    /// so that a chart of `squall_pace_backoffs_total` by cause has its series from the start.
    pub fn new(policy: &PacePolicy) -> Self {
        let causes = policy
            .status_codes
            .iter()
            .map(|&code| PaceCause::Http(code))
            .chain([
                PaceCause::RetryAfter,
                PaceCause::Connection,
                PaceCause::Timeout,
                PaceCause::SlowAnswers,
            ]);
        for cause in causes {
            metrics::counter!("squall_pace_backoffs_total", "cause" => cause.to_string())
                .increment(0);
        }
        Paces {
            kind: policy.policy,
            book: PaceBook::default(),
            rng: fastrand::Rng::new(),
        }
    }

    /// The pace of a queue taken up again: the one kept for it when it was forgotten, else a new
    /// one under `rules`.
    pub fn pace_for(&mut self, key: &str, rules: &Rules<'_>) -> QueuePace {
        match self.book.take(key) {
            Some(kept) => kept,
            None => QueuePace::new(self.kind, rules),
        }
    }

    /// The paces kept for queues forgotten while idle, by queue key.
    pub fn kept(&self) -> impl Iterator<Item = (&str, &QueuePace)> {
        self.book.iter()
    }

    /// Keeps the pace of a queue forgotten while idle (unless it learned nothing).
    pub fn forget(&mut self, key: String, pace: QueuePace, rules: &Rules<'_>) {
        self.book.keep(key, pace, rules);
    }

    /// Follows `fetch` in `pace`, under `rules`: the block it raised and the report it makes.
    pub fn follow(
        &mut self,
        pace: &mut QueuePace,
        fetch: FinishedFetch,
        rules: &Rules<'_>,
    ) -> PaceNews {
        if matches!(pace, QueuePace::Fixed) {
            return PaceNews::default();
        }
        let finished = fetch.finished.into_std();
        let event = Event {
            signal: fetch.signal,
            started: fetch.started.map_or(finished, Instant::into_std),
            finished,
            at: Utc::now(),
        };
        let before = pace.learned(rules).map_or(0, |learned| learned.strikes);
        let blocked_until = pace
            .observe(&event, rules, &mut self.rng)
            .map(Instant::from_std);
        if let Some(learned) = pace.learned(rules)
            && learned.strikes > before
        {
            let cause = learned.cause.to_string();
            metrics::counter!("squall_pace_backoffs_total", "cause" => cause).increment(1);
        }
        PaceNews {
            blocked_until,
            report: pace.report(rules),
        }
    }
}
