//! Latency percentiles over the last minute in fixed memory: a [`LatencyWindow`] counts durations
//! into logarithmic buckets (each ~19 % wider than the one before, from 0.1 ms to about an hour),
//! one set of buckets per slot of the window; the oldest slot is emptied as the window moves on.

use std::sync::Mutex;
use std::time::Duration;

/// Buckets per slot.
const BUCKETS: usize = 96;
/// The upper bound of the first bucket, in milliseconds.
const FIRST_BOUND_MS: f64 = 0.1;
/// Each bucket's bound over the one before (2^(1/4)).
const GROWTH: f64 = 1.189_207_115;

/// Durations of the last few slots, for percentiles.
#[derive(Debug)]
pub struct LatencyWindow {
    slots: Mutex<Slots>,
}

#[derive(Debug)]
struct Slots {
    counts: Vec<[u32; BUCKETS]>,
    current: usize,
}

/// The percentiles of a window, in milliseconds (`None` when nothing was recorded).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// The median.
    pub p50: f64,
    /// The 95th percentile.
    pub p95: f64,
    /// The 99th percentile.
    pub p99: f64,
}

impl LatencyWindow {
    /// A window of `slots` slots (e.g. 6 slots moved on every 10 s: the last minute).
    pub fn new(slots: usize) -> Self {
        LatencyWindow {
            slots: Mutex::new(Slots {
                counts: vec![[0; BUCKETS]; slots.max(1)],
                current: 0,
            }),
        }
    }

    /// Counts one duration in the current slot.
    pub fn record(&self, duration: Duration) {
        let bucket = bucket_of(duration.as_secs_f64() * 1000.0);
        if let Ok(mut slots) = self.slots.lock() {
            let current = slots.current;
            let count = &mut slots.counts[current][bucket];
            *count = count.saturating_add(1);
        }
    }

    /// Moves the window on: the oldest slot is emptied and becomes the current one.
    pub fn advance(&self) {
        if let Ok(mut slots) = self.slots.lock() {
            let next = (slots.current + 1) % slots.counts.len();
            slots.counts[next] = [0; BUCKETS];
            slots.current = next;
        }
    }

    /// The percentiles of what the window holds (each a bucket's upper bound: within ~19 %).
    pub fn percentiles(&self) -> Option<Percentiles> {
        let totals = {
            let slots = self.slots.lock().ok()?;
            let mut totals = [0u64; BUCKETS];
            for slot in &slots.counts {
                for (total, count) in totals.iter_mut().zip(slot) {
                    *total += u64::from(*count);
                }
            }
            totals
        };
        let count: u64 = totals.iter().sum();
        if count == 0 {
            return None;
        }
        let at = |fraction: f64| {
            let rank = ((count as f64) * fraction).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (bucket, total) in totals.iter().enumerate() {
                seen += total;
                if seen >= rank {
                    return upper_bound_ms(bucket);
                }
            }
            upper_bound_ms(BUCKETS - 1)
        };
        Some(Percentiles {
            p50: at(0.50),
            p95: at(0.95),
            p99: at(0.99),
        })
    }
}

/// The bucket of a duration in milliseconds.
fn bucket_of(ms: f64) -> usize {
    if ms <= FIRST_BOUND_MS {
        return 0;
    }
    let bucket = ((ms / FIRST_BOUND_MS).ln() / GROWTH.ln()).ceil();
    (bucket as usize).min(BUCKETS - 1)
}

/// A bucket's upper bound in milliseconds, rounded for people.
fn upper_bound_ms(bucket: usize) -> f64 {
    let bound = FIRST_BOUND_MS * GROWTH.powi(bucket as i32);
    super::series::round(bound, if bound < 10.0 { 2 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_fall_within_a_bucket_of_the_truth() {
        let window = LatencyWindow::new(6);
        for ms in 1..=1000u64 {
            window.record(Duration::from_millis(ms));
        }
        let found = window.percentiles().expect("durations were recorded");
        for (value, truth) in [(found.p50, 500.0), (found.p95, 950.0), (found.p99, 990.0)] {
            assert!(
                value >= truth && value <= truth * GROWTH * 1.01,
                "{value} for {truth}"
            );
        }
    }

    #[test]
    fn the_oldest_slot_leaves_the_window() {
        let window = LatencyWindow::new(2);
        window.record(Duration::from_secs(5));
        window.advance();
        window.record(Duration::from_millis(2));
        assert!(window.percentiles().expect("two recorded").p99 >= 5000.0);
        window.advance();
        assert!(
            window.percentiles().expect("one left").p99 < 3.0,
            "5 s left the window"
        );
        window.advance();
        assert!(window.percentiles().is_none(), "both slots emptied");
    }

    #[test]
    fn extremes_land_in_the_first_and_last_buckets() {
        assert_eq!(bucket_of(0.0), 0);
        assert_eq!(bucket_of(1e12), BUCKETS - 1);
    }
}
