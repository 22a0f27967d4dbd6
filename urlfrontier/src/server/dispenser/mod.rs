//! The dispenser: due URLs waiting to be handed out, grouped by queue, and the URLs handed out.
//!
//! # Invariants
//!
//! 1. **A URL is held by at most one client at a time.** A URL handed out leaves its queue's buffer
//!    and is not handed out again until it is put back (then it is done) or its `delay_requestable`
//!    lapses (then it returns to the front of its queue).
//! 2. **A queue is held by at most one client at a time.** A queue with URLs handed out hands out
//!    nothing more, to anyone, until all of them are put back or lapsed; so two clients never fetch
//!    from one host at once, whatever they ask for.
//! 3. **Politeness between holders.** Once the last URL of a queue comes back, the queue hands out
//!    nothing for its delay (`SetDelay`, else the server's default, or the frontier's shared crawl
//!    delay when longer): the next holder's first fetch follows the last holder's last one by at
//!    least that much. A lapse starts no such gap: the hold was the holder's time to fetch, and a
//!    URL whose `delay_requestable` passed is handed out again at once, as the reference service
//!    does (a client that fetches after its hold ended breaks the API's contract).
//! 4. **Nothing is lost.** Every URL the dispenser takes carries its ack handle until it is put
//!    back (acked once its write is durable) or the dispenser lets it go (dropped: the URL stays due
//!    in the frontier and is read again).
//!
//! The dispenser is synchronous and owns no clock: callers pass `now`, so that tests can replay any
//! interleaving of reads, hand-outs, puts and lapses.

mod queue;
mod rules;
pub use rules::LATEST_BLOCK_SECS;

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime};

use squall::message::{AckHandle, Tuple};

use queue::QueueState;

/// What a client asks for (GetURLs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ask {
    /// At most this many queues; 0 for no limit.
    pub max_queues: usize,
    /// At most this many URLs per queue; 0 for no limit.
    pub max_urls_per_queue: usize,
    /// Only this queue.
    pub key: Option<String>,
    /// How long the URLs handed out stay the client's.
    pub hold: Duration,
}

/// A URL handed out to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOut {
    /// The URL and its metadata.
    pub url: squall::model::CrawlUrl,
    /// Its queue.
    pub key: String,
}

#[derive(Debug)]
struct Held {
    tuple: Tuple,
    until: Instant,
}

/// Due URLs by queue and the URLs handed out (see the module's invariants).
#[derive(Debug)]
pub struct Dispenser {
    queues: HashMap<String, QueueState>,
    /// Queue keys in hand-out order (round robin); a key may linger after its queue emptied.
    turn: VecDeque<String>,
    held: HashMap<String, Held>,
    default_gap: Duration,
    active: bool,
}

impl Dispenser {
    /// An empty dispenser that keeps `default_gap` between two holders of a queue.
    pub fn new(default_gap: Duration) -> Self {
        Dispenser {
            queues: HashMap::new(),
            turn: VecDeque::new(),
            held: HashMap::new(),
            default_gap,
            active: true,
        }
    }

    /// Takes a due URL read from the frontier.
    pub fn add(&mut self, tuple: Tuple) {
        let key = tuple.key.clone();
        let queue = self.queue(&key);
        queue.shared_delay = tuple.hints.crawl_delay;
        queue.buffered.push_back(tuple);
        if queue.buffered.len() == 1 {
            self.turn.push_back(key);
        }
    }

    /// Hands out what `ask` allows at `now` (`wall` is the same moment on the wall clock, for
    /// blocks set in seconds since the epoch). URLs whose lease on the frontier ended are dropped,
    /// not handed out.
    pub fn hand_out(&mut self, ask: &Ask, now: Instant, wall: SystemTime) -> Vec<HandedOut> {
        self.lapse(now);
        let mut out = Vec::new();
        if !self.active {
            return out;
        }
        let per_queue = limit(ask.max_urls_per_queue);
        let max_queues = limit(ask.max_queues);
        let mut served = 0;
        for _ in 0..self.turn.len() {
            if served == max_queues {
                break;
            }
            let Some(key) = self.turn.pop_front() else {
                break;
            };
            if ask.key.as_ref().is_some_and(|wanted| *wanted != key) {
                self.turn.push_back(key);
                continue;
            }
            let taken = self.take_from(&key, per_queue, ask.hold, now, wall);
            if !taken.is_empty() {
                served += 1;
                out.extend(taken);
            }
            if self
                .queues
                .get(&key)
                .is_some_and(|q| !q.buffered.is_empty())
            {
                self.turn.push_back(key);
            }
        }
        self.forget_idle_queues(now);
        out
    }

    fn take_from(
        &mut self,
        key: &str,
        per_queue: usize,
        hold: Duration,
        now: Instant,
        wall: SystemTime,
    ) -> Vec<HandedOut> {
        let Some(queue) = self.queues.get_mut(key) else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        if !queue.can_hand_out(now, wall) {
            return taken;
        }
        while taken.len() < per_queue {
            let Some(tuple) = queue.buffered.pop_front() else {
                break;
            };
            if !tuple.hints.may_fetch() {
                continue; // dropped: its handle fails it back, it stays due
            }
            tuple.ack.started();
            taken.push(HandedOut {
                url: tuple.url.clone(),
                key: key.to_string(),
            });
            queue.in_process += 1;
            let url = tuple.url.url.as_str().to_string();
            self.held.insert(
                url,
                Held {
                    tuple,
                    until: now + hold,
                },
            );
        }
        taken
    }

