//! Typed input: the benchmark result JSON files, and reading them from a directory.
//!
//! Every field is optional so that a partial file still renders (missing values
//! show as "–"); unknown fields are ignored.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A measurement repeated over several runs: median, smallest and largest.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Spread {
    /// Median over the runs.
    pub median: f64,
    /// Smallest value over the runs.
    pub min: f64,
    /// Largest value over the runs.
    pub max: f64,
}

/// `machine.json`: what the benchmarks ran on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Machine {
    /// CPU model name.
    pub cpu: Option<String>,
    /// Number of CPU cores.
    pub cores: Option<u64>,
    /// Memory in GiB.
    pub memory_gib: Option<f64>,
    /// Operating system.
    pub os: Option<String>,
    /// `rustc --version` output.
    pub rustc: Option<String>,
    /// OpenSearch version.
    pub opensearch: Option<String>,
    /// OpenSearch JVM heap.
    pub heap: Option<String>,
    /// When the run happened.
    pub date: Option<String>,
    /// The command that ran the benchmarks.
    pub command: Option<String>,
    /// Whether this was a quick (small) run.
    pub quick: Option<bool>,
}

/// `spouts.json`: URLs emitted per second and query latency of each spout.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Spouts {
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
#[derive(Debug, Clone, Default, Deserialize)]
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
#[derive(Debug, Clone, Default, Deserialize)]
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
#[derive(Debug, Clone, Default, Deserialize)]
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SpoutSize {
    /// URLs in the status index.
    pub urls: u64,
    /// Distinct hosts in the status index.
    pub hosts: Option<u64>,
    /// URLs due for fetching.
    pub due_urls: Option<u64>,
    /// Seconds taken to load the index.
    pub load_seconds: Option<f64>,
    /// Per-shard document counts.
    pub shards: Option<ShardCounts>,
    /// One entry per spout.
    pub spouts: Vec<SpoutResult>,
}

/// Per-shard document counts of the two indices.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ShardCounts {
    /// The status index, routed by host.
    pub status_routed: Option<ShardSkew>,
    /// The urls index.
    pub urls: Option<ShardSkew>,
}

/// Document counts per shard of one index and their skew.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ShardSkew {
    /// Documents in each shard, by shard number.
    pub docs: Vec<u64>,
    /// Largest shard divided by the mean.
    pub skew: Option<f64>,
}

/// One spout's measurements at one index size.
#[derive(Debug, Clone, Default, Deserialize)]
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
}

/// `writer.json`: the status writer against raw `_bulk`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Writer {
    /// Documents written per run.
    pub documents: Option<u64>,
    /// Documents per bulk batch.
    pub batch: Option<u64>,
    /// The status writer's documents per second.
    pub writer_docs_per_second: Option<Spread>,
    /// Raw `_bulk` documents per second.
    pub bulk_docs_per_second: Option<Spread>,
    /// Writer median divided by bulk median.
    pub ratio_writer_to_bulk: Option<f64>,
}

/// `fetcher.json`: the fetcher against a plain load generator.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Fetcher {
    /// Concurrent connections.
    pub concurrency: Option<u64>,
    /// The fetcher's pages per second.
    pub fetcher_pages_per_second: Option<Spread>,
    /// The load generator's pages per second.
    pub load_generator_pages_per_second: Option<Spread>,
    /// Fetcher median divided by load generator median.
    pub ratio_fetcher_to_load_generator: Option<f64>,
    /// Requests per run (older results, which ran a fixed list of URLs).
    pub requests_per_run: Option<u64>,
    /// Seconds each run fed its client (newer results, which run for a fixed time).
    pub window_seconds: Option<f64>,
    /// Runs of each, alternating which goes first.
    pub runs: Option<u64>,
    /// The fetcher's largest figure over its smallest.
    pub spread_fetcher: Option<f64>,
    /// The largest per-run ratio over the smallest.
    pub ratio_spread: Option<f64>,
}

/// `parser.json`: the HTML parser against the bare tokenizer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Parser {
    /// Elements the bare tokenizer saw.
    pub elements_seen_by_tokenizer: Option<u64>,
    /// MiB of HTML parsed per run.
    pub mib: Option<f64>,
    /// Outlinks the parser found.
    pub outlinks_found_by_parser: Option<u64>,
    /// Pages parsed per run.
    pub pages: Option<u64>,
    /// The parser's MiB per second.
    pub parser_mib_per_second: Option<Spread>,
    /// Parser median divided by tokenizer median.
    pub ratio_parser_to_tokenizer: Option<f64>,
    /// The bare tokenizer's MiB per second.
    pub tokenizer_mib_per_second: Option<Spread>,
    /// Runs (each a window of time for each of the two).
    pub runs: Option<u64>,
    /// Seconds each of the two had per run.
    pub window_seconds: Option<f64>,
    /// The largest per-run ratio over the smallest.
    pub ratio_spread: Option<f64>,
}

