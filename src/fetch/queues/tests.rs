//! The host queues' invariants, one rule at a time, with times given as values.

use super::*;
use crate::frontier::{Lease, QueueHints};
use crate::message::{AckHandle, AckMessage};
use crate::model::CrawlUrl;
use tokio::sync::mpsc;

mod pace;

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
    signal: Signal::Neutral,
    started: None,
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
