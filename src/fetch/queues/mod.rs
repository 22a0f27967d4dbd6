//! The fetcher's host queues: one queue of URLs per partition key, and the politeness rules that
//! decide when each may hand out its next URL.
//!
//! [`HostQueues`] keeps these invariants, given that its owner calls [`complete`](HostQueues::complete)
//! once for every URL [`take_ready`](HostQueues::take_ready) handed out, and
//! [`enqueue`](HostQueues::enqueue) only while [`has_room`](HostQueues::has_room):
//!
//! - at most `threads_per_queue` fetches are in flight per key;
//! - after a fetch that reached the server, the next fetch on its key starts no sooner than the
//!   queue's interval after its end (its delay, [`queue_delay`], from robots.txt's Crawl-delay and
//!   the frontier's hint, as its pace keeps it: see [`Paces`]), or than the server's Retry-After
//!   hold or the pace's block when that is longer;
//! - the URLs queued over all keys never exceed `fetcher.max.urls.in.queues`;
//! - a key whose queue holds URLs is in exactly one place: the round-robin ring (it may fetch
//!   now), the sleepers (it waits for its delay, until the time it is filed under) or nowhere
//!   while its threads are all busy (a completion puts it back). A pass over the ring therefore
//!   costs the queues that may fetch, not every queue that holds URLs.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;
use tracing::debug;

use super::board::{FetcherView, QueueView};
use super::pace::{QueuePace, Rules, Signal};
use super::paces::{FinishedFetch, PaceNews, Paces};
use super::settings::{FetcherSettings, PaceKind};
use crate::message::Tuple;

/// How often idle queues are forgotten.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The longest a remembered hold stops a queue when `urlfrontier.max.retry.after` sets no cap.
const A_YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

/// Where a queue that holds URLs waits for its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Holds no URL.
    Nowhere,
    /// In the round-robin ring.
    Ring,
    /// Among the sleepers, filed under this time.
    Sleeping(Instant),
    /// Every thread of the queue is fetching.
    Busy,
}

/// One key's queue.
struct HostQueue {
    items: VecDeque<Tuple>,
    in_flight: usize,
    next_allowed: Instant,
    crawl_delay: Option<Duration>,
    /// The end of the last Retry-After hold the server asked for, or of the pace's last block.
    held_until: Option<Instant>,
    place: Place,
    /// What the queue learned of its server's pace.
    pace: QueuePace,
}

impl HostQueue {
    fn new(pace: QueuePace) -> Self {
        HostQueue {
            items: VecDeque::new(),
            in_flight: 0,
            next_allowed: Instant::now(),
            crawl_delay: None,
            held_until: None,
            place: Place::Nowhere,
            pace,
        }
    }

    fn is_idle(&self, now: Instant) -> bool {
        self.items.is_empty() && self.in_flight == 0 && self.next_allowed <= now
    }
}

/// What a finished fetch taught about its queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Learned {
    /// Whether a request reached the server (the queue's delay then starts again).
    pub contacted_server: bool,
    /// The site's robots.txt Crawl-delay, when it was read.
    pub crawl_delay: Option<Duration>,
    /// How long the server asked us to wait (Retry-After, capped).
    pub hold: Option<Duration>,
    /// What the answer said of the server's load.
    pub signal: Signal,
    /// When the request started, if one was made.
    pub started: Option<Instant>,
}

/// What one round-robin pass over the queues handed out.
#[derive(Debug, Default)]
pub(super) struct Ready {
    /// The URLs to fetch now, with their keys.
    pub fetches: Vec<(String, Tuple)>,
    /// When a queue that waits may hand out its next URL (`None`: only a completion or new URLs
    /// can change anything).
    pub wake: Option<Instant>,
}

/// The per-key queues of the fetcher; see the module docs for their invariants.
pub(super) struct HostQueues {
    queues: HashMap<String, HostQueue>,
    /// Keys whose queue holds URLs and may fetch, in turn order.
    ring: VecDeque<String>,
    /// Keys whose queue holds URLs and waits for its delay, earliest first (an entry whose queue
    /// was filed again under another time is stale, and skipped).
    sleeping: BinaryHeap<Reverse<(Instant, String)>>,
    queued: usize,
    settings: FetcherSettings,
    paces: Paces,
    last_sweep: Instant,
}

impl HostQueues {
    /// No queues yet.
    pub fn new(settings: FetcherSettings) -> Self {
        HostQueues {
            queues: HashMap::new(),
            ring: VecDeque::new(),
            sleeping: BinaryHeap::new(),
            queued: 0,
            paces: Paces::new(&settings.pace),
            settings,
            last_sweep: Instant::now(),
        }
    }

