//! `urlfrontier.json` and `urlfrontier_servers.json`: squall's frontiers through the URLFrontier
//! API against the same frontier in process, and squall's URLFrontier servers against the
//! reference service.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `urlfrontier.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UrlFrontier {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// URLs loaded into each fresh frontier, all due.
    pub urls: Option<u64>,
    /// Hosts they are spread over.
    pub hosts: Option<u64>,
    /// API clients, each looping GetURLs then PutURLs.
    pub clients: Option<u64>,
    /// Writes back per batch, in both paths.
    pub batch: Option<u64>,
    /// Runs of each path per frontier.
    pub runs: Option<u64>,
    /// The engine the queue frontier lived in.
    pub engine: Option<String>,
    /// One entry per frontier.
    pub frontiers: Vec<Frontier>,
}

/// One frontier's runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Frontier {
    /// `embedded` or `queue`.
    pub frontier: String,
    /// URLs per second in process (the spout runner).
    pub in_process: Option<Spread>,
    /// URLs per second through the API.
    pub api: Option<Spread>,
    /// API median over in-process median.
    pub ratio_api_to_in_process: Option<f64>,
    /// Every run, in the order run.
    pub runs: Vec<PathRun>,
}

/// One run of one path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PathRun {
    /// Which run.
    pub run: u64,
    /// `in_process` or `api`.
    pub path: String,
    /// URLs per second.
    pub urls_per_s: f64,
}

/// `urlfrontier_servers.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UrlFrontierServers {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// URLs of the measured crawl.
    pub urls: Option<u64>,
    /// Hosts they are spread over.
    pub hosts: Option<u64>,
    /// Clients on loopback gRPC.
    pub clients: Option<u64>,
    /// Runs of each server.
    pub runs: Option<u64>,
    /// Unrecorded warm-up rounds (each server once a round) before the runs.
    pub warm_up_rounds: Option<u64>,
    /// Why the reference service was left out, when it was.
    pub reference_left_out: Option<String>,
    /// What the reference's jars were built from, by hand (e.g. `crawler-commons/url-frontier
    /// 69399d2`), as `URLFRONTIER_REFERENCE_SOURCE` said.
    pub reference_source: Option<String>,
    /// One entry per server.
    pub servers: Vec<ServerRuns>,
    /// squall's servers over the reference, when it ran.
    pub ratios: Option<ServerRatios>,
}

/// A call kind's latency percentiles.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Latency {
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
}

/// One server's runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerRuns {
    /// `squall-embedded`, `squall-queue` or `reference-rocksdb`.
    pub server: String,
    /// URLs per second putting new URLs.
    pub put_urls_per_s: Option<Spread>,
    /// URLs per second taking every URL out and putting it back.
    pub cycle_urls_per_s: Option<Spread>,
    /// PutURLs of new URLs, per call.
    pub put_new_call: Option<Latency>,
    /// GetURLs in the cycle, per call.
    pub cycle_get_call: Option<Latency>,
    /// PutURLs in the cycle, per call.
    pub cycle_put_call: Option<Latency>,
    /// The engine's CPU milliseconds per 1,000 URLs put new, for the server on the queue frontier
    /// (the node's process read from /proc, when it runs on this machine).
    pub engine_cpu_ms_per_1000_put: Option<Spread>,
    /// The engine's CPU milliseconds per 1,000 URLs got and put back.
    pub engine_cpu_ms_per_1000_cycle: Option<Spread>,
}

/// squall's servers' medians over the reference's.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerRatios {
    /// The embedded frontier's server putting new URLs.
    pub embedded_put_to_reference: f64,
    /// The embedded frontier's server in the cycle.
    pub embedded_cycle_to_reference: f64,
    /// The queue frontier's server putting new URLs.
    pub queue_put_to_reference: f64,
    /// The queue frontier's server in the cycle.
    pub queue_cycle_to_reference: f64,
}

impl Frontier {
    /// The ratio of the file, else the one of the medians (`None` without both, or when the
    /// in-process median is not positive).
    pub fn ratio(&self) -> Option<f64> {
        self.ratio_api_to_in_process
            .filter(|r| r.is_finite())
            .or_else(|| {
                let (api, local) = (self.api?.median, self.in_process?.median);
                (local > 0.0).then(|| api / local)
            })
    }
}
