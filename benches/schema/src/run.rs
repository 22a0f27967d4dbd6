//! Which run a file comes from.

use serde::{Deserialize, Serialize};

/// Which run a file comes from: the benchmark, the commit measured and when (each file carries
/// what its benchmark writes of these; older files may lack any).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Run {
    /// The benchmark's name (`one_host`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<String>,
    /// The commit measured (`SQUALL_BENCH_COMMIT`, which `scripts/bench` sets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// When the benchmark ran (UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

impl Run {
    /// A run of `benchmark` that names neither commit nor date.
    pub fn named(benchmark: &str) -> Run {
        Run {
            benchmark: Some(benchmark.to_string()),
            ..Run::default()
        }
    }

    /// A run of `benchmark` at the commit `scripts/bench` names (`SQUALL_BENCH_COMMIT`).
    pub fn at_commit(benchmark: &str) -> Run {
        Run {
            commit: std::env::var("SQUALL_BENCH_COMMIT").ok(),
            ..Run::named(benchmark)
        }
    }

    /// A run of `benchmark` now, at the commit `scripts/bench` names.
    pub fn now(benchmark: &str) -> Run {
        Run {
            date: Some(chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string()),
            ..Run::at_commit(benchmark)
        }
    }
}
