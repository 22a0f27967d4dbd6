//! `machine.json`: what the benchmarks ran on, written by `scripts/bench` before they run.

use serde::{Deserialize, Serialize};

/// `machine.json`: what the benchmarks ran on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
