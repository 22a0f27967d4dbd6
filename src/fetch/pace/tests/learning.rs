//! What the adaptive pace learns from answer times, from probing and from other processes: slow
//! answers that are the host's own spread, slow episodes, a host that is simply slow, and learned
//! paces that are stale or dated by a clock ahead of ours.

use std::time::Duration;

use super::*;

/// Feeds `answers` as healthy answers one after the other, a second apart from `from`, and gives
/// the delay after each.
fn answer_times(
    pace: &mut Pace,
    line: &Timeline,
    rules: &Rules<'_>,
    from: f64,
    answers: &[Duration],
) -> Vec<Duration> {
    let mut rng = fastrand::Rng::with_seed(11);
    let mut delays = Vec::new();
    for (n, took) in answers.iter().enumerate() {
        let at = from + n as f64;
        let event = line.event(Signal::Healthy { took: *took }, at, at + 0.01);
        pace.observe(&event, rules, &mut rng);
        delays.push(pace.delay());
    }
    delays
}

fn millis(values: impl IntoIterator<Item = u64>) -> Vec<Duration> {
    values.into_iter().map(Duration::from_millis).collect()
}

/// A pace of one second that has seen 40 answers of 20 ms from 0 s on: the host's usual time.
fn used_to_20ms(settings: &FetcherSettings) -> (Rules<'_>, Timeline, Pace) {
    let (rules, line, mut pace) = one_second(settings);
    answer_times(&mut pace, &line, &rules, 0.0, &millis([20; 40]));
    (rules, line, pace)
}

/// How many times the delay went up along `delays` (from `start`).
fn steps_up(start: Duration, delays: &[Duration]) -> usize {
    let mut last = start;
    let mut steps = 0;
    for delay in delays {
        if *delay > last {
            steps += 1;
        }
        last = *delay;
    }
    steps
}

#[test]
fn a_host_whose_answers_spread_without_load_stays_at_its_configured_delay() {
    let settings = exact();
    let (mut stepped, mut kept) = (Vec::new(), Vec::new());
    for seed in 0..32 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (rules, line, mut pace) = one_second(&settings);
        // Pages of 20-60 ms at random: the mean twice the least, nothing to do with our pace.
        let times = millis((0..400).map(|_| rng.u64(20..=60)));
        let delays = answer_times(&mut pace, &line, &rules, 0.0, &times);
        if delays.iter().any(|d| *d > secs(1.0)) {
            stepped.push(seed);
        }
        let total: Duration = delays.iter().sum();
        kept.push(total.as_secs_f64() / delays.len() as f64);
    }
    // A test of evidence has false alarms: one host in 32 over 400 answers each (seed 12).
    assert!(stepped.len() <= 1, "stepped: {stepped:?}");
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    assert!(mean < 1.01, "mean delay {mean:.3} s over 32 hosts");
}

#[test]
fn rare_very_slow_answers_cost_little_and_never_pass_the_slow_bound() {
    let settings = exact();
    let mut kept = Vec::new();
    for seed in 0..32 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (rules, line, mut pace) = one_second(&settings);
        // One answer in 20 ten times slower than the others (a huge page, a cold cache).
        let times = millis((0..400).map(|_| {
            let base = rng.u64(20..=40);
            if rng.u32(0..20) == 0 { base * 10 } else { base }
        }));
        let delays = answer_times(&mut pace, &line, &rules, 0.0, &times);
        assert!(
            delays.iter().all(|d| *d <= secs(2.0)),
            "seed {seed}: {:?}",
            delays.iter().max()
        );
        let total: Duration = delays.iter().sum();
        kept.push(total.as_secs_f64() / delays.len() as f64);
    }
    let mean = kept.iter().sum::<f64>() / kept.len() as f64;
    assert!(
        mean < 1.01,
        "mean delay {mean:.3} s over 32 hosts: {kept:?}"
    );
}

#[test]
fn a_slow_episode_of_sequential_fetches_steps_the_delay_once() {
    let settings = exact();
    let (rules, line, mut pace) = used_to_20ms(&settings);
    // Six answers ten times slower, one after the other, then the host is itself again.
    let episode = millis([200, 200, 200, 200, 200, 200].into_iter().chain([20; 60]));
    let delays = answer_times(&mut pace, &line, &rules, 40.0, &episode);
    assert_eq!(steps_up(secs(1.0), &delays), 1, "{delays:?}");
    assert_eq!(delays.iter().max(), Some(&secs(1.5)));
    assert_eq!(pace.limit(), Some(secs(1.0)), "the interval that drew them");
    assert_eq!(pace.delay(), secs(1.1), "back, a margin above it");
    let probe = settings.pace.recovery_probe;
    answer_times(
        &mut pace,
        &line,
        &rules,
        200.0,
        &millis(vec![20; probe as usize + 1]),
    );
    assert_eq!(pace.delay(), secs(1.0), "and after the probe, where it was");
}