/// `politeness.json`: crawl rate against the ideal for per-host delays.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Politeness {
    /// Per-host delay in seconds.
    pub delay_seconds: Option<f64>,
    /// Fetches made.
    pub fetches: Option<u64>,
    /// Hosts crawled.
    pub hosts: Option<u64>,
    /// Hosts divided by delay.
    pub ideal_pages_per_second: Option<f64>,
    /// Pages per second over the whole run.
    pub overall_pages_per_second: Option<f64>,
    /// Overall rate divided by the ideal.
    pub overall_ratio_to_ideal: Option<f64>,
    /// Fetches to one host that overlapped in time.
    pub overlapping_fetches: Option<u64>,
    /// Smallest gap between two fetches to one host, in seconds.
    pub smallest_gap_seconds: Option<f64>,
    /// Pages per second once every host is busy.
    pub steady_pages_per_second: Option<f64>,
    /// Steady rate divided by the ideal.
    pub steady_ratio_to_ideal: Option<f64>,
    /// A one-line summary written by the benchmark.
    pub summary: Option<String>,
}

/// `migration.json`: status index migration against `_reindex`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Migration {
    /// Documents migrated.
    pub documents: Option<u64>,
    /// Distinct queue keys.
    pub distinct_keys: Option<u64>,
    /// Whether the full run's result was verified.
    pub full_run_verified: Option<bool>,
    /// Seconds taken to load the source index.
    pub load_seconds: Option<f64>,
    /// The migration's documents per second.
    pub migration_docs_per_second: Option<f64>,
    /// Seconds the migration took.
    pub migration_seconds: Option<f64>,
    /// Migration rate divided by `_reindex` rate.
    pub ratio_migration_to_reindex: Option<f64>,
    /// `_reindex` documents per second.
    pub reindex_docs_per_second: Option<f64>,
    /// Seconds `_reindex` took.
    pub reindex_seconds: Option<f64>,
    /// Whether the interrupted and resumed run's result was verified.
    pub resumed_run_verified: Option<bool>,
}

/// Everything found in a results directory; `None` where the file does not exist.
#[derive(Debug, Clone, Default)]
pub struct Results {
    /// `machine.json`.
    pub machine: Option<Machine>,
    /// `spouts.json`.
    pub spouts: Option<Spouts>,
    /// `writer.json`.
    pub writer: Option<Writer>,
    /// `fetcher.json`.
    pub fetcher: Option<Fetcher>,
    /// `parser.json`.
    pub parser: Option<Parser>,
    /// `politeness.json`.
    pub politeness: Option<Politeness>,
    /// `migration.json`.
    pub migration: Option<Migration>,
    /// `one_host.json`.
    pub one_host: Option<crate::one_host::OneHost>,
    /// `shared_crawl.json`.
    pub shared_crawl: Option<crate::shared_crawl::SharedCrawl>,
    /// `scale_out.json`.
    pub scale_out: Option<crate::scale_out::ScaleOut>,
    /// `end_to_end.json`.
    pub end_to_end: Option<crate::end_to_end::EndToEnd>,
    /// `browser.json`.
    pub browser: Option<crate::browser::Browser>,
    /// `urlfrontier.json`.
    pub urlfrontier: Option<crate::urlfrontier::UrlFrontier>,
    /// `urlfrontier_servers.json`.
    pub urlfrontier_servers: Option<crate::urlfrontier_servers::UrlFrontierServers>,
}

impl Results {
    /// Reads every known result file that exists in `dir`.
    pub fn read_dir(dir: &Path) -> Result<Self> {
        Ok(Self {
            machine: read_optional(dir, "machine.json")?,
            spouts: read_optional(dir, "spouts.json")?,
            writer: read_optional(dir, "writer.json")?,
            fetcher: read_optional(dir, "fetcher.json")?,
            parser: read_optional(dir, "parser.json")?,
            politeness: read_optional(dir, "politeness.json")?,
            migration: read_optional(dir, "migration.json")?,
            one_host: read_optional(dir, "one_host.json")?,
            shared_crawl: read_optional(dir, "shared_crawl.json")?,
            scale_out: read_optional(dir, "scale_out.json")?,
            end_to_end: read_optional(dir, "end_to_end.json")?,
            browser: read_optional(dir, "browser.json")?,
            urlfrontier: read_optional(dir, "urlfrontier.json")?,
            urlfrontier_servers: read_optional(dir, "urlfrontier_servers.json")?,
        })
    }
}

/// Reads and parses `dir/name`, or returns `None` if it does not exist.
fn read_optional<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    parse(&text)
        .map(Some)
        .with_context(|| format!("parsing {}", path.display()))
}

/// Parses JSON text, naming the path of the offending field on error.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "?" || path == "." {
            anyhow::anyhow!("{}", e.into_inner())
        } else {
            anyhow::anyhow!("at field `{path}`: {}", e.into_inner())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names_the_field() {
        let err = parse::<Writer>(r#"{"writer_docs_per_second": {"median": "fast"}}"#)
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(err.contains("writer_docs_per_second.median"), "{err}");
    }

    #[test]
    fn missing_file_is_none_and_unknown_fields_are_ignored() -> Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("writer.json"),
            r#"{"extra": 1, "batch": 5}"#,
        )?;
        let results = Results::read_dir(dir.path())?;
        assert!(results.spouts.is_none());
        assert_eq!(results.writer.and_then(|w| w.batch), Some(5));
        Ok(())
    }

    #[test]
    fn bad_file_error_names_file() -> Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(
            dir.path().join("spouts.json"),
            r#"{"sizes": [{"urls": "x"}]}"#,
        )?;
        let err = Results::read_dir(dir.path())
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(err.contains("spouts.json"), "{err}");
        assert!(err.contains("sizes[0].urls"), "{err}");
        Ok(())
    }
}
