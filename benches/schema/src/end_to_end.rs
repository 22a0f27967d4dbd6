//! `end_to_end.json`: the whole topology crawling many hosts, on each frontier, against
//! min(politeness limit, fetcher-alone rate); and, in `as_given`, crawls as a user starts them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `end_to_end.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EndToEnd {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Host names of the site.
    pub hosts: Option<u64>,
    /// Pages per host.
    pub pages_per_host: Option<u64>,
    /// URLs reachable on the site.
    pub site_urls: Option<u64>,
    /// The per-host delay.
    pub delay_seconds: Option<f64>,
    /// Seconds of warm-up before each window.
    pub warmup_seconds: Option<f64>,
    /// Seconds of each measured window.
    pub window_seconds: Option<f64>,
    /// Runs per candidate.
    pub runs: Option<u64>,
    /// The configuration every crawl got (`KEY=VALUE`).
    pub settings: Vec<String>,
    /// Hosts / delay.
    pub politeness_pages_per_second: Option<f64>,
    /// The fetcher bolt alone on the same site.
    pub fetcher_alone_pages_per_second: Option<Spread>,
    /// Its runs.
    pub fetcher_alone_runs: Vec<f64>,
    /// min(politeness, fetcher alone).
    pub baseline_pages_per_second: Option<f64>,
    /// The embedded frontier's crawls.
    pub embedded: Option<Frontier>,
    /// The queue frontier's crawls.
    pub queue: Option<Frontier>,
    /// The aggregation spout's crawls, on a status index.
    pub aggregation: Option<Frontier>,
    /// Embedded median over the baseline.
    pub ratio_embedded_to_baseline: Option<f64>,
    /// Queue median over the baseline.
    pub ratio_queue_to_baseline: Option<f64>,
    /// Aggregation median over the baseline.
    pub ratio_aggregation_to_baseline: Option<f64>,
    /// Queue median over aggregation median.
    pub ratio_queue_to_aggregation: Option<f64>,
    /// The frontier of other hosts' URLs that the `-among` crawls ran in.
    pub background: Option<Background>,
    /// The queue frontier's crawls among the background's URLs.
    pub queue_among: Option<Frontier>,
    /// The aggregation spout's crawls among the background's URLs.
    pub aggregation_among: Option<Frontier>,
    /// Queue among the background over queue alone (medians).
    pub ratio_queue_among_to_queue: Option<f64>,
    /// Queue over aggregation, both among the background (medians).
    pub ratio_queue_to_aggregation_among: Option<f64>,
    /// The crawls as a user starts them, run to the end of their site.
    pub as_given: Option<AsGiven>,
    /// The queue and aggregation crawls again on a second engine node (another version),
    /// interleaved with the first's.
    pub second_engine: Option<SecondEngine>,
}

/// The same crawls on two engine nodes of different versions, run side by side in one run: what
/// an upgrade costs or gains.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SecondEngine {
    /// The engine every other row ran on, as its node names itself ("OpenSearch 2.19.6").
    pub first: Option<String>,
    /// The second node's ("OpenSearch 3.9.0").
    pub second: Option<String>,
    /// The queue frontier's crawls on the second node.
    pub queue: Option<Frontier>,
    /// The aggregation spout's crawls on the second node.
    pub aggregation: Option<Frontier>,
    /// Pages/s, queue frontier: second over first (medians).
    pub ratio_queue_pages: Option<f64>,
    /// Engine CPU per page, queue frontier: second over first (medians).
    pub ratio_queue_engine_cpu: Option<f64>,
    /// Pages/s, aggregation spout: second over first (medians).
    pub ratio_aggregation_pages: Option<f64>,
    /// Engine CPU per page, aggregation spout: second over first (medians).
    pub ratio_aggregation_engine_cpu: Option<f64>,
}

/// The frontier of other hosts' URLs, none due, that the `-among` crawls ran in.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Background {
    /// URLs in it.
    pub urls: Option<u64>,
    /// Of those, due when the crawls began.
    pub due_urls: Option<u64>,
    /// Its queues.
    pub queues: Option<u64>,
    /// Kept by the spouts benchmark, or loaded by this one.
    pub source: Option<String>,
    /// Seconds loading it took, when this benchmark loaded it.
    pub load_seconds: Option<f64>,
}

/// One frontier's crawls.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Frontier {
    /// Fetches per second in the window.
    pub pages_per_second: Option<Spread>,
    /// Status documents written per second in the window.
    pub status_writes_per_second: Option<Spread>,
    /// Status documents written per page fetched.
    pub status_writes_per_page: Option<Spread>,
    /// The engine's CPU milliseconds per page (frontiers in the engine).
    pub engine_cpu_ms_per_page: Option<Spread>,
    /// The crawler's CPU milliseconds per page.
    pub cpu_ms_per_page: Option<Spread>,
    /// The crawler's peak resident set, MiB.
    pub peak_rss_mib: Option<Spread>,
    /// The limiting stage named for each run.
    pub limiting_stages: Vec<String>,
    /// Each run.
    pub runs: Vec<CrawlRun>,
}