#[test]
fn a_host_that_became_slower_for_good_is_taken_as_it_is() {
    let settings = exact();
    let (rules, line, mut pace) = used_to_20ms(&settings);
    // From now on every answer takes 200 ms, whatever the pace.
    let delays = answer_times(&mut pace, &line, &rules, 40.0, &millis([200; 200]));
    assert!(delays.iter().all(|d| *d <= secs(3.375)), "{delays:?}");
    assert!(steps_up(secs(1.0), &delays) <= 3, "{delays:?}");
    assert_eq!(pace.delay(), secs(1.0), "its new usual time: {delays:?}");
}

#[test]
fn a_host_slowed_by_our_pace_is_fetched_slower_until_its_answers_come_back() {
    let settings = exact();
    let (rules, line, mut pace) = used_to_20ms(&settings);
    // It takes 0.8 fetches a second; faster than that, its answers take ten times as long.
    let mut rng = fastrand::Rng::with_seed(4);
    let (mut now, mut slow, mut total) = (40.0, 0, 0.0);
    for _ in 0..400 {
        let rate = 1.0 / pace.interval(&rules).as_secs_f64();
        let took = Duration::from_millis(if rate > 0.8 { 200 } else { 20 });
        slow += usize::from(rate > 0.8);
        let event = line.event(Signal::Healthy { took }, now, now + took.as_secs_f64());
        pace.observe(&event, &rules, &mut rng);
        total += pace.delay().as_secs_f64();
        now += took.as_secs_f64() + pace.interval(&rules).as_secs_f64();
    }
    // Seen: 24 slow, a mean delay of 1.32 s (1.25 s is the least that keeps it unloaded).
    assert!(
        slow < 40,
        "{slow} of 400 answers slow (every one at the configured pace)"
    );
    let mean = total / 400.0;
    assert!((1.2..1.5).contains(&mean), "mean delay {mean:.3} s");
}

#[test]
fn a_push_back_while_answer_times_set_the_interval_lengthens_that_interval() {
    let mut settings = exact();
    settings.pace.latency_inflation = 0.0;
    let (rules, line, mut pace) = one_second(&settings);
    answer_times(&mut pace, &line, &rules, 0.0, &millis([3000; 5]));
    assert_eq!(pace.interval(&rules), secs(3.0));
    feed(&mut pace, &line, &rules, TOO_MANY, 10.0, 1);
    assert_eq!(
        pace.interval(&rules),
        secs(6.0),
        "doubled from what was kept"
    );
    assert_eq!(pace.limit(), Some(secs(3.0)), "the interval that drew it");
    assert_eq!(pace.learned().map(|l| l.delay), Some(secs(6.0)));
}

#[test]
fn a_push_back_is_the_one_step_for_the_slow_answers_that_came_before_it() {
    let settings = exact();
    let (rules, line, mut pace) = used_to_20ms(&settings);
    // Three answers ten times slower than usual: evidence, not yet a step.
    let delays = answer_times(&mut pace, &line, &rules, 40.0, &millis([200; 3]));
    assert_eq!(delays, [secs(1.0); 3]);
    feed(&mut pace, &line, &rules, TOO_MANY, 43.0, 1);
    assert_eq!(pace.delay(), secs(2.0));
    // Three more of that load, in flight when the push-back came, then usual answers.
    let mut rng = fastrand::Rng::with_seed(3);
    for n in 0..3 {
        let event = line.event(healthy(200), 42.9, 43.2 + f64::from(n) * 0.1);
        pace.observe(&event, &rules, &mut rng);
    }
    let delays = answer_times(&mut pace, &line, &rules, 44.0, &millis([20; 5]));
    assert!(
        delays.iter().all(|d| *d <= secs(2.0)),
        "the load before the push-back stepped the pace again: {delays:?}"
    );
}

