//! The fetcher's host queues: one queue of URLs per partition key, and the politeness rules that
//! decide when each may hand out its next URL.
//!
//! [`HostQueues`] keeps these invariants, given that its owner calls [`complete`](HostQueues::complete)
//! once for every URL [`take_ready`](HostQueues::take_ready) handed out, and
//! [`enqueue`](HostQueues::enqueue) only while [`has_room`](HostQueues::has_room):
//!
//! - at most `threads_per_queue` fetches are in flight per key;
//! - after a fetch that reached the server, the next fetch on its key starts no sooner than the
//!   queue's delay ([`queue_delay`], from robots.txt's Crawl-delay and the
//!   frontier's hint) after its end, or than the server's Retry-After hold when that is longer;
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
use super::settings::FetcherSettings;
use crate::message::Tuple;

/// How often idle queues are forgotten.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

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
    /// The end of the last Retry-After hold the server asked for.
    held_until: Option<Instant>,
    place: Place,
}

impl HostQueue {
    fn new() -> Self {
        HostQueue {
            items: VecDeque::new(),
            in_flight: 0,
            next_allowed: Instant::now(),
            crawl_delay: None,
            held_until: None,
            place: Place::Nowhere,
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
        let queue = self
            .queues
            .entry(key.clone())
            .or_insert_with(HostQueue::new);
        // A delay another process learned for this queue (carried by a shared frontier).
        if let Some(delay) = tuple.hints.crawl_delay {
            queue.crawl_delay = Some(queue.crawl_delay.map_or(delay, |d| d.max(delay)));
        }
        // What the frontier remembers of the queue's last fetch and hold (before a restart, or
        // by another process): the queue's delay runs from then.
        if let Some(start) = remembered_start(&self.settings, queue.crawl_delay, &tuple.hints) {
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

    /// Ends a fetch handed out on `key` at `finished`: frees its thread and, when it reached the
    /// server, holds the queue for its delay (or the Retry-After hold, when longer).
    pub fn complete(&mut self, key: &str, learned: &Learned, finished: Instant) {
        let Some(queue) = self.queues.get_mut(key) else {
            return;
        };
        queue.in_flight = queue.in_flight.saturating_sub(1);
        if learned.crawl_delay.is_some() {
            queue.crawl_delay = learned.crawl_delay;
        }
        if learned.contacted_server {
            let delay = queue_delay(&self.settings, queue.crawl_delay);
            let hold = learned.hold.unwrap_or_default().max(delay);
            let until = finished
                .checked_add(hold)
                .unwrap_or(finished + self.settings.max_retry_after);
            queue.next_allowed = queue.next_allowed.max(until);
            if learned.hold.is_some() {
                queue.held_until = Some(until);
            }
        }
        // A queue that waited for a thread takes its turn again (the ring files it under its
        // delay when that still runs).
        if queue.place == Place::Busy {
            queue.place = Place::Ring;
            self.ring.push_back(key.to_string());
        }
    }

    /// At most once a second, forgets idle queues whose delay has passed: memory stays bounded by
    /// the hosts being crawled, not by every host ever seen.
    pub fn sweep(&mut self, now: Instant) {
        if now.duration_since(self.last_sweep) < SWEEP_EVERY {
            return;
        }
        self.queues.retain(|_, queue| !queue.is_idle(now));
        self.last_sweep = now;
    }

    /// The queues as a live view shows them: totals, the `rows` queues holding the most URLs, and
    /// the waiting queue that may fetch soonest. One pass over the queues.
    pub fn view(&self, now: Instant, active: usize, rows: usize) -> FetcherView {
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
/// last fetch plus its delay, or the server's Retry-After hold, whichever is later; `None` when
/// both have passed. A wait is never longer than the delay or `fetcher.max.retry.after`, so that a
/// clock far ahead on another machine cannot stop a queue.
fn remembered_start(
    settings: &FetcherSettings,
    crawl_delay: Option<Duration>,
    hints: &crate::frontier::QueueHints,
) -> Option<Instant> {
    let delay = queue_delay(settings, crawl_delay);
    let after_last = hints
        .last_fetch
        .and_then(|ended| ended.checked_add_signed(chrono::TimeDelta::from_std(delay).ok()?));
    let latest = after_last.max(hints.blocked_until)?;
    let wait = (latest - chrono::Utc::now()).to_std().ok()?;
    Some(Instant::now() + wait.min(delay.max(settings.max_retry_after)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{Lease, QueueHints};
    use crate::message::{AckHandle, AckMessage};
    use crate::model::CrawlUrl;
    use tokio::sync::mpsc;

    fn tuple(key: &str, path: &str, acks: &mpsc::UnboundedSender<AckMessage>) -> Tuple {
        let url = CrawlUrl::new(url::Url::parse(&format!("http://{key}{path}")).expect("url"));
        Tuple {
            ack: AckHandle::new(url.clone(), acks.clone()),
            url,
            key: key.to_string(),
            hints: QueueHints::default(),
        }
    }

    fn settings(threads_per_queue: usize, delay_ms: u64) -> FetcherSettings {
        FetcherSettings {
            server_delay: Duration::from_millis(delay_ms),
            server_min_delay: Duration::from_millis(delay_ms),
            threads_per_queue,
            max_urls_in_queues: 4,
            ..FetcherSettings::default()
        }
    }

    /// Queues under `settings` holding a URL for each `(key, path)` of `urls`, in that order, with
    /// the channel their acks go to (kept open by the caller).
    fn holding(
        settings: FetcherSettings,
        urls: &[(&str, &str)],
    ) -> (
        HostQueues,
        mpsc::UnboundedSender<AckMessage>,
        mpsc::UnboundedReceiver<AckMessage>,
    ) {
        let (acks, acked) = mpsc::unbounded_channel();
        let mut queues = HostQueues::new(settings);
        for (key, path) in urls {
            queues.enqueue(tuple(key, path, &acks));
        }
        (queues, acks, acked)
    }

    /// Enqueues `url`, which must not be ready at once (`why` says why not): the time asked at, and
    /// when the queues wake.
    fn waits(queues: &mut HostQueues, url: Tuple, why: &str) -> (Instant, Option<Instant>) {
        let before = Instant::now();
        queues.enqueue(url);
        let waiting = queues.take_ready(before, 10);
        assert!(waiting.fetches.is_empty(), "{why}");
        (before, waiting.wake)
    }

    fn keys(ready: &Ready) -> Vec<&str> {
        ready.fetches.iter().map(|(key, _)| key.as_str()).collect()
    }

    const REACHED: Learned = Learned {
        contacted_server: true,
        crawl_delay: None,
        hold: None,
    };

    #[test]
    fn one_url_per_queue_per_pass_round_robin_within_the_slots() {
        let urls = [("a", "/1"), ("a", "/2"), ("b", "/1")];
        let (mut queues, acks, _acked) = holding(settings(2, 0), &urls);
        let now = Instant::now();
        let first = queues.take_ready(now, 10);
        assert_eq!(keys(&first), ["a", "b"]);
        assert_eq!(
            first.wake,
            Some(now),
            "a may hand out its second URL at once"
        );
        assert_eq!(keys(&queues.take_ready(now, 10)), ["a"]);
        assert_eq!(queues.queued(), 0);
        assert!(queues.take_ready(now, 10).fetches.is_empty());
        queues.enqueue(tuple("c", "/1", &acks));
        assert!(queues.take_ready(now, 0).fetches.is_empty(), "no slot");
        assert_eq!(queues.queued(), 1);
    }

    #[test]
    fn threads_per_queue_and_the_delay_after_a_fetch_are_honoured() {
        let (mut queues, _acks, _acked) = holding(settings(1, 500), &[("a", "/1"), ("a", "/2")]);
        let start = Instant::now();
        assert_eq!(keys(&queues.take_ready(start, 10)), ["a"]);
        let busy = queues.take_ready(start, 10);
        assert!(busy.fetches.is_empty(), "one thread per queue");
        assert_eq!(busy.wake, None, "only the completion frees the queue");
        let finished = start + Duration::from_secs(1);
        queues.complete("a", &REACHED, finished);
        let early = queues.take_ready(finished + Duration::from_millis(499), 10);
        assert!(
            early.fetches.is_empty(),
            "the delay runs from the end of the fetch"
        );
        assert_eq!(early.wake, Some(finished + Duration::from_millis(500)));
        let ready = queues.take_ready(finished + Duration::from_millis(500), 10);
        assert_eq!(keys(&ready), ["a"]);
    }

    #[test]
    fn a_remembered_last_fetch_or_hold_delays_the_first_fetch_after_a_restart() {
        let (acks, _acked) = mpsc::unbounded_channel();
        let mut queues = HostQueues::new(settings(1, 1000));
        let mut resumed = tuple("a", "/1", &acks);
        resumed.hints.last_fetch = Some(chrono::Utc::now() - chrono::TimeDelta::milliseconds(200));
        let (before, wake) = waits(
            &mut queues,
            resumed,
            "0.2 s after the last fetch, 1 s apart",
        );
        let wake = wake.expect("it waits for the rest of its delay");
        let left = wake.duration_since(before);
        assert!(
            left > Duration::from_millis(700) && left <= Duration::from_millis(800),
            "{left:?}"
        );
        assert_eq!(keys(&queues.take_ready(wake, 10)), ["a"]);

        let mut long_ago = tuple("b", "/1", &acks);
        long_ago.hints.last_fetch = Some(chrono::Utc::now() - chrono::TimeDelta::seconds(5));
        queues.enqueue(long_ago);
        assert_eq!(keys(&queues.take_ready(Instant::now(), 10)), ["b"]);

        let mut held = tuple("c", "/1", &acks);
        held.hints.blocked_until = Some(chrono::Utc::now() + chrono::TimeDelta::seconds(30));
        let (before, wake) = waits(&mut queues, held, "held by a remembered Retry-After");
        let held_for = wake.expect("wakes").duration_since(before);
        assert!(held_for > Duration::from_secs(29), "{held_for:?}");
    }

    #[test]
    fn retry_after_and_crawl_delays_hold_the_queue() {
        let (acks, _acked) = mpsc::unbounded_channel();
        let mut queues = HostQueues::new(settings(1, 0));
        let mut hinted = tuple("a", "/1", &acks);
        hinted.hints.crawl_delay = Some(Duration::from_secs(3));
        queues.enqueue(hinted);
        queues.enqueue(tuple("a", "/2", &acks));
        queues.enqueue(tuple("a", "/3", &acks));
        let start = Instant::now();
        queues.take_ready(start, 10);
        queues.complete("a", &REACHED, start);
        let wake = queues.take_ready(start, 10).wake;
        assert_eq!(
            wake,
            Some(start + Duration::from_secs(3)),
            "the frontier's delay"
        );
        let at = start + Duration::from_secs(3);
        queues.take_ready(at, 10);
        let busy = Learned {
            hold: Some(Duration::from_secs(60)),
            ..REACHED
        };
        queues.complete("a", &busy, at);
        let wake = queues.take_ready(at, 10).wake;
        assert_eq!(wake, Some(at + Duration::from_secs(60)), "Retry-After");
    }

    #[test]
    fn the_view_shows_the_busiest_queues_their_holds_and_the_next_wake() {
        let urls = [("a", "/1"), ("a", "/2"), ("b", "/1"), ("b", "/2")];
        let (mut queues, _acks, _acked) = holding(settings(1, 1_000), &urls);
        let start = Instant::now();
        queues.take_ready(start, 10);
        let busy = Learned {
            hold: Some(Duration::from_secs(60)),
            ..REACHED
        };
        queues.complete("a", &busy, start);
        queues.complete("b", &REACHED, start);
        queues.take_ready(start, 10);
        let later = start + Duration::from_millis(400);
        let view = queues.view(later, 0, 1);
        assert_eq!((view.queued, view.queues, view.active), (2, 2, 0));
        assert_eq!(view.busiest.len(), 1, "one row asked for");
        let a = queues.view(later, 0, 5).busiest;
        let held = a.iter().find(|q| q.key == "a").expect("queue a");
        assert_eq!(
            held.held_for,
            Some(Duration::from_millis(59_600)),
            "Retry-After left"
        );
        assert_eq!(held.next_fetch_in, Duration::from_millis(59_600));
        let b = a.iter().find(|q| q.key == "b").expect("queue b");
        assert_eq!((b.queued, b.held_for), (1, None));
        assert_eq!(
            view.next_wake,
            Some(("b".to_string(), Duration::from_millis(600))),
            "b waits out its 1 s delay first"
        );
    }

    #[test]
    fn an_unreached_server_or_a_dead_task_only_frees_the_thread() {
        let (mut queues, _acks, _acked) = holding(settings(1, 5000), &[("a", "/1"), ("a", "/2")]);
        let now = Instant::now();
        queues.take_ready(now, 10);
        queues.complete("a", &Learned::default(), now);
        assert_eq!(keys(&queues.take_ready(now, 10)), ["a"]);
    }

    #[test]
    fn fenced_urls_fail_back_and_idle_queues_are_swept() {
        let (acks, mut acked) = mpsc::unbounded_channel();
        let mut queues = HostQueues::new(settings(1, 0));
        let lost = Lease::until(std::time::Instant::now() + Duration::from_secs(60));
        lost.revoke();
        let mut fenced = tuple("a", "/lost", &acks);
        fenced.hints.lease = Some(lost);
        queues.enqueue(fenced);
        queues.enqueue(tuple("a", "/kept", &acks));
        let now = Instant::now();
        let ready = queues.take_ready(now, 10);
        assert!(ready.fetches.is_empty());
        assert_eq!(ready.wake, Some(now), "the next URL of the queue at once");
        let failed = std::iter::from_fn(|| acked.try_recv().ok())
            .any(|m| matches!(m, AckMessage::Failed { reason, .. } if reason.contains("lease")));
        assert!(failed, "the fenced URL was failed back");
        assert_eq!(keys(&queues.take_ready(now, 10)), ["a"]);
        queues.complete("a", &REACHED, now);
        assert_eq!(queues.len(), 1);
        queues.sweep(now + SWEEP_EVERY);
        assert_eq!(queues.len(), 0, "idle and its delay passed");
    }

    #[test]
    fn room_and_drain() {
        let (acks, _acked) = mpsc::unbounded_channel();
        let mut queues = HostQueues::new(settings(1, 0));
        for path in ["/1", "/2", "/3", "/4"] {
            assert!(queues.has_room());
            queues.enqueue(tuple("a", path, &acks));
        }
        assert!(!queues.has_room(), "fetcher.max.urls.in.queues reached");
        assert_eq!(queues.drain().len(), 4);
        assert_eq!(queues.queued(), 0);
        assert!(queues.take_ready(Instant::now(), 10).fetches.is_empty());
    }

    #[test]
    fn queue_delay_follows_robots_within_the_limits() {
        let secs = Duration::from_secs;
        let settings = FetcherSettings {
            server_delay: secs(2),
            server_min_delay: secs(1),
            max_crawl_delay: secs(10),
            ..FetcherSettings::default()
        };
        assert_eq!(queue_delay(&settings, None), secs(2));
        assert_eq!(
            queue_delay(&settings, Some(secs(1))),
            secs(1),
            "robots wins"
        );
        assert_eq!(queue_delay(&settings, Some(secs(60))), secs(10), "capped");
        let forced = FetcherSettings {
            server_delay_force: true,
            ..settings.clone()
        };
        assert_eq!(
            queue_delay(&forced, Some(secs(1))),
            secs(2),
            "never shorter"
        );
        let parallel = FetcherSettings {
            threads_per_queue: 2,
            ..settings
        };
        assert_eq!(queue_delay(&parallel, None), secs(1), "the min delay");
    }
}