    /// URLs waiting over all queues.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Queues known (waiting URLs, fetches in flight, or a delay still running).
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Whether another URL may be enqueued without going over `fetcher.max.urls.in.queues`.
    pub fn has_room(&self) -> bool {
        self.queued < self.settings.max_urls_in_queues
    }

    /// Whether another URL may be enqueued while `extra` more are on their way to the queues.
    pub fn has_room_for(&self, extra: usize) -> bool {
        self.queued + extra < self.settings.max_urls_in_queues
    }

    /// Queues `tuple` on its key, keeping the longer of the queue's crawl delay and the frontier's.
    #[cfg(test)]
    pub fn enqueue(&mut self, tuple: Tuple) {
        self.enqueue_on(tuple.key.clone(), tuple);
    }

    /// Queues `tuple` on `key` (its frontier key, or its resolved address), keeping the longer of
    /// the queue's crawl delay and the frontier's.
    pub fn enqueue_on(&mut self, key: String, tuple: Tuple) {
        debug_assert!(self.has_room(), "enqueue only while has_room");
        let (settings, paces) = (&self.settings, &mut self.paces);
        let queue = self
            .queues
            .entry(key.clone())
            .or_insert_with(|| HostQueue::new(paces.pace_for(&key, &queue_rules(settings, None))));
        // A delay another process learned for this queue (carried by a shared frontier).
        if let Some(delay) = tuple.hints.crawl_delay {
            queue.crawl_delay = Some(queue.crawl_delay.map_or(delay, |d| d.max(delay)));
        }
        // A pace another process (or this one, before a restart) learned for this queue.
        let rules = queue_rules(settings, queue.crawl_delay);
        if let Some(learned) = tuple.hints.pace
            && !matches!(queue.pace, QueuePace::Fixed)
        {
            let blocked = blocked_instant(settings, &tuple.hints).map(Instant::into_std);
            let now = (Instant::now().into_std(), chrono::Utc::now());
            queue.pace.adopt(learned, blocked, &rules, now);
        }
        // What the frontier remembers of the queue's last fetch and hold (before a restart, or
        // by another process): the queue's delay runs from then.
        let delay = queue.pace.interval(&rules);
        if let Some(start) = remembered_start(settings, delay, &tuple.hints) {
            queue.next_allowed = queue.next_allowed.max(start);
        }
        queue.items.push_back(tuple);
        self.queued += 1;
        if queue.place == Place::Nowhere {
            queue.place = Place::Ring;
            self.ring.push_back(key);
        }
    }

    /// One round-robin pass: hands out up to `slots` URLs, at most one per queue, from the queues
    /// whose threads and delay allow a fetch at `now`. A URL whose lease was lost is failed back to
    /// the spout instead (fencing: its queue's new owner fetches it).
    pub fn take_ready(&mut self, now: Instant, slots: usize) -> Ready {
        self.wake_sleepers(now);
        let threads = self.settings.threads_per_queue;
        let mut ready = Ready::default();
        for _ in 0..self.ring.len() {
            if ready.fetches.len() >= slots {
                break;
            }
            let Some(key) = self.ring.pop_front() else {
                break;
            };
            let Some(queue) = self.queues.get_mut(&key) else {
                continue;
            };
            if queue.items.is_empty() {
                queue.place = Place::Nowhere;
                continue;
            }
            if queue.in_flight >= threads {
                queue.place = Place::Busy;
                continue;
            }
            if queue.next_allowed > now {
                queue.place = Place::Sleeping(queue.next_allowed);
                self.sleeping.push(Reverse((queue.next_allowed, key)));
                continue;
            }
            let Some(tuple) = queue.items.pop_front() else {
                continue;
            };
            self.queued -= 1;
            if tuple.hints.may_fetch() {
                queue.in_flight += 1;
                ready.fetches.push((key.clone(), tuple));
            } else {
                fail_fenced(&key, tuple, "fetch");
            }
            if queue.items.is_empty() {
                queue.place = Place::Nowhere;
            } else if queue.in_flight < threads {
                // It may hand out another right away (several threads, or a URL fenced).
                ready.wake = Some(now);
                self.ring.push_back(key);
            } else {
                queue.place = Place::Busy;
            }
        }
        if let Some(Reverse((at, _))) = self.sleeping.peek() {
            ready.wake = Some(ready.wake.map_or(*at, |wake| wake.min(*at)));
        }
        ready
    }