    /// Takes back a URL put back as processed: its handle, to ack once the write is durable. The
    /// URL may be held, or back in its queue after a lapse; `None` when the dispenser does not
    /// have it.
    pub fn complete(&mut self, url: &str, now: Instant) -> Option<AckHandle> {
        if let Some(held) = self.held.remove(url) {
            let key = held.tuple.key.clone();
            self.release(&key, now);
            if let Some(queue) = self.queues.get_mut(&key) {
                queue.completed += 1;
            }
            return Some(held.tuple.ack);
        }
        for queue in self.queues.values_mut() {
            if let Some(at) = queue
                .buffered
                .iter()
                .position(|t| t.url.url.as_str() == url)
            {
                queue.completed += 1;
                return queue.buffered.remove(at).map(|t| t.ack);
            }
        }
        None
    }

    /// Moves URLs whose hold ran out back to the front of their queues.
    pub fn lapse(&mut self, now: Instant) {
        let lapsed: Vec<String> = self
            .held
            .iter()
            .filter(|(_, held)| held.until <= now)
            .map(|(url, _)| url.clone())
            .collect();
        for url in lapsed {
            let Some(held) = self.held.remove(&url) else {
                continue;
            };
            let key = held.tuple.key.clone();
            let queue = self.queue(&key);
            queue.in_process = queue.in_process.saturating_sub(1);
            queue.buffered.push_front(held.tuple);
            if queue.buffered.len() == 1 {
                self.turn.push_back(key);
            }
            metrics::counter!("squall_urlfrontier_lapsed_total").increment(1);
        }
    }

    /// One URL of queue `key` came back: when it was the last one out, the gap starts.
    fn release(&mut self, key: &str, now: Instant) {
        let gap_default = self.default_gap;
        if let Some(queue) = self.queues.get_mut(key) {
            queue.in_process = queue.in_process.saturating_sub(1);
            if queue.in_process == 0 {
                queue.not_before = Some(now + queue.gap(gap_default));
            }
        }
    }

    fn queue(&mut self, key: &str) -> &mut QueueState {
        self.queues.entry(key.to_string()).or_default()
    }

    fn forget_idle_queues(&mut self, now: Instant) {
        for queue in self.queues.values_mut() {
            if queue.not_before.is_some_and(|t| t <= now) {
                queue.not_before = None;
            }
        }
        self.queues.retain(|_, queue| !queue.is_forgettable());
    }
}

/// What clients set and read: queue rules, the active flag, and counts.
impl Dispenser {
    /// `SetDelay`: the gap between two holders of queue `key`, or the default for every queue
    /// without one of its own when `key` is `None`.
    pub fn set_delay(&mut self, key: Option<&str>, delay: Duration) {
        match key {
            Some(key) => self.queue(key).delay = Some(delay),
            None => self.default_gap = delay,
        }
    }

    /// `BlockQueueUntil`: queue `key` hands out nothing before `until`; `None` unblocks it.
    pub fn block(&mut self, key: &str, until: Option<SystemTime>) {
        self.queue(key).blocked_until = until;
    }

    /// `SetCrawlLimit`: queue `key` hands out nothing more once `limit` of its URLs were put back.
    pub fn set_limit(&mut self, key: &str, limit: u64) {
        self.queue(key).limit = Some(limit);
    }

    /// `SetActive`: whether URLs are handed out at all.
    pub fn set_active(&mut self, active: bool) {
        self.active = active;
    }

    /// `GetActive`.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Forgets queue `key`: its buffered and held URLs are let go (their handles fail them back).
    pub fn remove_queue(&mut self, key: &str) {
        self.queues.remove(key);
        self.held.retain(|_, held| held.tuple.key != key);
        self.turn.retain(|k| k != key);
    }

    /// Lets the buffered URLs of queue `key` (every queue: `None`) go, keeping the queues' rules
    /// and the URLs handed out: after a purge, what is left is read again from the frontier.
    pub fn drop_buffered(&mut self, key: Option<&str>) {
        for (queue_key, queue) in self.queues.iter_mut() {
            if key.is_none_or(|key| key == queue_key) {
                queue.buffered.clear();
            }
        }
    }

    /// Lets every URL go (shutdown): their handles fail them back, they stay due in the frontier.
    pub fn clear(&mut self) {
        self.queues.clear();
        self.held.clear();
        self.turn.clear();
    }

    /// URLs handed out and not back, in all or in queue `key`.
    pub fn in_process(&self, key: Option<&str>) -> usize {
        match key {
            None => self.held.len(),
            Some(key) => self.queues.get(key).map_or(0, |q| q.in_process),
        }
    }

    /// URLs waiting to be handed out.
    pub fn buffered(&self) -> usize {
        self.queues.values().map(|q| q.buffered.len()).sum()
    }

    /// The active queues (API 2.6: holding URLs waiting or handed out, and not blocked at `wall`),
    /// in key order.
    pub fn active_queues(&self, wall: SystemTime) -> Vec<String> {
        let mut keys: Vec<String> = self
            .queues
            .iter()
            .filter(|(_, q)| !q.buffered.is_empty() || q.in_process > 0)
            .filter(|(_, q)| q.blocked_until.is_none_or(|until| wall >= until))
            .map(|(key, _)| key.clone())
            .collect();
        keys.sort();
        keys
    }
}

/// 0 means no limit.
fn limit(value: usize) -> usize {
    if value == 0 { usize::MAX } else { value }
}

#[cfg(test)]
mod tests;
