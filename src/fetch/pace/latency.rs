//! A host's answer times: their recent level (an EWMA) and its unloaded time (the least of the
//! last two windows of answers, as BBR keeps its minimum round trip).

use std::time::Duration;

/// How much each new answer weighs in the recent level.
const ALPHA: f64 = 0.2;

/// Answers in a window of the unloaded time.
const WINDOW: u32 = 32;

/// The slack under which slower answers are noise (loopback, the scheduler), whatever the ratio.
const SLACK: Duration = Duration::from_millis(10);

/// A host's answer times, as its queue has seen them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    /// The recent level, in seconds.
    ewma: Option<f64>,
    /// The least answer time of the window in progress.
    current: Option<Duration>,
    /// The least of the window before it.
    previous: Option<Duration>,
    /// Answers in the window in progress.
    count: u32,
}

impl Latency {
    /// Counts an answer that took `took`.
    pub fn record(&mut self, took: Duration) {
        let seconds = took.as_secs_f64();
        self.ewma = Some(match self.ewma {
            Some(level) => level + ALPHA * (seconds - level),
            None => seconds,
        });
        self.current = Some(self.current.map_or(took, |least| least.min(took)));
        self.count += 1;
        if self.count == WINDOW {
            self.previous = self.current.take();
            self.count = 0;
        }
    }

    /// The recent level of answer times; none before the first answer.
    pub fn recent(&self) -> Option<Duration> {
        self.ewma.map(Duration::from_secs_f64)
    }

    /// The host's unloaded time: the least answer time of the last two windows.
    pub fn unloaded(&self) -> Option<Duration> {
        match (self.current, self.previous) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether recent answers are over `inflation` times the unloaded time, and more than
    /// 10 ms (`SLACK`) over it. Never with `inflation` 0 (off).
    pub fn inflated(&self, inflation: f64) -> bool {
        let (Some(recent), Some(unloaded)) = (self.recent(), self.unloaded()) else {
            return false;
        };
        inflation > 0.0
            && recent.as_secs_f64() > inflation * unloaded.as_secs_f64()
            && recent.saturating_sub(unloaded) > SLACK
    }
}
