//! The files of the stage benchmarks: `writer.json`, `fetcher.json`, `parser.json`,
//! `politeness.json` and `migration.json`.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `writer.json`: the status writer against raw `_bulk`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Writer {
    /// The benchmark.
    #[serde(flatten)]
    pub run: Run,
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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Fetcher {
    /// The benchmark.
    #[serde(flatten)]
    pub run: Run,
    /// Seconds each run fed its client (newer results, which run for a fixed time).
    pub window_seconds: Option<f64>,
    /// Runs of each, alternating which goes first.
    pub runs: Option<u64>,
    /// Which went first in which run.
    pub order: Option<String>,
    /// Concurrent connections.
    pub concurrency: Option<u64>,
    /// Pages of the site fetched.
    pub site_pages: Option<u64>,
    /// The load generator's pages per second, run by run.
    pub load_generator_runs: Vec<f64>,
    /// The fetcher's pages per second, run by run.
    pub fetcher_runs: Vec<f64>,
    /// The load generator's pages per second.
    pub load_generator_pages_per_second: Option<Spread>,
    /// The fetcher's pages per second.
    pub fetcher_pages_per_second: Option<Spread>,
    /// The load generator's largest figure over its smallest.
    pub spread_load_generator: Option<f64>,
    /// The fetcher's largest figure over its smallest.
    pub spread_fetcher: Option<f64>,
    /// The fetcher over the load generator, run by run.
    pub ratio_runs: Vec<f64>,
    /// The largest per-run ratio over the smallest.
    pub ratio_spread: Option<f64>,
    /// Fetcher median divided by load generator median.
    pub ratio_fetcher_to_load_generator: Option<f64>,
    /// Requests per run (older results, which ran a fixed list of URLs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_run: Option<u64>,
}

/// `parser.json`: the HTML parser against the bare tokenizer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Parser {
    /// The benchmark.
    #[serde(flatten)]
    pub run: Run,
    /// Pages parsed per run.
    pub pages: Option<u64>,
    /// MiB of HTML parsed per run.
    pub mib: Option<f64>,
    /// Seconds each of the two had per run.
    pub window_seconds: Option<f64>,
    /// Runs (each a window of time for each of the two).
    pub runs: Option<u64>,
    /// Which went first in which run.
    pub order: Option<String>,
    /// The tokenizer's MiB per second, run by run.
    pub tokenizer_runs: Vec<f64>,
    /// The parser's MiB per second, run by run.
    pub parser_runs: Vec<f64>,
    /// The parser over the tokenizer, run by run.
    pub ratio_runs: Vec<f64>,
    /// The tokenizer's largest figure over its smallest.
    pub spread_tokenizer: Option<f64>,
    /// The parser's largest figure over its smallest.
    pub spread_parser: Option<f64>,
    /// The largest per-run ratio over the smallest.
    pub ratio_spread: Option<f64>,
    /// The bare tokenizer's MiB per second.
    pub tokenizer_mib_per_second: Option<Spread>,
    /// The parser's MiB per second.
    pub parser_mib_per_second: Option<Spread>,
    /// Parser median divided by tokenizer median.
    pub ratio_parser_to_tokenizer: Option<f64>,
    /// Elements the bare tokenizer saw.
    pub elements_seen_by_tokenizer: Option<u64>,
    /// Outlinks the parser found.
    pub outlinks_found_by_parser: Option<u64>,
}

/// `politeness.json`: crawl rate against the ideal for per-host delays.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Politeness {
    /// The benchmark.
    #[serde(flatten)]
    pub run: Run,
    /// Hosts crawled.
    pub hosts: Option<u64>,
    /// Fetches made.
    pub fetches: Option<u64>,
    /// Per-host delay in seconds.
    pub delay_seconds: Option<f64>,
    /// Fetches to one host that overlapped in time.
    pub overlapping_fetches: Option<u64>,
    /// Smallest gap between two fetches to one host, in seconds.
    pub smallest_gap_seconds: Option<f64>,
    /// Hosts divided by delay.
    pub ideal_pages_per_second: Option<f64>,
    /// Pages per second once every host is busy.
    pub steady_pages_per_second: Option<f64>,
    /// Steady rate divided by the ideal.
    pub steady_ratio_to_ideal: Option<f64>,
    /// Pages per second over the whole run.
    pub overall_pages_per_second: Option<f64>,
    /// Overall rate divided by the ideal.
    pub overall_ratio_to_ideal: Option<f64>,
    /// A one-line summary written by the benchmark.
    pub summary: Option<String>,
}

/// `migration.json`: status index migration against `_reindex`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Migration {
    /// The benchmark.
    #[serde(flatten)]
    pub run: Run,
    /// Documents migrated.
    pub documents: Option<u64>,
    /// Seconds taken to load the source index.
    pub load_seconds: Option<f64>,
    /// Seconds `_reindex` took.
    pub reindex_seconds: Option<f64>,
    /// `_reindex` documents per second.
    pub reindex_docs_per_second: Option<f64>,
    /// Seconds the migration took.
    pub migration_seconds: Option<f64>,
    /// The migration's documents per second.
    pub migration_docs_per_second: Option<f64>,
    /// Migration rate divided by `_reindex` rate.
    pub ratio_migration_to_reindex: Option<f64>,
    /// Distinct queue keys.
    pub distinct_keys: Option<u64>,
    /// Documents in the queues index.
    pub queue_docs: Option<u64>,
    /// Whether the full run's result was verified.
    pub full_run_verified: Option<bool>,
    /// Documents the interrupted run had migrated when it stopped.
    pub interrupted_after_documents: Option<u64>,
    /// Whether the interrupted run had completed anyway.
    pub interrupted_run_completed: Option<bool>,
    /// Documents the resumed run migrated itself.
    pub resumed_run_documents_this_run: Option<u64>,
    /// Whether the interrupted and resumed run's result was verified.
    pub resumed_run_verified: Option<bool>,
}
