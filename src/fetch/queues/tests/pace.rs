//! The queues under each `fetcher.pace.policy`: what a push-back does to a queue's next fetch,
//! what the queue tells the frontier, and what it takes from it.

use chrono::Utc;

use super::*;
use crate::fetch::PaceKind;
use crate::frontier::{LearnedPace, PaceCause};

/// Settings of one fetch at a time per queue, a second apart, under `policy`.
fn under(policy: PaceKind) -> FetcherSettings {
    let mut settings = settings(1, 1000);
    settings.pace.policy = policy;
    settings
}

/// A 429 answer without Retry-After, to a request that started at `started`.
fn too_many(started: Instant) -> Learned {
    Learned {
        signal: Signal::PushBack {
            cause: PaceCause::Http(429),
            took: Some(Duration::from_millis(5)),
        },
        started: Some(started),
        ..REACHED
    }
}

/// Fetches the one URL of `key` at `at` and completes it with `learned` a few milliseconds
/// later: what the pace learned, and when the queue may fetch again.
fn fetch_once(
    queues: &mut HostQueues,
    key: &str,
    at: Instant,
    learned: Learned,
) -> (PaceNews, Instant) {
    assert_eq!(keys(&queues.take_ready(at, 10)), [key]);
    let finished = at + Duration::from_millis(5);
    let news = queues.complete(key, &learned, finished);
    let next = queues
        .queues
        .get(key)
        .map(|q| q.next_allowed)
        .expect("kept");
    (news, next)
}

/// Host `a` with two URLs under `policy`, its first fetched at `at` and answered 429.
struct PushedBack {
    queues: HostQueues,
    news: PaceNews,
    /// When the queue may fetch again.
    next: Instant,
    at: Instant,
    /// Kept open for the URL still queued.
    _acks: (
        mpsc::UnboundedSender<AckMessage>,
        mpsc::UnboundedReceiver<AckMessage>,
    ),
}

fn pushed_back_once(policy: PaceKind) -> PushedBack {
    let (mut queues, acks, acked) = holding(under(policy), &[("a", "/1")]);
    queues.enqueue(tuple("a", "/2", &acks));
    let at = Instant::now();
    let (news, next) = fetch_once(&mut queues, "a", at, too_many(at));
    PushedBack {
        queues,
        news,
        next,
        at,
        _acks: (acks, acked),
    }
}

#[test]
fn under_fixed_a_push_back_changes_nothing() {
    let PushedBack {
        queues,
        news,
        next,
        at,
        ..
    } = pushed_back_once(PaceKind::Fixed);
    assert_eq!(news, PaceNews::default());
    assert_eq!(
        next,
        at + Duration::from_millis(1005),
        "the delay from the end"
    );
    let view = queues.view(at, 0, 5);
    assert_eq!(view.busiest[0].pace, None, "no pace shown");
    assert_eq!(
        (view.paced.len(), view.backed_off),
        (0, 0),
        "nor any queue slowed"
    );
}

#[test]
fn under_adaptive_a_push_back_doubles_the_wait_and_is_reported() {
    let PushedBack {
        queues,
        news,
        next,
        at,
        ..
    } = pushed_back_once(PaceKind::Adaptive);
    let wait = next - (at + Duration::from_millis(5));
    assert!(
        (Duration::from_secs(2)..=Duration::from_millis(2200)).contains(&wait),
        "{wait:?}"
    );
    let report = news.report.expect("a back-off step is reported");
    assert_eq!((report.cause, report.strikes), (PaceCause::Http(429), 1));
    assert_eq!(report.delay, wait);
    let view = queues.view(at, 0, 5);
    assert_eq!(
        view.busiest[0].pace,
        Some((wait, PaceCause::Http(429))),
        "the status page's columns"
    );
    assert_eq!(view.backed_off, 1);
    let paced = &view.paced[0];
    assert_eq!(
        (
            paced.key.as_str(),
            paced.pace,
            paced.cause,
            paced.configured
        ),
        ("a", wait, PaceCause::Http(429), Duration::from_secs(1)),
        "the table of queues slowed by their server"
    );
    assert!(paced.held && paced.strikes == 1);
}

