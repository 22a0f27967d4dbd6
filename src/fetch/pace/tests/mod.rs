//! The pace's transitions, replayed with times given as values and a seeded jitter.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;

use super::*;
use crate::fetch::FetcherSettings;

mod against_site;
mod blocks;
mod learning;
use crate::fetch::queues::queue_delay;
use crate::frontier::{LearnedPace, PaceCause};

fn secs(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

/// The fetches of one test: times counted in seconds from one start.
struct Timeline {
    start: Instant,
    wall: DateTime<Utc>,
}

impl Timeline {
    fn new() -> Self {
        Timeline {
            start: Instant::now(),
            wall: DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
        }
    }

    /// A fetch that started at `started` and ended at `finished` (seconds) with `signal`.
    fn event(&self, signal: Signal, started: f64, finished: f64) -> Event {
        Event {
            signal,
            started: self.start + secs(started),
            finished: self.start + secs(finished),
            at: self.wall_at(finished),
        }
    }

    fn wall_at(&self, seconds: f64) -> DateTime<Utc> {
        self.wall + TimeDelta::from_std(secs(seconds)).unwrap_or_default()
    }
}

const TOO_MANY: Signal = Signal::PushBack {
    cause: PaceCause::Http(429),
    took: None,
};

fn healthy(millis: u64) -> Signal {
    Signal::Healthy {
        took: Duration::from_millis(millis),
    }
}

/// Default settings without jitter, so that each step is exact, and a recovery margin of 10 %,
/// which the tests' figures are worked out for (the default is 25 %).
fn exact() -> FetcherSettings {
    let mut settings = FetcherSettings::default();
    settings.pace.backoff_jitter = 0.0;
    settings.pace.recovery_margin = 0.1;
    settings
}

/// Feeds `signal` to `pace` as fetches one after the other, one a second from `from`.
fn feed(pace: &mut Pace, line: &Timeline, rules: &Rules<'_>, signal: Signal, from: f64, n: u32) {
    let mut rng = fastrand::Rng::with_seed(7);
    for i in 0..n {
        let at = from + f64::from(i);
        pace.observe(&line.event(signal, at, at + 0.01), rules, &mut rng);
    }
}

/// Under `settings`, the rules of a queue whose configured delay is a second (no Crawl-delay),
/// a new timeline and the queue's first pace.
fn one_second(settings: &FetcherSettings) -> (Rules<'_>, Timeline, Pace) {
    let rules = Rules::new(settings, secs(1.0), false);
    let pace = Pace::new(&rules);
    (rules, Timeline::new(), pace)
}

#[test]
fn push_back_doubles_the_delay_with_jitter_up_to_the_cap() {
    let settings = FetcherSettings::default();
    let (rules, line, mut pace) = one_second(&settings);
    let mut rng = fastrand::Rng::with_seed(59);
    for i in 0..20 {
        let before = pace.delay();
        let at = f64::from(i) * 10.0;
        pace.observe(&line.event(TOO_MANY, at, at + 0.1), &rules, &mut rng);
        let (least, most) = (before * 2, before.mul_f64(2.2));
        let cap = settings.pace.backoff_max;
        assert!(
            pace.delay() == cap || (least <= pace.delay() && pace.delay() < most),
            "{before:?} -> {:?}",
            pace.delay()
        );
        assert_eq!(pace.strikes(), i + 1);
    }
    assert_eq!(pace.delay(), settings.pace.backoff_max, "capped");
    assert_eq!(pace.cause(), PaceCause::Http(429));
}

/// Fetches of one queue that overlap: each a signal, a start and an end, drawn from `seed`.
fn overlapping(seed: u64) -> Vec<(Signal, f64, f64)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut fetches: Vec<(Signal, f64, f64)> = (0..6)
        .map(|_| {
            let signal = match rng.u8(0..3) {
                0 => TOO_MANY,
                1 => Signal::PushBack {
                    cause: PaceCause::Timeout,
                    took: None,
                },
                _ => healthy(5),
            };
            let started = rng.f64() * 2.0;
            (signal, started, started + 0.05 + rng.f64())
        })
        .collect();
    fetches.sort_by(|a, b| a.2.total_cmp(&b.2));
    fetches
}

