//! `live_view.json`: what the status page costs a crawl, and the live view's memory as a crawl goes
//! on.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `live_view.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveView {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Seconds each crawl ran.
    pub budget_seconds: Option<f64>,
    /// Crawls per arm, the arms taking turns (or all at once: `concurrent`).
    pub runs: Option<u64>,
    /// Whether the arms of a round crawl at the same time (each its own process and frontier).
    pub concurrent: Option<bool>,
    /// How many times over each arm crawls in a round (all at once).
    pub copies: Option<u64>,
    /// Hosts of the site (the demo site's), and the per-host delay.
    pub hosts: Option<u64>,
    /// The per-host delay, seconds.
    pub delay_seconds: Option<f64>,
    /// How often an open page asks for its data by default, seconds.
    pub poll_seconds: Option<f64>,
    /// One entry per arm: without the live view, and with the page open.
    pub arms: Vec<LiveViewArm>,
    /// Per round, the CPU per page with the page open (its default refresh) over the baseline's,
    /// less 1 (0.01: 1 % more).
    pub cpu_overhead: Option<Spread>,
    /// The same with the page asking every second (`?refresh=1`).
    pub cpu_overhead_every_second: Option<Spread>,
    /// The mean of the same ratios, with its 95 % confidence interval.
    pub cpu_overhead_mean: Option<MeanInterval>,
    /// The mean of the every-second ratios, with its 95 % confidence interval.
    pub cpu_overhead_every_second_mean: Option<MeanInterval>,
    /// The median time to make a fresh status document and write it as JSON, microseconds.
    pub document_micros: Option<f64>,
    /// That document's size in bytes.
    pub document_bytes: Option<u64>,
    /// The live view's own heap after more and more events.
    pub memory: Vec<LiveViewMemory>,
}

/// One arm of the CPU comparison.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveViewArm {
    /// `baseline (no live view)`, or a page open and how often it asks.
    pub arm: String,
    /// Pages fetched per second.
    pub pages_per_second: Option<Spread>,
    /// The crawler process's CPU (user + system) per page fetched, milliseconds.
    pub cpu_ms_per_page: Option<Spread>,
    /// The crawler process's CPU over the wall time (1.0: one core).
    pub cpu_cores: Option<Spread>,
}

/// The live view's heap after a number of events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveViewMemory {
    /// Events fed (a fetch and its processing each).
    pub events: u64,
    /// Distinct hosts among them.
    pub hosts: u64,
    /// Bytes the live view holds (allocated and not freed since it was made).
    pub bytes: u64,
}

/// A mean and the half-width of its 95 % confidence interval (1.96 standard errors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MeanInterval {
    /// The mean.
    pub mean: f64,
    /// Half the interval's width: the interval is `mean ± ci95`.
    pub ci95: f64,
    /// How many values.
    pub n: u64,
}

impl MeanInterval {
    /// The mean of `values` and its interval (None with fewer than two values).
    pub fn of(values: &[f64]) -> Option<MeanInterval> {
        let n = values.len();
        if n < 2 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some(MeanInterval {
            mean,
            ci95: 1.96 * (variance / n as f64).sqrt(),
            n: n as u64,
        })
    }

    /// The interval's upper end.
    pub fn upper(&self) -> f64 {
        self.mean + self.ci95
    }
}