#[test]
fn under_block_a_push_back_blocks_the_queue_for_a_minute() {
    let PushedBack { news, next, at, .. } = pushed_back_once(PaceKind::Block);
    let finished = at + Duration::from_millis(5);
    let blocked = news.blocked_until.expect("a block");
    assert_eq!(next, blocked);
    assert!((60.0..66.0).contains(&(blocked - finished).as_secs_f64()));
    let wall = news
        .blocked_until_wall(finished, Utc::now())
        .expect("on the wall clock");
    assert!(wall > Utc::now() + chrono::TimeDelta::seconds(59));
    assert_eq!(news.report.map(|r| r.strikes), Some(1));
}

#[test]
fn a_pace_the_frontier_carries_is_adopted_and_one_kept_for_a_forgotten_queue() {
    let (mut queues, acks, _acked) = holding(under(PaceKind::Adaptive), &[]);
    let mut carried = tuple("a", "/1", &acks);
    carried.hints.pace = Some(LearnedPace {
        delay: Duration::from_secs(4),
        cause: PaceCause::Http(503),
        strikes: 1,
        limit: Some(Duration::from_secs(2)),
        at: Utc::now(),
    });
    queues.enqueue(carried);
    queues.enqueue(tuple("a", "/2", &acks));
    let at = Instant::now();
    let neutral = Learned {
        started: Some(at),
        ..REACHED
    };
    let (news, next) = fetch_once(&mut queues, "a", at, neutral);
    assert_eq!(news.report, None, "what was adopted is not reported back");
    assert_eq!(
        next - (at + Duration::from_millis(5)),
        Duration::from_secs(4)
    );

    let later = next + Duration::from_secs(1);
    fetch_once(&mut queues, "a", later, too_many(later));
    let backed_off = queues
        .queues
        .get("a")
        .map(|q| q.pace.clone())
        .expect("kept");
    let idle = later + Duration::from_secs(3600);
    queues.sweep(idle);
    assert_eq!(queues.len(), 0, "forgotten while idle");
    let view = queues.view(idle, 0, 5);
    assert_eq!(
        view.paced
            .iter()
            .map(|p| (p.key.as_str(), p.held))
            .collect::<Vec<_>>(),
        [("a", false)],
        "a kept pace is listed as slowed, not held"
    );
    queues.enqueue(tuple("a", "/3", &acks));
    let back = queues
        .queues
        .get("a")
        .map(|q| q.pace.clone())
        .expect("back");
    assert_eq!(back, backed_off, "its pace taken back from the book");
}

#[test]
fn a_remembered_last_fetch_holds_a_queue_for_its_paces_interval_not_the_configured_delay() {
    // An opted-in floor of 0.25 s, reached: a URL the frontier hands out with its queue's last
    // fetch 0.3 s ago may go now (held for the configured 1 s, every URL a host got from the
    // embedded frontier waited out a second from its last fetch).
    let mut settings = under(PaceKind::Adaptive);
    settings.pace.floor = Some(Duration::from_millis(250));
    let (mut queues, acks, _acked) = holding(settings, &[]);
    let mut carried = tuple("a", "/1", &acks);
    carried.hints.pace = Some(LearnedPace {
        delay: Duration::from_millis(250),
        cause: PaceCause::Faster,
        strikes: 0,
        limit: None,
        at: Utc::now(),
    });
    carried.hints.last_fetch = Some(Utc::now() - chrono::TimeDelta::milliseconds(300));
    queues.enqueue(carried);
    let ready = queues.take_ready(Instant::now(), 1);
    assert_eq!(
        ready.fetches.len(),
        1,
        "due at once: {:?}",
        queues.queues.get("a").map(|q| q.next_allowed)
    );

    // Under fixed, the configured second still runs from the last fetch.
    let (mut queues, acks, _acked) = holding(under(PaceKind::Fixed), &[]);
    let mut carried = tuple("a", "/1", &acks);
    carried.hints.last_fetch = Some(Utc::now() - chrono::TimeDelta::milliseconds(300));
    queues.enqueue(carried);
    assert!(
        queues.take_ready(Instant::now(), 1).fetches.is_empty(),
        "held to the second"
    );
}