/// The rule, written plainly: a push-back that started after the last escalation is a new
/// incident (a strike, and the escalation's time is its end); a healthy answer that started after
/// it clears the strikes; a fetch started before it answers the incident and changes nothing.
fn strikes_by_the_rule(fetches: &[(Signal, f64, f64)]) -> (u32, u32) {
    let (mut strikes, mut incidents, mut escalated) = (0, 0, f64::NEG_INFINITY);
    for (signal, started, finished) in fetches {
        if *started < escalated {
            continue;
        }
        if matches!(signal, Signal::PushBack { .. }) {
            strikes += 1;
            incidents += 1;
            escalated = *finished;
        } else {
            strikes = 0;
        }
    }
    (strikes, incidents)
}

#[test]
fn fetches_in_flight_during_an_incident_escalate_it_once_whatever_their_order() {
    let settings = exact();
    let rules = Rules::new(&settings, secs(1.0), false);
    let line = Timeline::new();
    for seed in 0..256 {
        let fetches = overlapping(seed);
        let mut pace = Pace::new(&rules);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut increases = 0;
        for (signal, started, finished) in &fetches {
            let before = pace.delay();
            pace.observe(&line.event(*signal, *started, *finished), &rules, &mut rng);
            increases += u32::from(pace.delay() > before);
        }
        let (strikes, incidents) = strikes_by_the_rule(&fetches);
        assert_eq!(pace.strikes(), strikes, "seed {seed}: {fetches:?}");
        assert_eq!(increases, incidents, "seed {seed}: {fetches:?}");
    }
}

#[test]
fn recovery_stops_a_margin_above_the_limit_then_probes_and_forgets_it() {
    let settings = exact();
    let (rules, line, mut pace) = one_second(&settings);
    feed(&mut pace, &line, &rules, TOO_MANY, 0.0, 1);
    assert_eq!((pace.delay(), pace.limit()), (secs(2.0), Some(secs(1.0))));
    let mut answers = 0;
    while pace.delay() > secs(1.1) && answers < 50 {
        answers += 1;
        feed(&mut pace, &line, &rules, healthy(5), f64::from(answers), 1);
    }
    assert_eq!(answers, 12, "2 s back to 1.1 s at 10 % every second answer");
    assert_eq!(pace.cause(), PaceCause::Recovering);
    let probe = settings.pace.recovery_probe;
    feed(&mut pace, &line, &rules, healthy(5), 100.0, probe - 1);
    assert_eq!(pace.delay(), secs(1.1), "held at the margin");
    // The probe, then two answers for the step down.
    feed(&mut pace, &line, &rules, healthy(5), 300.0, 3);
    assert_eq!(pace.limit(), None, "the margin dropped");
    assert_eq!(pace.delay(), secs(1.0), "probing down to the floor");
    assert_eq!(pace.cause(), PaceCause::Configured);

    let (line, mut pace) = (Timeline::new(), Pace::new(&rules));
    feed(&mut pace, &line, &rules, TOO_MANY, 0.0, 1);
    let decay = settings.pace.backoff_decay.as_secs_f64();
    feed(&mut pace, &line, &rules, healthy(5), decay - 10.0, 1);
    assert_eq!(pace.limit(), Some(secs(1.0)), "remembered within the decay");
    feed(&mut pace, &line, &rules, healthy(5), decay + 1.0, 1);
    assert_eq!(pace.limit(), None, "forgotten after it");
}

/// One finished fetch of a random sequence: which signal, and how long it took.
fn any_signal() -> impl Strategy<Value = Signal> {
    (0..5u8, 0..3000u64).prop_map(|(kind, millis)| match kind {
        0 => TOO_MANY,
        1 => Signal::PushBack {
            cause: PaceCause::Timeout,
            took: None,
        },
        2 => Signal::RetryAfter {
            hold: Duration::from_millis(millis),
        },
        3 => Signal::Neutral,
        _ => healthy(millis),
    })
}

