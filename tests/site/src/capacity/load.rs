//! How loaded a capacity host is, and what that does to its answer times: the rate requests
//! arrive at, measured over the last few seconds, against the host's capacity; the latency stays
//! flat up to a knee and grows past it. Pages also differ in how long they take unloaded (large
//! and small ones), by path, so that a crawler cannot read the host's spread as load.

use std::time::{Duration, Instant};

/// The shortest span the arrival rate is measured over.
const LEAST_SPAN: Duration = Duration::from_secs(5);

/// Arrivals a measuring span holds at the host's capacity, at least.
const ARRIVALS_PER_SPAN: f64 = 5.0;

/// The arrival rate of one host's requests: an exponentially weighted rate over a span of
/// `max(5 s, 5 arrivals at capacity)`, read as the mean of the rate just before and just after
/// each arrival (so that a steady rate reads as itself within a fraction of a percent).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadMeter {
    span: f64,
    rate: f64,
    at: Option<Instant>,
}

impl LoadMeter {
    /// A meter for a host of `capacity` requests/s, nothing arrived yet.
    pub fn new(capacity: f64) -> LoadMeter {
        let span =
            (ARRIVALS_PER_SPAN / capacity.max(f64::MIN_POSITIVE)).max(LEAST_SPAN.as_secs_f64());
        LoadMeter {
            span: if span.is_finite() { span } else { f64::MAX },
            rate: 0.0,
            at: None,
        }
    }

    /// Counts a request arriving at `now` (a time before the last one counts as that one): the
    /// arrival rate it meets, in requests/s.
    pub fn arrive(&mut self, now: Instant) -> f64 {
        let elapsed = self
            .at
            .map_or(0.0, |at| now.saturating_duration_since(at).as_secs_f64());
        let before = self.rate * (-elapsed / self.span).exp();
        let after = before + 1.0 / self.span;
        self.rate = after;
        self.at = Some(self.at.map_or(now, |at| at.max(now)));
        (before + after) / 2.0
    }
}

/// What a host's load multiplies its answer time by: 1 up to `knee` of its capacity, then
/// `1 + growth·((ρ − knee)/(1 − knee))²`, `ρ` the load over capacity (read up to 2; a load that
/// is not a number as none).
pub fn load_multiplier(load: f64, growth: f64, knee: f64) -> f64 {
    let load = if load.is_nan() { 0.0 } else { load };
    let knee = knee.clamp(0.0, 0.99);
    let over = ((load.min(2.0) - knee) / (1.0 - knee)).max(0.0);
    let multiplier = 1.0 + growth.max(0.0) * over * over;
    if multiplier.is_finite() {
        multiplier
    } else {
        1.0
    }
}

/// How much longer than the host's unloaded time the page at `path` takes, unloaded: from
/// `1/√spread` to `√spread`, spread evenly on a log scale by a hash of the path (the same path,
/// the same factor). 1 for a spread of 1 or less.
pub fn page_factor(path: &str, spread: f64) -> f64 {
    if spread.is_nan() || spread <= 1.0 {
        return 1.0;
    }
    // FNV-1a: a stable, well-spread hash of the path.
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let unit = (hash >> 11) as f64 / (1u64 << 53) as f64;
    spread.min(1e6).powf(unit - 0.5)
}

/// `duration` times `factor`, saturating (a factor that is not finite and positive gives the
/// duration itself).
pub fn times(duration: Duration, factor: f64) -> Duration {
    if !(factor.is_finite() && factor > 0.0) {
        return duration;
    }
    Duration::try_from_secs_f64(duration.as_secs_f64() * factor).unwrap_or(Duration::MAX)
}
