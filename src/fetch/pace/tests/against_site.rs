//! The pace against the capacity site's own model of a host (its token bucket, its answer times
//! that grow with the load, its refusals), on a clock of values: every host of the `pace`
//! benchmark's site crawled one fetch at a time, the next one the pace's interval after the end
//! of the last, as the fetcher does. The figures are the benchmark's, taken the same way over the
//! same steady window: what the replay shows is what the benchmark's rows measure (the published
//! `adaptive` row at a margin of 0.1 read 0.91 of its ideal, 1.10 % refused, median p95 2.07; this
//! replay of that code read 0.93, 1.12 %, 2.00).

use std::time::Duration;

use squall_testsite::capacity::{Answer, CapacitySpec, HostCapacity, HostGate};

use super::*;
use crate::fetch::PaceKind;

/// Seconds crawled, and the start of the steady window the figures are taken over.
const CRAWL: f64 = 240.0;
const STEADY_FROM: f64 = 60.0;

/// One host crawled: what its side saw in the steady window.
struct HostRun {
    /// Requests per second the host takes.
    capacity: f64,
    /// Requests served per second.
    served: f64,
    /// The most one fetch at a time could be served: `min(capacity, 1 / (floor + unloaded))`.
    ideal: f64,
    /// Requests refused, and all requests.
    refused: usize,
    requests: usize,
    /// What the load multiplied each answer time by.
    loads: Vec<f64>,
}

impl HostRun {
    /// The p95 of what the load multiplied answer times by (1 for a host that served nothing).
    fn p95(&self) -> f64 {
        quantile(&self.loads, 0.95)
    }
}

/// The `q` quantile of `values` (1 for none).
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(rank).copied().unwrap_or(1.0)
}

/// The signal the fetcher classifies `answer` (which took `took`) as.
fn signal_of(answer: &Answer, took: Duration) -> Signal {
    match *answer {
        Answer::Serve { .. } | Answer::NoRobots => Signal::Healthy { took },
        Answer::Refuse { over, retry_after } => match retry_after {
            Some(hold) => Signal::RetryAfter { hold },
            None => Signal::PushBack {
                cause: PaceCause::Http(over.status()),
                took: Some(took),
            },
        },
    }
}

/// Crawls `host` for `CRAWL` seconds under `settings`, pages drawn at random.
fn crawl_host(host: &HostCapacity, settings: &FetcherSettings) -> HostRun {
    let rules = Rules::new(settings, settings.server_delay, false);
    let line = Timeline::new();
    let mut gate = HostGate::new(host, line.start);
    let mut pace = QueuePace::new(settings.pace.policy, &rules);
    let mut rng = fastrand::Rng::with_seed(host.rate.to_bits());
    let mut pages = fastrand::Rng::with_seed(host.rate.to_bits() ^ 59);
    let mut at = 0.0;
    let mut run = HostRun {
        capacity: host.rate,
        served: 0.0,
        ideal: host
            .rate
            .min(1.0 / (rules.floor + host.unloaded).as_secs_f64()),
        refused: 0,
        requests: 0,
        loads: Vec::new(),
    };
    while at < CRAWL {
        let path = format!("/p/{}.html", pages.usize(0..10_000));
        let answer = gate.answer(&path, line.start + secs(at));
        let steady = at >= STEADY_FROM;
        run.requests += usize::from(steady);
        let (took, hold) = match answer {
            Answer::Serve { after, load } => {
                if steady {
                    run.loads.push(load);
                }
                (after, Duration::ZERO)
            }
            Answer::Refuse { retry_after, .. } => {
                run.refused += usize::from(steady);
                (Duration::from_millis(1), retry_after.unwrap_or_default())
            }
            Answer::NoRobots => (Duration::ZERO, Duration::ZERO),
        };
        let finished = at + took.as_secs_f64();
        let event = line.event(signal_of(&answer, took), at, finished);
        pace.observe(&event, &rules, &mut rng);
        at = finished + pace.interval(&rules).max(hold).as_secs_f64();
    }
    run.served = run.loads.len() as f64 / (CRAWL - STEADY_FROM);
    run
}