/// One measured crawl: the crawl binary read through its metrics and /proc in a window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CrawlRun {
    /// `embedded`, `queue` or `aggregation`.
    pub frontier: String,
    /// Its place in the benchmark's order.
    pub order: u64,
    /// Fetches completed in the window, per second.
    pub pages_per_second: f64,
    /// Status documents written in the window, per second.
    pub status_writes_per_second: f64,
    /// The crawler's CPU time in the window over the pages fetched in it.
    pub cpu_ms_per_page: f64,
    /// The crawler's largest resident set up to the end of the window.
    pub peak_rss_mib: f64,
    /// The stage that limits the rate, and why.
    pub limiting_stage: String,
    /// The engine's work in the window (frontiers in the engine).
    pub engine: Option<EngineWork>,
    /// The window.
    pub window_seconds: f64,
    /// Pages fetched in it.
    pub pages_in_window: f64,
    /// Pages fetched before it.
    pub pages_before_window: f64,
    /// Cores the crawler used.
    pub crawler_cpu_cores: f64,
    /// Share of the machine's CPU time busy.
    pub machine_busy: f64,
    /// Cores the site (this process) used.
    pub site_cpu_cores: f64,
    /// Cores neither used: the engine, and anything else running.
    pub other_cpu_cores: f64,
    /// Seconds spent fetching, per second.
    pub fetch_seconds_per_second: f64,
    /// Seconds spent parsing, per second.
    pub parse_seconds_per_second: f64,
    /// Seconds spent writing statuses, per second.
    pub status_store_seconds_per_second: f64,
    /// Seconds spent in frontier queries, per second.
    pub spout_query_seconds_per_second: f64,
    /// Frontier queries per second.
    pub spout_queries_per_second: f64,
    /// URLs in flight at the end of the window.
    pub spout_in_flight: f64,
    /// The pending limit.
    pub spout_max_pending: u64,
    /// Host queues the fetcher held at the end of the window.
    pub fetcher_queues: f64,
    /// URLs waiting in them.
    pub fetcher_queued: f64,
    /// Fetches under way.
    pub fetcher_active: f64,
    /// Status writes that failed.
    pub status_write_failures: f64,
}

/// The engine's work in a run's window, per page crawled, from its node statistics.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineWork {
    /// The node processes' CPU milliseconds.
    pub cpu_ms: f64,
    /// The node processes' CPU milliseconds per page.
    pub cpu_ms_per_page: Option<f64>,
    /// Per kind of work (search, refresh, indexing, get, merge).
    pub kinds: BTreeMap<String, KindWork>,
}

/// One kind of the engine's work.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct KindWork {
    /// Shard-level operations.
    pub operations: f64,
    /// Milliseconds those took.
    pub milliseconds: f64,
    /// Shard-level operations per page.
    pub operations_per_page: f64,
    /// Milliseconds those took, per page.
    pub ms_per_page: f64,
}

/// `as_given`: crawls as a user starts them, each run to the end of its site.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AsGiven {
    /// Hosts of the site.
    pub hosts: Option<u64>,
    /// Pages per host.
    pub pages_per_host: Option<u64>,
    /// URLs reachable on it.
    pub site_urls: Option<u64>,
    /// Runs of each row.
    pub runs: Option<u64>,
    /// One row per setup and delay.
    pub rows: Vec<Row>,
}

/// One setup at one delay, over its runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Row {
    /// `files-aggregation`, `default-embedded`, ...
    pub setup: String,
    /// The per-host delay.
    pub delay_seconds: f64,
    /// Hosts / delay.
    pub politeness_pages_per_second: f64,
    /// Pages/s between the 10th and 90th percentile of the site's requests.
    pub steady_pages_per_second: Option<Spread>,
    /// First to last page request, over the runs that requested every page.
    pub whole_site_seconds: Option<Spread>,
    /// Runs that requested every page.
    pub whole_site_done: u64,
    /// Crawler CPU per page.
    pub crawler_cpu_ms_per_page: Option<Spread>,
    /// Engine CPU per page.
    pub engine_cpu_ms_per_page: Option<Spread>,
    /// Peak resident memory.
    pub peak_rss_mib: Option<Spread>,
    /// The smallest gap between two requests to one host, over every run.
    pub smallest_gap_seconds: Option<f64>,
    /// URLs requested more than once, over every run.
    pub fetched_twice: u64,
    /// Each run.
    pub runs: Vec<GivenRun>,
}

/// One crawl run to the end of its site.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GivenRun {
    /// Its setup's name.
    pub setup: String,
    /// The per-host delay.
    pub delay_seconds: f64,
    /// Its place in the benchmark's order.
    pub order: u64,
    /// Seconds the crawler ran.
    pub run_seconds: f64,
    /// URLs reachable on the site.
    pub site_urls: u64,
    /// From the first page request to the last, when every page was requested.
    pub whole_site_seconds: Option<f64>,
    /// The crawler's CPU milliseconds per page.
    pub crawler_cpu_ms_per_page: f64,
    /// The engine's CPU milliseconds per page (setups in the engine).
    pub engine_cpu_ms_per_page: Option<f64>,
    /// The engine's work (setups in the engine).
    pub engine: Option<EngineWork>,
    /// The crawler's peak resident set, MiB.
    pub peak_rss_mib: f64,
    /// What the site's request log says.
    pub requests: Requests,
}

/// What a site's request log says of a crawl.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Requests {
    /// Pages requested (robots.txt aside).
    pub pages: u64,
    /// Distinct URLs among them.
    pub distinct: u64,
    /// URLs requested more than once.
    pub fetched_twice: u64,
    /// The smallest gap between two requests to one host.
    pub smallest_gap_seconds: Option<f64>,
    /// From the first request to the last (20 requests or more).
    pub span_seconds: Option<f64>,
    /// Pages/s between the 10th and the 90th percentile of the requests.
    pub steady_pages_per_second: f64,
}