proptest! {
    #[test]
    fn the_interval_never_undercuts_the_configured_delay_or_robots(
        delay_ms in 0..5000u64,
        robots_ms in proptest::option::of(0..60_000u64),
        floor_ms in proptest::option::of(0..5000u64),
        signals in proptest::collection::vec((any_signal(), 0..3000u64), 1..60),
        adopted in proptest::collection::vec((0..60usize, 0..600_000u64, -3600..3600i64), 0..4),
        several in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut settings = FetcherSettings {
            server_delay: Duration::from_millis(delay_ms),
            server_min_delay: Duration::from_millis(delay_ms / 2),
            threads_per_queue: if several { 2 } else { 1 },
            ..FetcherSettings::default()
        };
        settings.pace.floor = floor_ms.map(|ms| Duration::from_millis(ms.min(delay_ms)));
        let crawl_delay = robots_ms.map(Duration::from_millis);
        let configured = queue_delay(&settings, crawl_delay);
        let rules = Rules::new(&settings, configured, crawl_delay.is_some());
        let (line, mut pace) = (Timeline::new(), Pace::new(&rules));
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut now = 0.0;
        for (n, (signal, gap_ms)) in signals.into_iter().enumerate() {
            let started = now;
            now += gap_ms as f64 / 1000.0;
            pace.observe(&line.event(signal, started, now), &rules, &mut rng);
            for (_, delay_ms, skew) in adopted.iter().filter(|(at, _, _)| *at == n) {
                let learned = LearnedPace {
                    delay: Duration::from_millis(*delay_ms),
                    cause: PaceCause::Http(503),
                    strikes: 1,
                    limit: Some(Duration::from_millis(*delay_ms / 2)),
                    at: line.wall_at(now) + TimeDelta::seconds(*skew),
                };
                let instant = line.start + secs(now);
                pace.adopt(learned, &rules, instant, line.wall_at(now));
                prop_assert!(pace.at() <= Some(line.wall_at(now)), "never dated ahead");
            }
            let interval = pace.interval(&rules);
            let shared = pace.learned().map_or(rules.floor, |learned| learned.delay);
            prop_assert!(interval >= rules.floor && shared >= rules.floor);
            prop_assert!(shared <= rules.ceiling());
            if settings.pace.floor.is_none() || crawl_delay.is_some() {
                prop_assert!(interval >= configured, "{interval:?} < {configured:?}");
            }
        }
    }
}

#[test]
fn an_opted_in_faster_floor_is_reached_on_healthy_answers_and_never_undercut() {
    let mut settings = exact();
    settings.pace.floor = Some(secs(0.25));
    let (rules, line, mut pace) = one_second(&settings);
    let mut least = secs(1.0);
    for i in 0..40 {
        feed(&mut pace, &line, &rules, healthy(5), f64::from(i), 1);
        least = least.min(pace.interval(&rules));
    }
    assert_eq!((pace.interval(&rules), least), (secs(0.25), secs(0.25)));
    assert_eq!(pace.cause(), PaceCause::Faster);
    let robots = Rules::new(&settings, secs(2.0), true);
    let mut pace = Pace::new(&robots);
    feed(&mut pace, &line, &robots, healthy(5), 0.0, 40);
    assert_eq!(
        pace.interval(&robots),
        secs(2.0),
        "a Crawl-delay is never undercut"
    );
}

#[test]
fn slow_answers_step_once_per_window_above_the_slack_and_the_factor_raises_the_interval() {
    let settings = exact();
    let (rules, line, mut pace) = one_second(&settings);
    feed(&mut pace, &line, &rules, healthy(20), 0.0, 40);
    let mut rng = fastrand::Rng::with_seed(1);
    for n in 0..10 {
        let finished = 100.0 + f64::from(n) * 0.1;
        let event = line.event(healthy(200), 99.0, finished);
        pace.observe(&event, &rules, &mut rng);
    }
    assert_eq!(
        pace.delay(),
        secs(1.5),
        "one step for fetches in flight together"
    );
    assert_eq!((pace.cause(), pace.strikes()), (PaceCause::SlowAnswers, 0));

    let mut pace = Pace::new(&rules);
    feed(&mut pace, &line, &rules, healthy(2), 0.0, 40);
    feed(&mut pace, &line, &rules, healthy(6), 40.0, 40);
    assert_eq!(
        pace.delay(),
        secs(1.0),
        "3 times slower, but within the 5 ms slack"
    );

    let mut slow_host = exact();
    slow_host.pace.latency_inflation = 0.0;
    let rules = Rules::new(&slow_host, secs(1.0), false);
    let mut pace = Pace::new(&rules);
    feed(&mut pace, &line, &rules, healthy(3000), 0.0, 5);
    assert_eq!(pace.delay(), secs(1.0));
    assert_eq!(pace.interval(&rules), secs(3.0), "at least the answer time");
}

#[test]
fn a_retry_after_steps_the_adaptive_pace_as_a_push_back() {
    let settings = exact();
    let (rules, line, mut pace) = one_second(&settings);
    let retry = Signal::RetryAfter { hold: secs(30.0) };
    feed(&mut pace, &line, &rules, retry, 0.0, 1);
    assert_eq!(
        (pace.delay(), pace.cause()),
        (secs(2.0), PaceCause::RetryAfter)
    );
}

