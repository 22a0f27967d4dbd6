//! `pace.json`: crawls of hosts of a hidden capacity that push back (the capacity site of
//! `tests/site`), one row per pacing policy and frontier, judged by the site's own request log.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `pace.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Pace {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Hosts of the capacity site.
    pub hosts: Option<u64>,
    /// The hosts' capacities summed, requests/s.
    pub capacity_per_second: Option<f64>,
    /// The smallest and largest capacity of a host, requests/s.
    pub capacity_range: Option<(f64, f64)>,
    /// Seconds from a crawl's start to its window (left out of every figure but the gaps and
    /// Retry-After windows, which count the whole log).
    pub warm_up_seconds: Option<f64>,
    /// The window's length, seconds.
    pub window_seconds: Option<f64>,
    /// How the crawls ran (binary, settings every row shares).
    pub settings: Option<String>,
    /// One entry per row of a capacity site crawl.
    pub rows: Vec<PaceRow>,
    /// The restart rows: killed, restarted, held to the learned pace in the first minute.
    pub restarts: Vec<PaceRestart>,
    /// The control rows on the plain site (no push-back): each policy's pages/s.
    pub control: Vec<PaceControl>,
}

/// One crawl of the capacity site, its figures from the site's log over the window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PaceRow {
    /// The row's name (`adaptive-fast`).
    pub name: String,
    /// `embedded` or `queue`.
    pub frontier: String,
    /// Crawl processes.
    pub processes: u64,
    /// The settings that make the row (`fetcher.pace.policy=adaptive`, ...).
    pub settings: Vec<String>,
    /// The shortest same-host interval the row was configured to keep, seconds.
    pub floor_seconds: f64,
    /// GET answers 200 in the window, per second.
    pub useful_per_second: f64,
    /// `Σ min(capacity, 1 / floor)`.
    pub ideal_per_second: f64,
    /// `Σ min(capacity, 1 / (floor + unloaded))`: what one fetch at a time per host reaches.
    pub ideal_one_at_a_time_per_second: f64,
    /// `useful_per_second / ideal_per_second` (the bar: 0.85).
    pub ratio_to_ideal: f64,
    /// Requests in the window.
    pub requests: u64,
    /// Of the window's useful answers, pages the host had served before.
    pub repeated: u64,
    /// The window's requests answered 429 or 503, as a share (the bar: 1 %).
    pub refused_share: f64,
    /// Requests inside a Retry-After window an earlier answer announced (the bar: 0).
    pub inside_retry_after: u64,
    /// Same-host gaps shorter than the floor (the bar: 0).
    pub gaps_under_floor: u64,
    /// The smallest same-host gap, seconds.
    pub smallest_gap_seconds: Option<f64>,
    /// The p95 over every answer of the window of answer time / unloaded (the bar: 1.5).
    pub p95_over_unloaded: Option<f64>,
    /// The largest and the median over hosts of their p95 answer time / unloaded.
    pub p95_over_unloaded_max: Option<f64>,
    /// See `p95_over_unloaded_max`.
    pub p95_over_unloaded_median: Option<f64>,
    /// Hosts whose p95 answer time / unloaded is over 1.5.
    pub hosts_p95_over_bar: Option<u64>,
    /// The crawl processes' CPU milliseconds per useful page in the window.
    pub crawler_cpu_ms_per_page: Option<f64>,
    /// The engine's CPU milliseconds per useful page in the window (queue frontier rows).
    pub engine_cpu_ms_per_page: Option<f64>,
    /// What the row is held to, when not its ideal (the engine's limit of the shared rows).
    pub note: Option<String>,
    /// The hosts of the largest p95 answer time over unloaded, worst first: name, capacity,
    /// answer when over it, p95 ratio, requests and refusals in the window.
    pub slowest_hosts: Vec<String>,
}

/// A crawl killed (SIGKILL) and started again on the same frontier.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PaceRestart {
    /// The row's name (`restart-embedded`).
    pub name: String,
    /// `embedded` or `queue`.
    pub frontier: String,
    /// Crawl processes, killed together and started together.
    pub processes: u64,
    /// Seconds crawled before the kill.
    pub before_kill_seconds: f64,
    /// Hosts with a pace learned before the kill (the median gap of their last 5 requests).
    pub hosts_checked: u64,
    /// Of those, hosts slower than the floor (backed off: the ones the bar bites on).
    pub hosts_backed_off: u64,
    /// Hosts asked more often in the first minute after the restart than their learned pace
    /// allows (+10 %), each written as a problem (the bar: none).
    pub problems: Vec<String>,
    /// Requests to the checked hosts in the first minute after the restart.
    pub requests_first_minute: u64,
}

/// The plain site crawled to its end under one policy, several runs interleaved.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PaceControl {
    /// The row's name (`control-adaptive`).
    pub name: String,
    /// The policy.
    pub policy: String,
    /// Pages per second over each run, from the site's log.
    pub pages_per_second: Option<Spread>,
    /// Median pages/s over the `control-fixed` row's (the bar: 0.98).
    pub ratio_to_fixed: Option<f64>,
    /// Same-host gaps shorter than the delay, over the runs (the bar: 0).
    pub gaps_under_delay: u64,
}
