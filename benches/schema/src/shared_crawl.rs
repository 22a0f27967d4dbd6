//! `shared_crawl.json`: crawler processes sharing one queue frontier, against the politeness limit
//! hosts / delay.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `shared_crawl.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SharedCrawl {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Crawler processes started on the frontier.
    pub processes: Option<u64>,
    /// Hosts of the site.
    pub hosts: Option<u64>,
    /// Ordinary pages per host.
    pub pages_per_host: Option<u64>,
    /// URLs a complete crawl fetches.
    pub site_urls: Option<u64>,
    /// The per-host delay.
    pub delay_seconds: Option<f64>,
    /// Hosts / delay.
    pub ideal_pages_per_second: Option<f64>,
    /// Repetitions.
    pub runs: Option<u64>,
    /// Seconds a run may take before its processes are stopped.
    pub limit_seconds: Option<f64>,
    /// Seconds a stopped process has to exit.
    pub grace_seconds: Option<f64>,
    /// How the processes ran.
    pub settings: Option<String>,
    /// One entry per run.
    pub crawls: Vec<SharedRun>,
    /// Pages per second over the runs.
    pub pages_per_second: Option<Spread>,
    /// Median rate over the ideal.
    pub ratio_to_ideal: Option<f64>,
    /// The smallest share of the pages any process fetched, over all runs.
    pub smallest_share: Option<f64>,
}

/// One run of the processes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SharedRun {
    /// Which run.
    pub run: Option<u64>,
    /// Fetches in all the fetch logs.
    pub fetches: Option<u64>,
    /// Lines of the fetch logs that did not parse.
    pub unparsed_log_lines: Option<u64>,
    /// From the first fetch's start to the last's.
    pub seconds: Option<f64>,
    /// From the start of the processes to the end of the last.
    pub wall_seconds: Option<f64>,
    /// Pages per second over `seconds`.
    pub pages_per_second: Option<f64>,
    /// Rate over the ideal.
    pub ratio_to_ideal: Option<f64>,
    /// Each process.
    pub processes: Vec<SharedProcess>,
    /// Fetches of a host that started before another fetch of that host ended (any process).
    pub overlapping_fetches: Option<u64>,
    /// Of those, the ones where the two fetches were made by different processes.
    pub cross_process_overlaps: Option<u64>,
    /// Times a host's next fetch was made by another process than its previous one.
    pub handovers: Option<u64>,
    /// Hosts fetched by more than one process.
    pub hosts_fetched_by_several: Option<u64>,
    /// Smallest time from the end of a host's fetch to the start of its next one.
    pub smallest_gap_seconds: Option<f64>,
    /// The same, where the two fetches were made by different processes.
    pub smallest_cross_process_gap_seconds: Option<f64>,
    /// Requests the site received.
    pub site_requests: Option<u64>,
    /// URLs of the site never fetched.
    pub missing_urls: Option<u64>,
    /// URLs fetched more than once.
    pub fetched_more_than_once: Option<u64>,
    /// URLs in the fetch logs more than once.
    pub logged_more_than_once: Option<u64>,
    /// Requests for URLs the crawl should not have asked for.
    pub unexpected_requests: Option<u64>,
    /// What the site's expectation found wrong (the first ten).
    pub problems: Vec<String>,
}

/// One process of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SharedProcess {
    /// Which process.
    pub process: Option<u64>,
    /// Fetches in its log.
    pub fetches: Option<u64>,
    /// Its share of all fetches.
    pub share: Option<f64>,
    /// Hosts it fetched from.
    pub hosts: Option<u64>,
    /// Their names.
    pub host_names: Vec<String>,
    /// Seconds from the run's first fetch to its first.
    pub first_fetch_seconds: Option<f64>,
    /// Seconds from the run's first fetch to its last.
    pub last_fetch_seconds: Option<f64>,
    /// Why it stopped (the crawl summary's stop reason), if it said.
    pub stop: Option<String>,
    /// Pages its crawl summary counted.
    pub summary_pages: Option<u64>,
    /// Whether the benchmark had to stop it.
    pub stopped_by_benchmark: Option<bool>,
    /// Its exit code, when it exited with one.
    pub exit_code: Option<i32>,
    /// Seconds from its start to its exit.
    pub exited_seconds: Option<f64>,
}

impl SharedCrawl {
    /// The run in which a process had the smallest share, and that share.
    pub fn least_shared_run(&self) -> Option<(usize, &SharedRun, f64)> {
        self.crawls
            .iter()
            .enumerate()
            .filter_map(|(i, run)| run.smallest_share().map(|s| (i, run, s)))
            .min_by(|a, b| a.2.total_cmp(&b.2))
    }
}

impl SharedRun {
    /// The smallest share of its processes.
    pub fn smallest_share(&self) -> Option<f64> {
        self.processes
            .iter()
            .filter_map(|p| p.share)
            .min_by(f64::total_cmp)
    }
}