#[test]
fn a_healthy_answer_of_the_incident_in_flight_leaves_the_strikes() {
    let settings = exact();
    let (rules, line, mut pace) = one_second(&settings);
    let mut rng = fastrand::Rng::with_seed(2);
    pace.observe(&line.event(TOO_MANY, 0.0, 1.0), &rules, &mut rng);
    pace.observe(&line.event(healthy(5), 0.1, 1.1), &rules, &mut rng);
    assert_eq!(pace.strikes(), 1, "started before the push-back was seen");
    pace.observe(&line.event(TOO_MANY, 1.5, 1.6), &rules, &mut rng);
    assert_eq!(pace.strikes(), 2);
}

#[test]
fn probing_lowers_the_limit_one_margin_at_a_time() {
    let mut settings = exact();
    settings.pace.floor = Some(secs(0.25));
    let (rules, line, mut pace) = one_second(&settings);
    feed(&mut pace, &line, &rules, TOO_MANY, 0.0, 1);
    assert_eq!(pace.limit(), Some(secs(1.0)));
    let probe = settings.pace.recovery_probe;
    let mut least = pace.delay();
    let mut from = 10.0;
    for _ in 0..(2 * probe + 20) {
        feed(&mut pace, &line, &rules, healthy(5), from, 1);
        least = least.min(pace.delay());
        from += 1.0;
    }
    // 1.1 s, then 0.99 s after the first probe, 0.891 s after the second.
    let second = secs(1.0).mul_f64(0.9 * 0.9 * 1.1);
    assert!(least.abs_diff(second) < secs(0.001), "{least:?}");
    assert_eq!(pace.cause(), PaceCause::Faster);
}

#[test]
fn a_queue_at_its_robots_crawl_delay_is_configured_not_faster() {
    let settings = exact();
    let rules = Rules::new(&settings, secs(0.5), true);
    let (line, mut pace) = (Timeline::new(), Pace::new(&rules));
    feed(&mut pace, &line, &rules, TOO_MANY, 0.0, 1);
    feed(&mut pace, &line, &rules, healthy(5), 10.0, 30);
    assert_eq!(pace.delay(), secs(0.55), "a margin above the limit");
    assert_eq!(pace.cause(), PaceCause::Recovering);
    feed(
        &mut pace,
        &line,
        &rules,
        healthy(5),
        40.0,
        settings.pace.recovery_probe + 5,
    );
    assert_eq!(pace.delay(), secs(0.5));
    assert_eq!(pace.cause(), PaceCause::Configured);
}

#[test]
fn a_pace_dated_ahead_of_our_clock_is_taken_as_of_now() {
    let settings = exact();
    let (rules, line, mut pace) = one_second(&settings);
    let ahead = learned(&line, 3600.0, 4.0);
    assert!(pace.adopt(ahead, &rules, line.start, line.wall_at(10.0)));
    assert_eq!(pace.at(), Some(line.wall_at(10.0)));
    feed(&mut pace, &line, &rules, TOO_MANY, 20.0, 1);
    let mine = pace.report().expect("a step");
    assert_eq!(mine.at, line.wall_at(20.01), "what we learn later is newer");
    let again = learned(&line, 3600.0, 4.0);
    assert!(!pace.adopt(again, &rules, line.start, line.wall_at(15.0)));
}

#[test]
fn a_learned_pace_ages_from_when_it_was_learned() {
    let settings = exact();
    let decay = settings.pace.backoff_decay.as_secs_f64();
    let (rules, line, mut pace) = one_second(&settings);
    let now = line.start + secs(2.0 * decay + 1.0);
    let wall = line.wall_at(2.0 * decay + 1.0);
    assert!(pace.adopt(learned(&line, 0.0, 300.0), &rules, now, wall));
    assert_eq!(pace.delay(), secs(75.0), "halved for each decay it aged");
    assert_eq!(
        (pace.limit(), pace.strikes()),
        (None, 0),
        "stale: forgotten"
    );

    let (rules, line, mut pace) = one_second(&settings);
    let now = line.start + secs(decay - 10.0);
    assert!(pace.adopt(
        learned(&line, 0.0, 4.0),
        &rules,
        now,
        line.wall_at(decay - 10.0)
    ));
    assert_eq!(pace.limit(), Some(secs(1.0)));
    feed(&mut pace, &line, &rules, healthy(5), decay + 1.0, 1);
    assert_eq!(pace.limit(), None, "its decay ran from when it was learned");
    assert_eq!(
        pace.report().map(|r| r.limit),
        Some(None),
        "the drop reported"
    );
}
