//! A host's answer times: their recent level (an EWMA, what the interval keeps up with), the
//! host's usual time (its baseline) and the evidence that its answers run slower than usual.
//!
//! The baseline is the geometric mean of the host's usual answers, the quickest and slowest
//! eighth left out, so that the ordinary spread of its pages (large beside small, cached beside
//! uncached) is part of what is usual. Load is found by a one-sided CUSUM (Page's cumulative
//! sum) over how many doublings slower than the baseline each answer is: every answer adds its
//! excess over an allowance (half the slow-down that counts, `fetcher.pace.latency.inflation`,
//! plus the baseline's own standard error, so that a baseline from few answers does not read
//! noise as load), the sum never goes below zero, and load shows once it reaches [`EVIDENCE`].
//! Spread averages out; a steady slow-down of 1.5 times shows within about fifteen answers, a
//! doubling within five; one very slow answer adds at most [`MOST_EXCESS`].
//!
//! Answers given while the evidence is above zero wait before they join the usual ones: they
//! join once it is back at zero (they were spread, not load), and are dropped when it leads to a
//! step (they were load), so that answers given under load do not make the host's usual time,
//! unless the host is found to be that slow now ([`rebase`](Latency::rebase)).

use std::collections::VecDeque;
use std::time::Duration;

/// How much each new answer weighs in the recent level.
const ALPHA: f64 = 0.2;

/// Usual answers the baseline is taken from: enough that a load creeping up answer by answer, each
/// within the allowance, moves the baseline little before the evidence shows it. In the replay of
/// the `pace` benchmark's site at the 0.25 s floor, 64 left the p95 over every answer at 1.41-1.48
/// times unloaded, 256 at 1.35-1.36, for the same throughput. Kept as `f32` doublings of a second
/// (1 KiB a queue).
const WINDOW: usize = 256;

/// Usual answers needed before the baseline is trusted and the evidence counts. Eight: a host's
/// first answers come before the crawl loads it (a host the pace runs at or over its capacity is
/// loaded from its fifth to tenth request on), and a baseline learned later is learned under
/// load, which no slow-down then shows. So few answers of pages spread fourfold put the baseline
/// within a quarter of a doubling; that standard error is part of the allowance. In the replay of
/// the `pace` benchmark's site (`fetch::pace::tests::against_site`), twenty instead left 37 to 40
/// of the 200 hosts over 1.5 times their unloaded p95, eight 22 to 30.
const TRUSTED: usize = 8;

/// Answers held back from the usual ones while the evidence is above zero, at most: past it they
/// join (the host is that slow now).
const PENDING: usize = WINDOW / 2;

/// The last answers a baseline set anew starts from.
const RECENT: usize = 12;

/// The evidence (in doublings of answer time summed over answers) at which answers count as
/// slower than usual. With a host whose pages spread fourfold, it takes thousands of answers
/// without load to reach it by chance (the pace benchmark's site, replayed in the pace's tests).
pub const EVIDENCE: f64 = 3.5;

/// The most one answer adds to the evidence, in doublings: one very slow answer is not load.
pub const MOST_EXCESS: f64 = 1.0;

/// The least one answer takes from the evidence, in doublings.
const MOST_CREDIT: f64 = 2.0;

/// The slack under which slower answers are noise (loopback, the scheduler), whatever the ratio.
const SLACK: Duration = Duration::from_millis(5);

/// A host's answer times, as its queue has seen them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latency {
    /// The recent level, in seconds.
    ewma: Option<f64>,
    /// The last `RECENT` answer times, oldest first, in doublings of a second.
    recent: VecDeque<f32>,
    /// The last `WINDOW` usual answer times, oldest first, in doublings of a second.
    usual: VecDeque<f32>,
    /// The evidence of answers slower than usual (the CUSUM), in doublings.
    evidence: f64,
    /// Answers given since the evidence was last zero: they join the usual ones once it is zero
    /// again, and are dropped if it leads to a step.
    pending: Vec<f32>,
}

