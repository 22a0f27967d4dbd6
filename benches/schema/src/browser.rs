//! `browser.json`: rendered pages per second and the browser's peak memory for 1, 2, 4 and 8 tabs,
//! against squall's HTTP client fetching the same pages.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `browser.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Browser {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Hosts of the site.
    pub hosts: Option<u64>,
    /// Post pages per host.
    pub posts_per_host: Option<u64>,
    /// Post pages in all.
    pub post_pages: Option<u64>,
    /// Seconds of warm-up before each window.
    pub warmup_seconds: Option<f64>,
    /// Seconds of each window.
    pub window_seconds: Option<f64>,
    /// Runs per candidate.
    pub runs: Option<u64>,
    /// The order of the candidates, in words.
    pub order: Option<String>,
    /// The machine's cores.
    pub cores: Option<u64>,
    /// The browser keys the benchmark set.
    pub settings: Keys,
    /// How memory is measured, in words.
    pub memory: Option<String>,
    /// Milliseconds between memory samples.
    pub memory_sample_every_ms: Option<f64>,
    /// squall's HTTP client on the same pages.
    pub http: Option<Candidate>,
    /// One entry per tab count.
    pub tabs: Vec<Candidate>,
    /// Pages/s with 4 tabs over pages/s with one (medians), when both ran.
    pub ratio_4_tabs_to_1_tab: Option<f64>,
    /// The largest peak memory with the most tabs, against the limit.
    pub peak_memory_to_limit: Option<PeakMemory>,
}

/// The browser keys the benchmark set.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Keys {
    /// Every key, `KEY=VALUE`.
    pub keys: Vec<String>,
    /// `browser.settle.idle`.
    pub settle_idle_seconds: Option<f64>,
    /// `browser.max.rss.mb`.
    pub max_rss_mb: Option<f64>,
    /// The browser's `--host-resolver-rules`.
    pub host_rules: Option<String>,
}

/// The HTTP client, or the browser with some tabs, over its runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Candidate {
    /// Tabs (the browser only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tabs: Option<u64>,
    /// Fetches in flight (the HTTP client only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u64>,
    /// Good pages per second.
    pub pages_per_second: Option<Spread>,
    /// Pages/s over pages/s with one tab (medians).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_one_tab: Option<f64>,
    /// Pages/s over the HTTP client's (medians).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_http: Option<f64>,
    /// Median fetch latency, ms.
    pub latency_p50_ms: Option<Spread>,
    /// 95th percentile fetch latency, ms.
    pub latency_p95_ms: Option<Spread>,
    /// The browser's peak memory, MiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_mib: Option<Spread>,
    /// The largest peak over `browser.max.rss.mb`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_to_limit: Option<f64>,
    /// Browser restarts over the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// Fetches that did not end within the window.
    pub misses: Option<u64>,
    /// Fetches that failed.
    pub failures: Option<u64>,
    /// Good pages that held their post's text.
    pub with_post_text: Option<u64>,
    /// Cores the driver (this process's fetching side) used.
    pub driver_cpu_cores: Option<Spread>,
    /// Cores the browser's processes used.
    pub browser_cpu_cores: Option<Spread>,
    /// Cores the site used.
    pub site_cpu_cores: Option<Spread>,
    /// Cores the memory sampler used.
    pub sampler_cpu_cores: Option<Spread>,
    /// Busy cores not accounted for above.
    pub other_cpu_cores: Option<Spread>,
    /// The machine's busy share.
    pub machine_busy: Option<Spread>,
    /// Each run.
    pub runs: Vec<WindowRun>,
}

/// One window of one candidate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowRun {
    /// Its place in the benchmark's order.
    pub order: u64,
    /// Tabs (the browser only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tabs: Option<u64>,
    /// The window, seconds.
    pub window_seconds: f64,
    /// Good pages per second.
    pub pages_per_second: f64,
    /// Good pages.
    pub pages: u64,
    /// Fetches that did not end within the window.
    pub misses: u64,
    /// Fetches that failed.
    pub failures: u64,
    /// Good pages that held their post's text.
    pub with_post_text: u64,
    /// Median fetch latency, ms.
    pub latency_p50_ms: f64,
    /// 95th percentile fetch latency, ms.
    pub latency_p95_ms: f64,
    /// From the window's end until the fetches in flight then had ended, seconds.
    pub drain_seconds: f64,
    /// Cores the driver used.
    pub driver_cpu_cores: f64,
    /// Cores the site used.
    pub site_cpu_cores: f64,
    /// Cores the memory sampler used.
    pub sampler_cpu_cores: f64,
    /// Cores the browser's processes used.
    pub browser_cpu_cores: f64,
    /// The machine's busy share.
    pub machine_busy: f64,
    /// Busy cores not accounted for above.
    pub other_cpu_cores: f64,
    /// The browser's peak memory, MiB (the browser only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_mib: Option<f64>,
    /// Memory samples taken (the browser only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_samples: Option<u64>,
    /// Browser restarts (the browser only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
}

/// The largest peak memory at the most tabs run, against the configured limit.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PeakMemory {
    /// The most tabs run.
    pub tabs: u64,
    /// The largest peak with them, MiB.
    pub peak_memory_mib: f64,
    /// `browser.max.rss.mb`.
    pub limit_mib: u64,
    /// The peak over the limit.
    pub ratio: f64,
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