    /// Moves the sleepers whose time came to the ring.
    fn wake_sleepers(&mut self, now: Instant) {
        while let Some(Reverse((at, _))) = self.sleeping.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, key))) = self.sleeping.pop() else {
                break;
            };
            let Some(queue) = self.queues.get_mut(&key) else {
                continue;
            };
            if queue.place == Place::Sleeping(at) {
                queue.place = Place::Ring;
                self.ring.push_back(key);
            }
        }
    }

    /// Ends a fetch handed out on `key` at `finished`: frees its thread, has the queue's pace
    /// follow it and, when it reached the server, holds the queue for its interval (or the
    /// Retry-After hold, or the pace's block, when longer). What the pace learned, for the
    /// frontier.
    pub fn complete(&mut self, key: &str, learned: &Learned, finished: Instant) -> PaceNews {
        let Some(queue) = self.queues.get_mut(key) else {
            return PaceNews::default();
        };
        queue.in_flight = queue.in_flight.saturating_sub(1);
        if learned.crawl_delay.is_some() {
            queue.crawl_delay = learned.crawl_delay;
        }
        let rules = queue_rules(&self.settings, queue.crawl_delay);
        let fetch = FinishedFetch {
            signal: learned.signal,
            started: learned.started,
            finished,
        };
        let news = self.paces.follow(&mut queue.pace, fetch, &rules);
        if learned.contacted_server {
            let hold = learned
                .hold
                .unwrap_or_default()
                .max(queue.pace.interval(&rules));
            let until = finished
                .checked_add(hold)
                .unwrap_or(finished + self.settings.max_retry_after);
            queue.next_allowed = queue.next_allowed.max(until);
            if learned.hold.is_some() {
                queue.held_until = Some(until);
            }
        }
        if let Some(end) = news.blocked_until {
            queue.next_allowed = queue.next_allowed.max(end);
            queue.held_until = Some(queue.held_until.map_or(end, |held| held.max(end)));
        }
        // A queue that waited for a thread takes its turn again (the ring files it under its
        // delay when that still runs).
        if queue.place == Place::Busy {
            queue.place = Place::Ring;
            self.ring.push_back(key.to_string());
        }
        news
    }

    /// At most once a second, forgets idle queues whose delay has passed: memory stays bounded by
    /// the hosts being crawled, not by every host ever seen.
    /// A forgotten queue's learned pace is kept for when it comes back (see [`Paces`]).
    pub fn sweep(&mut self, now: Instant) {
        if now.duration_since(self.last_sweep) < SWEEP_EVERY {
            return;
        }
        let mut learned = Vec::new();
        self.queues.retain(|key, queue| {
            let idle = queue.is_idle(now);
            if idle && !matches!(queue.pace, QueuePace::Fixed) {
                learned.push((key.clone(), queue.pace.clone(), queue.crawl_delay));
            }
            !idle
        });
        for (key, pace, crawl_delay) in learned {
            let rules = queue_rules(&self.settings, crawl_delay);
            self.paces.forget(key, pace, &rules);
        }
        self.last_sweep = now;
    }

    /// The queues as a live view shows them: totals, the `rows` queues holding the most URLs, the
    /// waiting queue that may fetch soonest, and the `rows` queues kept furthest above their
    /// configured delay. Two passes over the queues (and one over the book of kept paces).
    pub fn view(&self, now: Instant, active: usize, rows: usize) -> FetcherView {
        let (paced, backed_off) = self.paced(rows);
        let mut by_size: Vec<(&String, &HostQueue)> = self.queues.iter().collect();
        let rows = rows.min(by_size.len());
        if rows > 0 {
            by_size.select_nth_unstable_by(rows - 1, |a, b| b.1.items.len().cmp(&a.1.items.len()));
        }
        by_size.truncate(rows);
        by_size.sort_by(|a, b| b.1.items.len().cmp(&a.1.items.len()).then(a.0.cmp(b.0)));
        let busiest = by_size
            .into_iter()
            .map(|(key, queue)| QueueView {
                key: key.clone(),
                queued: queue.items.len(),
                in_flight: queue.in_flight,
                next_fetch_in: queue.next_allowed.saturating_duration_since(now),
                crawl_delay: queue.crawl_delay,
                held_for: queue
                    .held_until
                    .map(|until| until.saturating_duration_since(now))
                    .filter(|left| !left.is_zero()),
                pace: pace_shown(&self.settings, queue),
            })
            .collect();
        let next_wake = self
            .sleeping
            .iter()
            .map(|Reverse(entry)| entry)
            .filter(|(at, key)| {
                self.queues
                    .get(key)
                    .is_some_and(|queue| queue.place == Place::Sleeping(*at))
            })
            .min()
            .map(|(at, key)| (key.clone(), at.saturating_duration_since(now)));
        FetcherView {
            queued: self.queued,
            queues: self.queues.len(),
            active,
            busiest,
            next_wake,
            paced,
            backed_off,
            stale: false,
        }
    }

    /// Empties every queue, returning the URLs that waited.
    pub fn drain(&mut self) -> Vec<Tuple> {
        self.ring.clear();
        self.sleeping.clear();
        self.queued = 0;
        self.queues
            .drain()
            .flat_map(|(_, queue)| queue.items)
            .collect()
    }
}

