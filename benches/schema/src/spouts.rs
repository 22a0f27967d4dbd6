//! `spouts.json`: URLs emitted per second and query latency of each spout at each frontier size.

use serde::{Deserialize, Serialize};

use crate::end_to_end::EngineWork;
use crate::{Run, Spread};

/// `spouts.json`: URLs emitted per second and query latency of each spout.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Spouts {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Length of one measuring window in seconds.
    pub window_seconds: Option<f64>,
    /// Number of runs per spout and size.
    pub runs: Option<u64>,
    /// The order of the spouts in each run.
    pub order: Option<RunOrder>,
    /// Number of shards of the status index.
    pub shards: Option<u64>,
    /// Settings of the runner that drove the spouts.
    pub runner: Option<Runner>,
    /// How much each spout query asks for.
    pub query_budget: Option<QueryBudget>,
    /// One entry per index size.
    pub sizes: Vec<SpoutSize>,
    /// The "all due" case: a frontier of its own, every URL due.
    pub all_due: Option<SpoutSize>,
}

/// The order in which the spouts took turns.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOrder {
    /// How the order changes from run to run, in words.
    pub scheme: Option<String>,
    /// Whether every spout's mean position over the runs is the same.
    pub balanced: Option<bool>,
    /// The spouts' names in the order they ran, one list per run.
    pub runs: Vec<Vec<String>>,
}

/// Settings of the runner that drove the spouts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Runner {
    /// Minimum delay between fetches to one host, in milliseconds.
    pub min_delay_ms: Option<f64>,
    /// Maximum number of URLs emitted and not yet acked.
    pub max_pending: Option<u64>,
    /// How long an emitted URL stays out of the spout's results, in seconds.
    pub purgatory_seconds: Option<f64>,
}

/// How much each spout query asks for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct QueryBudget {
    /// Hosts per query.
    pub hosts_per_query: Option<u64>,
    /// URLs per host.
    pub urls_per_host: Option<u64>,
    /// Queues the queue spout holds at once.
    pub queues_held: Option<u64>,
    /// Queues the queue spout claims per query at most.
    pub claims_per_query: Option<u64>,
    /// Queues held by the extra queue row (outside the equal budget).
    pub extra_queues_held: Option<u64>,
}

/// The spout measurements at one index size.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SpoutSize {
    /// URLs in the status index.
    pub urls: u64,
    /// Distinct hosts in the status index.
    pub hosts: Option<u64>,
    /// Hosts with a queue document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts_present: Option<u64>,
    /// URLs due for fetching.
    pub due_urls: Option<u64>,
    /// Seconds taken to load the index.
    pub load_seconds: Option<f64>,
    /// Per-shard document counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardCounts>,
    /// The ceiling: documents per second of a raw `_bulk` into the same urls index, measured
    /// before and after the spouts' windows.
    pub raw_bulk_docs_per_second: Option<Spread>,
    /// When the frontier's due dates were generated: its first load, perhaps in an earlier run
    /// (a kept frontier; then `load_seconds` is absent).
    pub frontier_epoch: Option<String>,
    /// One entry per spout.
    pub spouts: Vec<SpoutResult>,
}

/// Per-shard document counts of the two indices.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardCounts {
    /// The status index, routed by host.
    pub status_routed: Option<ShardSkew>,
    /// The urls index.
    pub urls: Option<ShardSkew>,
}

/// Document counts per shard of one index and their skew.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ShardSkew {
    /// Documents in each shard, by shard number.
    pub docs: Vec<u64>,
    /// Largest shard divided by the mean.
    pub skew: Option<f64>,
}

/// One spout's measurements at one index size.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SpoutResult {
    /// The spout's name, e.g. "aggregation".
    pub spout: String,
    /// The row's label, e.g. "queue (1000 held)"; the name when absent.
    pub label: Option<String>,
    /// Whether the spout ran at the equal budget of the headline (absent: yes).
    pub equal_budget: Option<bool>,
    /// Queues held, for the queue spouts.
    pub queues_held: Option<u64>,
    /// URLs emitted per second.
    pub urls_per_second: Option<Spread>,
    /// Median query latency in milliseconds.
    pub query_ms_p50: Option<Spread>,
    /// 99th percentile query latency in milliseconds.
    pub query_ms_p99: Option<Spread>,
    /// Seconds until the first URL was emitted.
    pub first_url_seconds: Option<Spread>,
    /// Distinct hosts among each 1,000 URLs emitted.
    pub hosts_per_1000_urls: Option<Spread>,
    /// Seconds until a URL of a newly added host was emitted.
    pub new_host_seconds: Option<Spread>,
    /// Trials in which the new host's URL was not emitted.
    pub new_host_missed: Option<u64>,
    /// Trials of the new host measurement.
    pub new_host_trials: Option<u64>,
    /// Number of queries the spout made.
    pub queries: Option<u64>,
    /// URLs emitted over all its windows.
    pub urls: Option<u64>,
    /// What the engine did over its windows, per URL emitted and written back (the `page`
    /// fields of [`EngineWork`] count URLs here).
    pub engine: Option<EngineWork>,
    /// Where the round trip's time went, per URL emitted.
    pub stages: Vec<StageTime>,
}

/// The time one stage of a spout's round trip took over its windows.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StageTime {
    /// The stage: `query` (the spout's whole query, as the runner waits on it), the queue
    /// spout's own stages (`listing`, `claiming`, `claim_round`, `reading`, `handing_out`,
    /// `releasing`), `runner` (the window's time outside queries) or `write_back` (the
    /// immediate-ack fetcher's writes, alongside the queries).
    pub stage: String,
    /// Times it was gone through (requests, for a request stage).
    pub rounds: u64,
    /// Items it carried (queues, URLs: see the stage).
    pub items: u64,
    /// Milliseconds in all.
    pub ms: f64,
    /// Milliseconds per URL emitted.
    pub ms_per_url: Option<f64>,
}