#[test]
fn an_uncapped_retry_after_of_any_length_blocks_for_a_year_at_most() {
    let mut settings = exact();
    settings.pace.max_retry_after_block = None;
    let rules = Rules::new(&settings, secs(1.0), false);
    let (line, mut block) = (Timeline::new(), Block::default());
    let mut rng = fastrand::Rng::with_seed(3);
    let endless = line.event(
        Signal::RetryAfter {
            hold: Duration::MAX,
        },
        0.0,
        0.1,
    );
    let end = block.observe(&endless, &rules, &mut rng).expect("a block");
    let year = Duration::from_secs(365 * 24 * 3600);
    assert_eq!(end - (line.start + secs(0.1)), year);
}

#[test]
fn block_doubles_from_a_minute_to_a_day_extends_only_and_forgives_after_the_decay() {
    let settings = exact();
    let rules = Rules::new(&settings, secs(1.0), false);
    let (line, mut block) = (Timeline::new(), Block::default());
    let mut rng = fastrand::Rng::with_seed(3);
    let mut at = 0.0;
    let mut blocks = Vec::new();
    for _ in 0..13 {
        let end = block.observe(&line.event(TOO_MANY, at, at + 0.1), &rules, &mut rng);
        let end = end.expect("a block");
        blocks.push((end - (line.start + secs(at + 0.1))).as_secs());
        at = (end - line.start).as_secs_f64() + 1.0;
    }
    let day = 86_400;
    let doubled = [
        60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 30720, 61440, day, day,
    ];
    assert_eq!(blocks, doubled);
    let level = block.level();
    let until = block.until().expect("blocked");
    let inside = (until - line.start).as_secs_f64() - 10.0;
    let during = line.event(TOO_MANY, inside, inside + 0.1);
    assert_eq!(
        block.observe(&during, &rules, &mut rng),
        None,
        "no escalation"
    );
    assert_eq!(block.level(), level);
    let shorter = line.event(Signal::RetryAfter { hold: secs(5.0) }, inside, inside + 0.1);
    assert_eq!(
        block.observe(&shorter, &rules, &mut rng),
        None,
        "extend only"
    );
    let quiet = (until - line.start).as_secs_f64() + settings.pace.backoff_decay.as_secs_f64();
    let end = block.observe(&line.event(TOO_MANY, quiet, quiet), &rules, &mut rng);
    assert_eq!(
        end,
        Some(line.start + secs(quiet + 60.0)),
        "forgiven: a minute again"
    );
    let learned = block.learned(&rules).expect("learned");
    assert_eq!((learned.delay, learned.strikes), (secs(1.0), 1));
}

#[test]
fn neutral_signals_leave_an_adaptive_queue_at_its_configured_delay() {
    let settings = FetcherSettings::default();
    let (rules, line, mut pace) = one_second(&settings);
    feed(&mut pace, &line, &rules, Signal::Neutral, 0.0, 20);
    feed(&mut pace, &line, &rules, healthy(5), 20.0, 20);
    assert_eq!(pace.interval(&rules), secs(1.0));
    assert!(pace.is_settled(&rules));
    assert_eq!((pace.report(), pace.learned()), (None, None));
}

fn learned(line: &Timeline, seconds: f64, delay: f64) -> LearnedPace {
    LearnedPace {
        delay: secs(delay),
        cause: PaceCause::Http(503),
        strikes: 2,
        limit: Some(secs(1.0)),
        at: line.wall_at(seconds),
    }
}

#[test]
fn a_newer_learned_pace_is_taken_clamped_an_older_one_ignored() {
    let settings = FetcherSettings::default();
    let (rules, line, mut pace) = one_second(&settings);
    assert!(pace.adopt(
        learned(&line, 10.0, 4.0),
        &rules,
        line.start,
        line.wall_at(10.0)
    ));
    assert_eq!((pace.delay(), pace.strikes()), (secs(4.0), 2));
    assert!(
        !pace.adopt(
            learned(&line, 5.0, 8.0),
            &rules,
            line.start,
            line.wall_at(10.0)
        ),
        "older"
    );
    assert_eq!(pace.delay(), secs(4.0));
    assert!(pace.adopt(
        learned(&line, 20.0, 1e6),
        &rules,
        line.start,
        line.wall_at(20.0)
    ));
    assert_eq!(
        pace.delay(),
        settings.pace.backoff_max,
        "clamped to the cap"
    );
    assert!(pace.adopt(
        learned(&line, 30.0, 0.01),
        &rules,
        line.start,
        line.wall_at(30.0)
    ));
    assert_eq!(pace.delay(), secs(1.0), "and to the floor");
    assert_eq!(pace.report(), None, "what was adopted is not reported back");
}