/// The site's figures under one policy.
struct Figures {
    /// Served over ideal, summed over the hosts.
    ratio: f64,
    /// Served over ideal, summed over the hosts that take more than the configured pace.
    fast_ratio: f64,
    /// Refused over all requests.
    refused: f64,
    /// The median host's p95, and the p95 over every answer.
    median_p95: f64,
    site_p95: f64,
    /// Hosts whose p95 is over 1.5.
    hosts_over: usize,
}

/// Every host of the `pace` benchmark's site (the ladder of seed `seed`) crawled under `settings`.
fn crawl_ladder(settings: &FetcherSettings, seed: u64) -> Figures {
    let spec = CapacitySpec::ladder(200, 0.2, 20.0, 400.0, seed);
    let runs: Vec<HostRun> = spec
        .hosts
        .iter()
        .map(|host| crawl_host(host, settings))
        .collect();
    let sum = |runs: &[&HostRun], f: fn(&HostRun) -> f64| runs.iter().map(|r| f(r)).sum::<f64>();
    let all: Vec<&HostRun> = runs.iter().collect();
    let fast: Vec<&HostRun> = runs.iter().filter(|r| r.capacity > 1.2).collect();
    let requests = sum(&all, |r| r.requests as f64);
    let p95s: Vec<f64> = runs.iter().map(HostRun::p95).collect();
    let loads: Vec<f64> = runs.iter().flat_map(|r| r.loads.iter().copied()).collect();
    Figures {
        ratio: sum(&all, |r| r.served) / sum(&all, |r| r.ideal),
        fast_ratio: sum(&fast, |r| r.served) / sum(&fast, |r| r.ideal),
        refused: sum(&all, |r| r.refused as f64) / requests,
        median_p95: quantile(&p95s, 0.5),
        site_p95: quantile(&loads, 0.95),
        hosts_over: p95s.iter().filter(|&&p95| p95 > 1.5).count(),
    }
}

fn settings_of(policy: PaceKind) -> FetcherSettings {
    let mut settings = FetcherSettings::default();
    settings.pace.policy = policy;
    settings
}

#[test]
fn the_default_adaptive_pace_keeps_the_benchmark_sites_hosts_near_their_capacity_unloaded() {
    let fixed = crawl_ladder(&settings_of(PaceKind::Fixed), 59);
    for seed in [59, 1, 2] {
        let adaptive = crawl_ladder(&settings_of(PaceKind::Adaptive), seed);
        let figures = format!(
            "seed {seed}: {:.3} of ideal ({:.3} on hosts above the pace), {:.2} % refused, \
             p95 load {:.2} (every answer), {:.2} (median host), {} hosts over 1.5",
            adaptive.ratio,
            adaptive.fast_ratio,
            100.0 * adaptive.refused,
            adaptive.site_p95,
            adaptive.median_p95,
            adaptive.hosts_over
        );
        assert!(adaptive.ratio >= 0.87, "{figures}");
        assert!(adaptive.fast_ratio >= 0.97, "{figures}");
        assert!(adaptive.refused <= 0.002, "{figures}");
        assert!(adaptive.median_p95 <= 1.1, "{figures}");
        assert!(adaptive.site_p95 <= 1.5, "{figures}");
        assert!(adaptive.hosts_over <= 32, "{figures}");
        assert!(adaptive.refused < fixed.refused / 20.0, "{figures}");
    }
}

#[test]
fn with_an_opted_in_faster_floor_the_answers_stay_near_their_unloaded_time() {
    let mut settings = settings_of(PaceKind::Adaptive);
    settings.pace.floor = Some(Duration::from_millis(250));
    for seed in [59, 1, 2] {
        let fast = crawl_ladder(&settings, seed);
        let figures = format!(
            "seed {seed}: {:.3} of one fetch at a time, {:.2} % refused, p95 load {:.2} (every \
             answer), {:.2} (median host)",
            fast.ratio,
            100.0 * fast.refused,
            fast.site_p95,
            fast.median_p95
        );
        // Seen: 0.83-0.84, 0.06-0.07 %, 1.35-1.36 (1.41-1.48 with a baseline of 64 answers).
        assert!(fast.ratio >= 0.82, "{figures}");
        assert!(fast.refused <= 0.002, "{figures}");
        assert!(fast.site_p95 <= 1.4, "{figures}");
    }
}
