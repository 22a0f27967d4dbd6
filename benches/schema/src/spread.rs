//! A measurement repeated over several runs.

use serde::{Deserialize, Serialize};

/// A measurement repeated over several runs: its median, smallest and largest value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Median over the runs (of an even count, the mean of the two middle values).
    pub median: f64,
    /// Smallest value over the runs.
    pub min: f64,
    /// Largest value over the runs.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; all zero when there are none.
    pub fn of(values: &[f64]) -> Spread {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let middle = sorted.len() / 2;
        let median = match sorted.len() {
            0 => 0.0,
            n if n % 2 == 1 => sorted[middle],
            _ => (sorted[middle - 1] + sorted[middle]) / 2.0,
        };
        Spread {
            median,
            min: sorted.first().copied().unwrap_or(0.0),
            max: sorted.last().copied().unwrap_or(0.0),
        }
    }

    /// The largest of `values` over the smallest: 1.0 for runs that agree exactly, infinite when
    /// the smallest is not positive.
    pub fn max_over_min(values: &[f64]) -> f64 {
        let figures = Spread::of(values);
        if figures.min > 0.0 {
            figures.max / figures.min
        } else {
            f64::INFINITY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts_and_of_nothing() {
        assert_eq!(Spread::of(&[5.0, 1.0, 3.0]).median, 3.0);
        assert_eq!(Spread::of(&[4.0, 1.0, 3.0, 2.0]).median, 2.5);
        assert_eq!(
            Spread::of(&[]),
            Spread {
                median: 0.0,
                min: 0.0,
                max: 0.0
            }
        );
    }

    #[test]
    fn max_over_min_is_infinite_without_a_positive_minimum() {
        assert_eq!(Spread::max_over_min(&[2.0, 4.0]), 2.0);
        assert!(Spread::max_over_min(&[0.0, 4.0]).is_infinite());
    }

    #[test]
    fn written_as_read() {
        let spread = Spread::of(&[1.5, 2.5]);
        let written = serde_json::to_value(spread).unwrap_or_default();
        assert_eq!(written["median"], 2.0);
        let read: Result<Spread, _> = serde_json::from_value(written);
        assert_eq!(read.ok(), Some(spread));
    }
}
