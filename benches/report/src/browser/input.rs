//! `browser.json`: rendered pages per second and the browser's peak memory for 1, 2, 4 and 8 tabs,
//! against squall's HTTP client fetching the same pages.

use serde::Deserialize;

use crate::input::Spread;

/// Pages/s with [`AIM_TABS`] tabs must reach this many times pages/s with one.
pub const AIM: f64 = 3.0;

/// The tab count the aim is for.
pub const AIM_TABS: u64 = 4;

/// `browser.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Browser {
    /// Host names of the app.
    pub hosts: Option<u64>,
    /// Posts per host.
    pub posts_per_host: Option<u64>,
    /// Driven before each window, not counted.
    pub warmup_seconds: Option<f64>,
    /// The counted window.
    pub window_seconds: Option<f64>,
    /// Runs per candidate.
    pub runs: Option<u64>,
    /// The machine's cores.
    pub cores: Option<u64>,
    /// The commit measured.
    pub commit: Option<String>,
    /// How often the browser's memory was read.
    pub memory_sample_every_ms: Option<f64>,
    /// The browser keys set.
    pub settings: Keys,
    /// squall's HTTP client on the same pages.
    pub http: Option<Candidate>,
    /// One entry per tab count.
    pub tabs: Vec<Candidate>,
}

/// The browser keys the benchmark set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Keys {
    /// `browser.settle.idle`.
    pub settle_idle_seconds: Option<f64>,
    /// `browser.max.rss.mb`.
    pub max_rss_mb: Option<f64>,
}

/// The HTTP client, or the browser with some tabs, over its runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Candidate {
    /// Tabs (the browser only).
    pub tabs: Option<u64>,
    /// Fetches in flight (HTTP only).
    pub concurrency: Option<u64>,
    /// Good pages per second in the window.
    pub pages_per_second: Option<Spread>,
    /// The median over the one-tab median.
    pub ratio_to_one_tab: Option<f64>,
    /// The median over the HTTP median.
    pub ratio_to_http: Option<f64>,
    /// Median latency of the good pages, ms.
    pub latency_p50_ms: Option<Spread>,
    /// 95th percentile latency, ms.
    pub latency_p95_ms: Option<Spread>,
    /// Peak memory of the browser's processes, MiB.
    pub peak_memory_mib: Option<Spread>,
    /// The largest peak over the configured limit.
    pub peak_memory_to_limit: Option<f64>,
    /// Browser restarts over the runs.
    pub restarts: Option<u64>,
    /// Rendered pages without their post's text, over the runs.
    pub misses: Option<u64>,
    /// Fetches without a 200 response, over the runs.
    pub failures: Option<u64>,
    /// This process, the site's threads apart.
    pub driver_cpu_cores: Option<Spread>,
    /// The browser's processes.
    pub browser_cpu_cores: Option<Spread>,
    /// The site's threads.
    pub site_cpu_cores: Option<Spread>,
    /// The benchmark's memory sampler.
    pub sampler_cpu_cores: Option<Spread>,
    /// Other programs.
    pub other_cpu_cores: Option<Spread>,
    /// The machine's busy share.
    pub machine_busy: Option<Spread>,
}

impl Browser {
    /// The entry for `tabs` tabs.
    pub fn with(&self, tabs: u64) -> Option<&Candidate> {
        self.tabs.iter().find(|c| c.tabs == Some(tabs))
    }

    /// The entry with the most tabs.
    pub fn most_tabs(&self) -> Option<&Candidate> {
        self.tabs.iter().max_by_key(|c| c.tabs.unwrap_or(0))
    }
}
