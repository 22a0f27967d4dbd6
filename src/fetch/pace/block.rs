//! `block`: StormCrawler's URLFrontier back-off (its `QueueRegulatorBolt`). The delay stays the
//! configured one; each push-back incident blocks the queue instead, for
//! `urlfrontier.backoff.base.secs` the first time, multiplied by `urlfrontier.backoff.factor` per
//! new incident, up to `urlfrontier.backoff.max.secs`, with jitter. No escalation while a block
//! holds; a block only ever extends; the escalation is forgiven after
//! `urlfrontier.backoff.decay.secs` of quiet from the block's end.

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
        if self
            .until
            .is_some_and(|until| now >= until + policy.backoff_decay)
        {
            self.level = 0;
        }
        let level = i32::try_from(self.level).unwrap_or(i32::MAX);
        let block = scaled(policy.backoff_base, policy.backoff_factor.powi(level));
        let block = grown(block, 1.0, policy.backoff_jitter, rng);
        self.level = self.level.saturating_add(1);
        self.raised = Some(now);
        self.extend(event, cause, block.min(policy.backoff_max_block))
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
