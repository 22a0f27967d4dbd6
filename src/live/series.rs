//! Rates over time in fixed memory: a [`RateTrack`] turns a running total, sampled once a step,
//! into the per-second rates of the last `capacity` steps.

use std::collections::VecDeque;

/// The per-second rate of a running total over the last steps.
#[derive(Debug, Clone)]
pub struct RateTrack {
    last_total: u64,
    rates: VecDeque<f64>,
    capacity: usize,
}

impl RateTrack {
    /// A track keeping `capacity` steps, starting from `total`.
    pub fn new(total: u64, capacity: usize) -> Self {
        RateTrack {
            last_total: total,
            rates: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Records the step that ended with `total`, `step_seconds` after the last.
    pub fn sample(&mut self, total: u64, step_seconds: f64) {
        let delta = total.saturating_sub(self.last_total);
        self.last_total = total;
        if self.rates.len() == self.capacity {
            self.rates.pop_front();
        }
        self.rates
            .push_back(delta as f64 / step_seconds.max(f64::EPSILON));
    }

    /// Records the step that ended with `total` in the track of `tracks` named `name`, `step_seconds`
    /// after the last; a name not seen before gets a track of `capacity` steps, starting from 0.
    pub fn sample_named<K: PartialEq>(
        tracks: &mut Vec<(K, RateTrack)>,
        name: K,
        total: u64,
        step_seconds: f64,
        capacity: usize,
    ) {
        match tracks.iter_mut().find(|(known, _)| *known == name) {
            Some((_, track)) => track.sample(total, step_seconds),
            None => {
                let mut track = RateTrack::new(0, capacity);
                track.sample(total, step_seconds);
                tracks.push((name, track));
            }
        }
    }

    /// The rates, oldest first.
    pub fn rates(&self) -> Vec<f64> {
        self.rates.iter().map(|rate| round(*rate, 2)).collect()
    }

    /// The mean rate over the last `steps` steps (fewer when fewer were recorded; 0 with none).
    pub fn recent(&self, steps: usize) -> f64 {
        let taken = self.rates.len().min(steps);
        if taken == 0 {
            return 0.0;
        }
        let sum: f64 = self.rates.iter().rev().take(taken).sum();
        round(sum / taken as f64, 2)
    }
}

/// `value` rounded to `digits` decimals (what the page shows, and the JSON carries).
pub fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_deltas_per_second_and_the_oldest_go() {
        let mut track = RateTrack::new(10, 3);
        for total in [12, 16, 16, 26] {
            track.sample(total, 2.0);
        }
        assert_eq!(track.rates(), vec![2.0, 0.0, 5.0]);
        assert_eq!(track.recent(2), 2.5);
        assert_eq!(RateTrack::new(0, 3).recent(5), 0.0);
    }

    #[test]
    fn a_total_that_goes_back_counts_as_nothing() {
        let mut track = RateTrack::new(10, 2);
        track.sample(4, 1.0);
        track.sample(6, 1.0);
        assert_eq!(track.rates(), vec![0.0, 2.0]);
    }
}
