//! A host's answer times: their recent level (an EWMA, what the interval keeps up with), the
//! median of the last few (what load shows in: one slow answer among quick ones does not move it)
//! and the host's usual time, its baseline: the upper quartile of its usual answers, so that the
//! ordinary spread of a host's answers (large pages beside small ones, cached beside uncached)
//! does not read as load. Load is answers typically slower than the slow end of the usual ones;
//! answers given under load do not join the usual ones, unless the host is found to be that slow
//! now ([`rebase`](Latency::rebase)).

use std::collections::VecDeque;
use std::time::Duration;

/// How much each new answer weighs in the recent level.
const ALPHA: f64 = 0.2;

/// Usual answers the baseline is taken from.
const WINDOW: usize = 64;

/// Usual answers needed before the baseline is trusted (and after it is set anew): half the
/// window, so that a few answers at either end of a host's spread do not make its usual time.
const TRUSTED: usize = WINDOW / 2;

/// The last answers whose median is the recent typical time: load shows once four in a row are
/// slow.
const RECENT: usize = 7;

/// The slack under which slower answers are noise (loopback, the scheduler), whatever the ratio.
const SLACK: Duration = Duration::from_millis(10);

/// A host's answer times, as its queue has seen them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latency {
    /// The recent level, in seconds.
    ewma: Option<f64>,
    /// The last `RECENT` answer times, oldest first.
    recent: VecDeque<Duration>,
    /// The last `WINDOW` usual answer times, oldest first.
    usual: VecDeque<Duration>,
}

impl Latency {
    /// Counts an answer that took `took`; it joins the usual answers unless it is over
    /// `inflation` times the baseline (0: every answer joins).
    pub fn record(&mut self, took: Duration, inflation: f64) {
        let seconds = took.as_secs_f64();
        self.ewma = Some(match self.ewma {
            Some(level) => level + ALPHA * (seconds - level),
            None => seconds,
        });
        push_bounded(&mut self.recent, took, RECENT);
        let usual = match self.baseline() {
            Some(baseline) => inflation <= 0.0 || !over(took, baseline, inflation),
            None => true,
        };
        if usual {
            push_bounded(&mut self.usual, took, WINDOW);
        }
    }

    /// The recent level of answer times; none before the first answer.
    pub fn recent(&self) -> Option<Duration> {
        self.ewma
            .map(|seconds| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX))
    }

    /// The host's usual answer time: the upper quartile of its usual answers, once there are
    /// enough of them (`TRUSTED`).
    pub fn baseline(&self) -> Option<Duration> {
        (self.usual.len() >= TRUSTED).then(|| quantile(&self.usual, 0.75))
    }

    /// The median of the last few answers (`RECENT`), once there are that many.
    pub fn typical(&self) -> Option<Duration> {
        (self.recent.len() == RECENT).then(|| quantile(&self.recent, 0.5))
    }

    /// Whether the last few answers are typically over `inflation` times the baseline, and more
    /// than 10 ms (`SLACK`) over it. Never with `inflation` 0 (off), nor before the baseline is
    /// trusted.
    pub fn inflated(&self, inflation: f64) -> bool {
        let (Some(typical), Some(baseline)) = (self.typical(), self.baseline()) else {
            return false;
        };
        inflation > 0.0 && over(typical, baseline, inflation)
    }

    /// Takes the last few answers as the host's usual time from now on: the host is that slow
    /// (slowing down did not bring its answers back), and the baseline is set anew from them and
    /// the next answers.
    pub fn rebase(&mut self) {
        self.usual = self.recent.clone();
    }
}

/// Whether `took` is over `inflation` times `baseline`, and more than `SLACK` over it.
fn over(took: Duration, baseline: Duration, inflation: f64) -> bool {
    took.as_secs_f64() > inflation * baseline.as_secs_f64() && took.saturating_sub(baseline) > SLACK
}

/// `times` with `took` added last, its oldest dropped beyond `bound`.
fn push_bounded(times: &mut VecDeque<Duration>, took: Duration, bound: usize) {
    if times.len() == bound {
        times.pop_front();
    }
    times.push_back(took);
}

/// The `q` quantile of `times` (0.5: the median, the upper one of an even count); zero for none.
fn quantile(times: &VecDeque<Duration>, q: f64) -> Duration {
    let mut times: Vec<Duration> = times.iter().copied().collect();
    if times.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((times.len() as f64 * q) as usize).min(times.len() - 1);
    *times.select_nth_unstable(rank).1
}
