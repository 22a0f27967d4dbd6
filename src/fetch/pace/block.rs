//! `block`: StormCrawler's URLFrontier back-off (its `QueueRegulatorBolt`). The delay stays the
//! configured one; each push-back incident blocks the queue instead, for
//! `urlfrontier.backoff.base.secs` the first time, multiplied by `urlfrontier.backoff.factor` per
//! new incident, up to `urlfrontier.backoff.max.secs` (or the base, when that is longer), then
//! lengthened by the jitter, so that queues blocked for the longest do not all come back at once.
//! A Retry-After holds as long as it asks (capped by `urlfrontier.max.retry.after`, and jittered
//! too); one of 0, or any under a cap of 0, counts as a push-back. No escalation while a block
//! holds; a block only ever extends; the escalation is forgiven after
//! `urlfrontier.backoff.decay.secs` of quiet from the block's end. The escalation travels with the
//! learned pace (its strikes), so another process, or this one after a restart, keeps it.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{Event, Rules, Signal, grown, scaled};
use crate::frontier::{LearnedPace, PaceCause};

/// The longest hold a block keeps, whatever a server's Retry-After asks (with
/// `urlfrontier.max.retry.after` -1): a year, as the configured durations are bounded, so that
/// the block's end is always a time the clock can hold.
const LONGEST_HOLD: Duration = Duration::from_secs(365 * 24 * 3600);

/// One queue's blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    /// Incidents since the escalation was last forgiven.
    level: u32,
    /// When the queue's block ends.
    until: Option<Instant>,
    /// When the last incident raised a block: fetches started before answer that incident.
    raised: Option<Instant>,
    /// The signal of the last block, and when it was learned.
    last: Option<(PaceCause, DateTime<Utc>)>,
    /// When what was last reported was learned.
    reported: Option<DateTime<Utc>>,
}

impl Block {
    /// Follows what one finished fetch said: the end of the queue's new or longer block, if it
    /// has one.
    pub fn observe(
        &mut self,
        event: &Event,
        rules: &Rules<'_>,
        rng: &mut fastrand::Rng,
    ) -> Option<Instant> {
        let policy = rules.policy;
        match event.signal {
            Signal::RetryAfter { hold } => {
                let hold = policy
                    .max_retry_after_block
                    .map_or(hold, |cap| hold.min(cap));
                if hold.is_zero() {
                    return self.incident(event, PaceCause::RetryAfter, rules, rng);
                }
                let hold = grown(hold.min(LONGEST_HOLD), 1.0, policy.backoff_jitter, rng);
                self.extend(event, PaceCause::RetryAfter, hold)
            }
            Signal::PushBack { cause, .. } => {
                if event.signal.is_failure() && !policy.backoff_on_exceptions {
                    return None;
                }
                self.incident(event, cause, rules, rng)
            }
            Signal::Healthy { .. } | Signal::Neutral => None,
        }
    }

    /// A push-back without Retry-After: a block, escalated once per incident.
    fn incident(
        &mut self,
        event: &Event,
        cause: PaceCause,
        rules: &Rules<'_>,
        rng: &mut fastrand::Rng,
    ) -> Option<Instant> {
        let policy = rules.policy;
        let now = event.finished;
        let holding = self.until.is_some_and(|until| until > now);
        let answered = self.raised.is_some_and(|raised| event.started < raised);
        if policy.backoff_base.is_zero() || holding || answered {
            return None;
        }
        if self.forgiven(now, rules) {
            self.level = 0;
        }
        let level = i32::try_from(self.level).unwrap_or(i32::MAX);
        let longest = policy.backoff_max_block.max(policy.backoff_base);
        let block = scaled(policy.backoff_base, policy.factor().powi(level)).min(longest);
        let block = grown(block, 1.0, policy.backoff_jitter, rng);
        self.level = self.level.saturating_add(1);
        self.raised = Some(now);
        self.extend(event, cause, block)
    }

    /// Whether the escalation is forgiven at `now`: the decay passed since the block ended.
    fn forgiven(&self, now: Instant, rules: &Rules<'_>) -> bool {
        let decay = rules.policy.backoff_decay;
        self.until
            .is_some_and(|until| until.checked_add(decay).is_none_or(|end| now >= end))
    }

    /// The block extended to `hold` from the event's end, if that is later than it ends now.
    fn extend(&mut self, event: &Event, cause: PaceCause, hold: Duration) -> Option<Instant> {
        let end = event.finished + hold.min(LONGEST_HOLD);
        if self.until.is_some_and(|until| until >= end) {
            return None;
        }
        self.until = Some(end);
        self.last = Some((cause, event.at));
        Some(end)
    }

    /// When the queue's block ends, if it has had one.
    pub fn until(&self) -> Option<Instant> {
        self.until
    }

    /// Incidents since the escalation was last forgiven.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Takes `learned` (from the frontier, with the block it records, `until`, on this process's
    /// clock) when it is newer than what this queue learned: the escalation (its strikes) unless
    /// the decay passed since it was learned and no block holds, and the block, extend-only. Its
    /// date is `wall` at the latest. Whether it was taken.
    pub fn adopt(
        &mut self,
        learned: LearnedPace,
        until: Option<Instant>,
        rules: &Rules<'_>,
        now: Instant,
        wall: DateTime<Utc>,
    ) -> bool {
        let at = learned.at.min(wall);
        if self.last.is_some_and(|(_, known)| at <= known) {
            return false;
        }
        let age = (wall - at).to_std().unwrap_or_default();
        let holding = until.is_some_and(|until| until > now);
        if age < rules.policy.backoff_decay || holding {
            self.level = self.level.max(learned.strikes);
        }
        if let Some(until) = until {
            self.until = Some(self.until.map_or(until, |mine| mine.max(until)));
        }
        self.last = Some((learned.cause, at));
        self.reported = Some(at);
        true
    }

    /// What the queue learned, when it learned something since the last report (a block or its
    /// escalation); what was adopted is not reported back.
    pub fn report(&mut self, rules: &Rules<'_>) -> Option<LearnedPace> {
        let learned = self.learned(rules)?;
        if self.reported == Some(learned.at) {
            return None;
        }
        self.reported = Some(learned.at);
        Some(learned)
    }

    /// When the queue last learned something; none before its first block.
    pub fn at(&self) -> Option<DateTime<Utc>> {
        self.last.map(|(_, at)| at)
    }

    /// What the queue learned, to share: its configured delay, the last block's cause and the
    /// escalation (as strikes); none before its first block.
    pub fn learned(&self, rules: &Rules<'_>) -> Option<LearnedPace> {
        let (cause, at) = self.last?;
        Some(LearnedPace {
            delay: rules.configured,
            cause,
            strikes: self.level,
            limit: None,
            at,
        })
    }
}