impl Latency {
    /// Counts an answer that took `took`, `inflation` being the slow-down that counts (0: off).
    /// Once the baseline is trusted, the answer adds to the evidence its excess over the
    /// allowance; it joins the usual answers with those before it once the evidence is zero (or
    /// `PENDING` answers wait).
    pub fn record(&mut self, took: Duration, inflation: f64) {
        let seconds = took.as_secs_f64();
        self.ewma = Some(match self.ewma {
            Some(level) => level + ALPHA * (seconds - level),
            None => seconds,
        });
        let log = log_seconds(took);
        push_bounded(&mut self.recent, log, RECENT);
        if let (Some(usual), true) = (self.usual_spread(), inflation > 0.0) {
            let allowance = inflation.log2() / 2.0 + usual.error;
            let excess = doublings(took, usual.baseline) - allowance;
            self.evidence = (self.evidence + excess).max(0.0);
        }
        self.pending.push(log);
        if self.evidence == 0.0 || self.pending.len() >= PENDING {
            for log in self.pending.drain(..) {
                push_bounded(&mut self.usual, log, WINDOW);
            }
        }
    }

    /// The recent level of answer times; none before the first answer.
    pub fn recent(&self) -> Option<Duration> {
        self.ewma
            .map(|seconds| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
    }

    /// The host's usual answer time: the geometric mean of its usual answers (the quickest and
    /// slowest eighth left out), once there are `TRUSTED` of them.
    pub fn baseline(&self) -> Option<Duration> {
        self.usual_spread().map(|usual| usual.baseline)
    }

    /// The baseline and how far off it may be, once there are `TRUSTED` usual answers.
    fn usual_spread(&self) -> Option<Usual> {
        (self.usual.len() >= TRUSTED).then(|| Usual::of(&self.usual))
    }

    /// Whether the evidence of answers slower than usual reached `EVIDENCE` (3.5). Never with
    /// `inflation` 0 (off), nor before the baseline is trusted.
    pub fn inflated(&self, inflation: f64) -> bool {
        inflation > 0.0 && self.evidence >= EVIDENCE
    }

    /// Starts gathering evidence afresh: what was gathered led to a step.
    pub fn clear_evidence(&mut self) {
        self.evidence = 0.0;
        self.pending.clear();
    }

    /// Takes the last few answers as the host's usual time from now on: the host is that slow
    /// (slowing down did not bring its answers back), and the baseline is set anew from them and
    /// the next answers.
    pub fn rebase(&mut self) {
        self.usual = self.recent.clone();
        self.clear_evidence();
    }
}

/// The host's usual answer time, from its usual answers without the quickest and slowest eighth:
/// their geometric mean, and its standard error in doublings (how far off so few answers may put
/// it).
#[derive(Debug, Clone, Copy)]
struct Usual {
    baseline: Duration,
    error: f64,
}

impl Usual {
    fn of(times: &VecDeque<f32>) -> Usual {
        let mut logs: Vec<f64> = times.iter().map(|&log| f64::from(log)).collect();
        logs.sort_by(f64::total_cmp);
        let cut = logs.len().div_ceil(8).min(logs.len().saturating_sub(1) / 2);
        let kept = &logs[cut..logs.len() - cut];
        let n = kept.len().max(1) as f64;
        let mean = kept.iter().sum::<f64>() / n;
        let variance = kept.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n;
        Usual {
            baseline: Duration::try_from_secs_f64(mean.exp2()).unwrap_or(Duration::MAX),
            error: (variance / n).sqrt(),
        }
    }
}

/// How many doublings slower than `baseline` the answer `took` is (negative: quicker), within
/// `[-MOST_CREDIT, MOST_EXCESS]`; 0 within `SLACK` of the baseline either way.
fn doublings(took: Duration, baseline: Duration) -> f64 {
    if took.abs_diff(baseline) <= SLACK {
        return 0.0;
    }
    let ratio = took.as_secs_f64().max(1e-6) / baseline.as_secs_f64().max(1e-6);
    ratio.log2().clamp(-MOST_CREDIT, MOST_EXCESS)
}

/// `took` in doublings of a second (a microsecond at least).
fn log_seconds(took: Duration) -> f32 {
    took.as_secs_f64().max(1e-6).log2() as f32
}

/// `times` with `took` added last, its oldest dropped beyond `bound`.
fn push_bounded(times: &mut VecDeque<f32>, took: f32, bound: usize) {
    if times.len() == bound {
        times.pop_front();
    }
    times.push_back(took);
}
