//! `scale_out.json`: 1, 2 and 4 crawler processes sharing one queue frontier in a three-node
//! cluster, against a linear scale-out.

use serde::{Deserialize, Serialize};

use crate::{Run, Spread};

/// `scale_out.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ScaleOut {
    /// The run.
    #[serde(flatten)]
    pub run: Run,
    /// Nodes of the cluster.
    pub cluster_nodes: Option<u64>,
    /// Host names of the site.
    pub hosts: Option<u64>,
    /// Pages of each host.
    pub pages_per_host: Option<u64>,
    /// The per-host delay.
    pub delay_seconds: Option<f64>,
    /// Queues one process holds at most.
    pub max_queues_per_process: Option<u64>,
    /// Repetitions per process count.
    pub runs: Option<u64>,
    /// Warm-up before each measured window.
    pub warmup_seconds: Option<f64>,
    /// The measured window.
    pub window_seconds: Option<f64>,
    /// How the processes ran.
    pub settings: Option<String>,
    /// One entry per process count.
    pub counts: Vec<ScaleCount>,
    /// Every run, in the order run.
    pub crawls: Vec<ScaleRun>,
}

/// The runs of one process count.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ScaleCount {
    /// Crawler processes.
    pub processes: u64,
    /// Pages per second over the runs.
    pub pages_per_second: Option<Spread>,
    /// The median over `processes` times the single-process median.
    pub ratio_to_linear: Option<f64>,
    /// What politeness allows these processes.
    pub ceiling_pages_per_second: Option<f64>,
}

/// One run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ScaleRun {
    /// Crawler processes.
    pub processes: u64,
    /// Its place in the order of runs.
    pub order: Option<u64>,
    /// The measured window.
    pub window_seconds: Option<f64>,
    /// Pages fetched in the window.
    pub pages_in_window: Option<u64>,
    /// Pages per second in the window.
    pub pages_per_second: Option<f64>,
    /// What politeness allows these processes.
    pub ceiling_pages_per_second: Option<f64>,
    /// Fetches each process logged by the end of the window.
    pub fetches_per_process: Vec<u64>,
    /// CPU cores the crawler processes used.
    pub crawler_cpu_cores: Option<f64>,
    /// CPU cores the engine nodes used (`None`: the nodes were not found).
    pub engine_cpu_cores: Option<f64>,
    /// Share of the machine's CPU time busy.
    pub machine_busy: Option<f64>,
    /// Fetches of one host by two processes at once.
    pub cross_process_overlaps: Option<u64>,
}

impl ScaleOut {
    /// Medians over the runs of `processes`: crawler cores, engine cores, machine busy share, and
    /// the overlaps summed.
    pub fn cpu_medians(&self, processes: u64) -> (Option<f64>, Option<f64>, Option<f64>, u64) {
        let runs: Vec<&ScaleRun> = self
            .crawls
            .iter()
            .filter(|r| r.processes == processes)
            .collect();
        let median = |pick: fn(&ScaleRun) -> Option<f64>| {
            let mut values: Vec<f64> = runs.iter().filter_map(|r| pick(r)).collect();
            values.sort_by(f64::total_cmp);
            match values.len() {
                0 => None,
                n if n % 2 == 1 => Some(values[n / 2]),
                n => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
            }
        };
        (
            median(|r| r.crawler_cpu_cores),
            median(|r| r.engine_cpu_cores),
            median(|r| r.machine_busy),
            runs.iter().filter_map(|r| r.cross_process_overlaps).sum(),
        )
    }

    /// The two-process ratio to linear, if measured.
    pub fn two_process_ratio(&self) -> Option<f64> {
        self.counts
            .iter()
            .find(|c| c.processes == 2)
            .and_then(|c| c.ratio_to_linear)
    }
}