#[test]
fn the_book_keeps_learned_paces_of_forgotten_queues_within_its_bound() {
    let settings = FetcherSettings::default();
    let rules = Rules::new(&settings, secs(1.0), false);
    let line = Timeline::new();
    let mut book = PaceBook::with_capacity(3);
    let adaptive = QueuePace::Adaptive(Box::new(Pace::new(&rules)));
    book.keep("settled.test".into(), adaptive, &rules);
    assert!(book.is_empty(), "nothing learned, nothing kept");
    for n in 0..5 {
        let mut pace = Pace::new(&rules);
        pace.adopt(
            learned(&line, f64::from(n), 4.0),
            &rules,
            line.start,
            line.wall_at(10.0),
        );
        book.keep(
            format!("host{n}.test"),
            QueuePace::Adaptive(Box::new(pace)),
            &rules,
        );
    }
    assert_eq!(book.len(), 3);
    assert!(book.take("host0.test").is_none(), "the oldest went first");
    let back = book.take("host4.test").expect("kept");
    assert_eq!(back.interval(&rules), secs(4.0));
    assert_eq!(book.len(), 2);
    assert_eq!(BOOK_CAPACITY, PaceBook::default().capacity());
}

#[test]
fn every_back_off_step_is_reported_and_no_move_under_a_quarter() {
    let settings = exact();
    let (rules, line, mut pace) = one_second(&settings);
    let mut rng = fastrand::Rng::with_seed(5);
    for i in 0..5 {
        let at = f64::from(i) * 10.0;
        pace.observe(&line.event(TOO_MANY, at, at + 0.1), &rules, &mut rng);
        let report = pace.report().expect("a back-off step");
        assert_eq!(report.strikes, i + 1);
    }
    let mut last = pace.delay();
    for i in 0..40 {
        let at = 100.0 + f64::from(i);
        pace.observe(&line.event(healthy(5), at, at + 0.1), &rules, &mut rng);
        if let Some(report) = pace.report() {
            let moved = report.delay.abs_diff(last) >= last.mul_f64(0.25);
            // The first healthy answer ends the strikes; the second is the first step down, which
            // changes the cause.
            assert!(moved || report.strikes == 0 && i <= 1, "{i}: {report:?}");
            last = report.delay;
        }
    }
    assert!(pace.report().is_none(), "settled");
}

fn answer(status_code: u16, retry_after: Option<Duration>) -> crate::message::FetchOutcome {
    crate::message::FetchOutcome::Response(Box::new(crate::message::FetchedResponse {
        status_code,
        content_type: None,
        location: None,
        robots_tag: Vec::new(),
        etag: None,
        last_modified: None,
        retry_after,
        final_url: None,
        body: Default::default(),
        truncated: false,
    }))
}

#[test]
fn each_outcome_is_one_signal() {
    use crate::message::{FetchFailure, FetchOutcome};
    use crate::model::Status;
    let codes = FetcherSettings::default().pace.status_codes;
    let took = secs(0.2);
    let failed = |cause| FetchOutcome::Failed {
        status: Status::FetchError,
        cause,
        message: String::new(),
    };
    let signal = |outcome: &FetchOutcome| Signal::of(outcome, took, &codes);
    let push_back = |cause, took| Signal::PushBack { cause, took };
    assert_eq!(signal(&answer(200, None)), Signal::Healthy { took });
    assert_eq!(signal(&answer(500, None)), Signal::Healthy { took });
    let bare = signal(&answer(503, None));
    assert_eq!(bare, push_back(PaceCause::Http(503), Some(took)));
    let hold = Some(secs(30.0));
    let retry = Signal::RetryAfter { hold: secs(30.0) };
    assert_eq!(signal(&answer(429, hold)), retry);
    let refused = signal(&failed(FetchFailure::Connection));
    assert_eq!(refused, push_back(PaceCause::Connection, None));
    assert!(refused.is_failure() && !bare.is_failure());
    let timeout = signal(&failed(FetchFailure::Timeout));
    assert_eq!(timeout, push_back(PaceCause::Timeout, None));
    assert_eq!(signal(&failed(FetchFailure::Body)), Signal::Neutral);
    let abandoned = FetchOutcome::Abandoned {
        cause: FetchFailure::Browser,
        message: String::new(),
    };
    assert_eq!(signal(&abandoned), Signal::Neutral);
}
