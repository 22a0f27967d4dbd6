//! One queue's state in the dispenser: its buffered URLs, how many are handed out, and the rules
//! a client set on it (delay, block, crawl limit).

use std::collections::VecDeque;
use std::time::{Duration, Instant, SystemTime};

use squall::message::Tuple;

/// A queue as the dispenser keeps it.
#[derive(Debug, Default)]
pub(super) struct QueueState {
    /// Due URLs read from the frontier, not handed out, oldest first.
    pub buffered: VecDeque<Tuple>,
    /// URLs of this queue handed out and not yet put back or lapsed.
    pub in_process: usize,
    /// No hand-out before this instant: the politeness gap after the queue's last holder let go.
    pub not_before: Option<Instant>,
    /// The delay between two holders of the queue set by `SetDelay` for this queue.
    pub delay: Option<Duration>,
    /// A crawl delay the frontier shares for the queue (robots.txt, learned by some process).
    pub shared_delay: Option<Duration>,
    /// `BlockQueueUntil`: no hand-out before this time.
    pub blocked_until: Option<SystemTime>,
    /// `SetCrawlLimit`: at most this many URLs of the queue are completed (put back as known).
    pub limit: Option<u64>,
    /// URLs of the queue put back as known since the server started.
    pub completed: u64,
}

impl QueueState {
    /// Whether the queue may hand out URLs now (it has some, nobody holds it, no rule forbids it).
    pub fn can_hand_out(&self, now: Instant, wall: SystemTime) -> bool {
        !self.buffered.is_empty()
            && self.in_process == 0
            && self.not_before.is_none_or(|t| now >= t)
            && self.blocked_until.is_none_or(|t| wall >= t)
            && self.limit.is_none_or(|limit| self.completed < limit)
    }

    /// The gap to keep between the queue's last holder letting go and the next hand-out.
    pub fn gap(&self, default: Duration) -> Duration {
        let own = self.delay.unwrap_or(default);
        self.shared_delay.map_or(own, |shared| shared.max(own))
    }

    /// Whether the queue holds nothing the dispenser must remember (it can be forgotten).
    pub fn is_forgettable(&self) -> bool {
        self.buffered.is_empty()
            && self.in_process == 0
            && self.delay.is_none()
            && self.blocked_until.is_none()
            && self.limit.is_none()
            && self.not_before.is_none()
    }
}
