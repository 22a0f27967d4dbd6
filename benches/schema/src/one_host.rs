//! `one_host.json`: a crawl of one host on each frontier against the politeness limit 1 / delay.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `one_host.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OneHost {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Seconds each crawl may run.
    pub budget_seconds: Option<f64>,
    /// Repetitions per frontier and delay.
    pub runs: Option<u64>,
    /// Pages on the host.
    pub site_pages: Option<u64>,
    /// The settings the crawls ran with.
    pub settings: Option<String>,
    /// One entry per frontier and delay.
    pub crawls: Vec<OneHostCrawl>,
}

/// One frontier at one delay.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OneHostCrawl {
    /// `embedded`, `queue` or `aggregation`.
    pub frontier: String,
    /// The per-host delay.
    pub delay_seconds: Option<f64>,
    /// 1 / delay.
    pub ideal_pages_per_second: Option<f64>,
    /// Pages per second from the first fetch to the last.
    pub pages_per_second: Option<Spread>,
    /// Median rate divided by the ideal.
    pub ratio_to_ideal: Option<f64>,
    /// Fetches of each repetition.
    pub fetches: Vec<u64>,
    /// Smallest time from the end of a fetch to the start of the next.
    pub smallest_gap_seconds: Option<f64>,
    /// Fetches that overlapped another.
    pub overlapping_fetches: Option<u64>,
}
