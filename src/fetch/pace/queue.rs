//! One queue's pace under the policy chosen: the one value the fetcher keeps per queue, whatever
//! `fetcher.pace.policy` says.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{Block, Event, Pace, Rules};
use crate::fetch::PaceKind;
use crate::frontier::LearnedPace;

/// One queue's pace: none to keep under `fixed`, else the policy's state.
#[derive(Debug, Clone, PartialEq)]
pub enum QueuePace {
    /// `fixed`: the configured delay, whatever the server answers.
    Fixed,
    /// `adaptive`: squall's pace.
    Adaptive(Box<Pace>),
    /// `block`: StormCrawler's blocks.
    Block(Block),
}

impl QueuePace {
    /// A queue's pace under `kind` before anything is learned.
    pub fn new(kind: PaceKind, rules: &Rules<'_>) -> QueuePace {
        match kind {
            PaceKind::Fixed => QueuePace::Fixed,
            PaceKind::Adaptive => QueuePace::Adaptive(Box::new(Pace::new(rules))),
            PaceKind::Block => QueuePace::Block(Block::default()),
        }
    }

    /// Follows what one finished fetch said: the end of a new or longer block, if it raised one.
    pub fn observe(
        &mut self,
        event: &Event,
        rules: &Rules<'_>,
        rng: &mut fastrand::Rng,
    ) -> Option<Instant> {
        match self {
            QueuePace::Fixed => None,
            QueuePace::Adaptive(pace) => {
                pace.observe(event, rules, rng);
                None
            }
            QueuePace::Block(block) => block.observe(event, rules, rng),
        }
    }

    /// The interval the queue keeps between fetches (a block holds apart from it).
    pub fn interval(&self, rules: &Rules<'_>) -> Duration {
        match self {
            QueuePace::Adaptive(pace) => pace.interval(rules),
            QueuePace::Fixed | QueuePace::Block(_) => rules.configured,
        }
    }

    /// When the queue's block ends, if it has had one.
    pub fn blocked_until(&self) -> Option<Instant> {
        match self {
            QueuePace::Block(block) => block.until(),
            QueuePace::Fixed | QueuePace::Adaptive(_) => None,
        }
    }

    /// What the queue learned, to share; none before anything was learned.
    pub fn learned(&self, rules: &Rules<'_>) -> Option<LearnedPace> {
        match self {
            QueuePace::Fixed => None,
            QueuePace::Adaptive(pace) => pace.learned(),
            QueuePace::Block(block) => block.learned(rules),
        }
    }

    /// What the queue learned, when it changed enough since the last report to be worth sharing.
    pub fn report(&mut self, rules: &Rules<'_>) -> Option<LearnedPace> {
        match self {
            QueuePace::Fixed => None,
            QueuePace::Adaptive(pace) => pace.report(),
            QueuePace::Block(block) => block.report(rules),
        }
    }

    /// Takes `learned` (with the block the frontier records, `until`) when it is newer than
    /// what the queue learned; `now` is `wall` on this process's monotonic clock. Whether it was
    /// taken. Under `fixed` nothing is.
    pub fn adopt(
        &mut self,
        learned: LearnedPace,
        until: Option<Instant>,
        rules: &Rules<'_>,
        (now, wall): (Instant, DateTime<Utc>),
    ) -> bool {
        match self {
            QueuePace::Fixed => false,
            QueuePace::Adaptive(pace) => pace.adopt(learned, rules, now, wall),
            QueuePace::Block(block) => block.adopt(learned, until, rules, now, wall),
        }
    }

    /// When the queue last learned something; none while only configured.
    pub fn at(&self) -> Option<DateTime<Utc>> {
        match self {
            QueuePace::Fixed => None,
            QueuePace::Adaptive(pace) => pace.at(),
            QueuePace::Block(block) => block.at(),
        }
    }

    /// Whether there is nothing learned to keep once the queue is forgotten.
    pub fn is_settled(&self, rules: &Rules<'_>) -> bool {
        match self {
            QueuePace::Fixed => true,
            QueuePace::Adaptive(pace) => pace.is_settled(rules),
            QueuePace::Block(block) => block.level() == 0,
        }
    }
}