/// Fails `tuple` back to the spout unfetched: the lease on its queue was lost before the `moment`
/// ("fetch" or "request"), so the queue's new owner fetches it.
pub(super) fn fail_fenced(key: &str, tuple: Tuple, moment: &str) {
    debug!(key = %key, url = %crate::redact::url_text(tuple.url.url.as_str()), moment, "lease lost; not fetched");
    metrics::counter!("squall_fetch_fenced_total").increment(1);
    tuple.ack.fail(format!(
        "the lease on queue {key} was lost before the {moment}; left due"
    ));
}

/// The earliest a queue may fetch by what the frontier remembers of it (`hints`): the end of its
/// last fetch plus `delay` (the interval its pace keeps: the configured delay under `fixed`), or
/// the server's Retry-After hold, whichever is later; `None` when both have passed. A wait is
/// never longer than the delay or `fetcher.max.retry.after`, so that a clock far ahead on another
/// machine cannot stop a queue.
fn remembered_start(
    settings: &FetcherSettings,
    delay: Duration,
    hints: &crate::frontier::QueueHints,
) -> Option<Instant> {
    let after_last = hints
        .last_fetch
        .and_then(|ended| ended.checked_add_signed(chrono::TimeDelta::from_std(delay).ok()?));
    let latest = after_last.max(hints.blocked_until)?;
    instant_of(latest, delay.max(longest_hold(settings)))
}

/// The wall-clock time `at` on this process's clock, no further ahead than `longest`; none when it
/// has passed.
fn instant_of(at: chrono::DateTime<chrono::Utc>, longest: Duration) -> Option<Instant> {
    let wait = (at - chrono::Utc::now()).to_std().ok()?;
    Instant::now().checked_add(wait.min(longest))
}

/// The longest a hold the frontier remembers may stop a queue: `fetcher.max.retry.after`, or
/// under `block` the longest block or Retry-After it honours.
fn longest_hold(settings: &FetcherSettings) -> Duration {
    let pace = &settings.pace;
    match pace.policy {
        PaceKind::Block => {
            let blocks = pace.backoff_max_block.max(pace.backoff_base);
            let asked = pace.max_retry_after_block.unwrap_or(A_YEAR);
            settings.max_retry_after.max(blocks).max(asked)
        }
        PaceKind::Fixed | PaceKind::Adaptive => settings.max_retry_after,
    }
}

/// The end of the block the frontier remembers for a queue (`hints.blocked_until`), on this
/// process's clock, within [`longest_hold`]; none when it has passed.
fn blocked_instant(
    settings: &FetcherSettings,
    hints: &crate::frontier::QueueHints,
) -> Option<Instant> {
    instant_of(hints.blocked_until?, longest_hold(settings))
}

/// The interval `queue` keeps and what set it, when its pace learned something.
fn pace_shown(
    settings: &FetcherSettings,
    queue: &HostQueue,
) -> Option<(Duration, crate::frontier::PaceCause)> {
    let rules = queue_rules(settings, queue.crawl_delay);
    let learned = queue.pace.learned(&rules)?;
    Some((queue.pace.interval(&rules), learned.cause))
}

/// The pace rules of a queue whose robots.txt Crawl-delay (or the frontier's) is `crawl_delay`.
fn queue_rules(settings: &FetcherSettings, crawl_delay: Option<Duration>) -> Rules<'_> {
    Rules::new(
        settings,
        queue_delay(settings, crawl_delay),
        crawl_delay.is_some(),
    )
}

/// The delay a queue keeps between fetches, given its robots.txt Crawl-delay: the server delay
/// (or the min delay when the queue allows several fetches at once), robots.txt's within
/// `fetcher.max.crawl.delay`, never below the server delay when `fetcher.server.delay.force` is set.
pub(super) fn queue_delay(settings: &FetcherSettings, crawl_delay: Option<Duration>) -> Duration {
    let base = settings.base_delay();
    match crawl_delay.map(|robots| robots.min(settings.max_crawl_delay)) {
        None => base,
        Some(robots) if settings.server_delay_force => robots.max(base),
        Some(robots) => robots,
    }
}

mod paced;
#[cfg(test)]
mod tests;
