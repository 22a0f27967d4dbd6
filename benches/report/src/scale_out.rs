//! `scale_out.json`: 1, 2 and 4 crawler processes sharing one queue frontier in a three-node
//! cluster, against a linear scale-out.

use serde::Deserialize;

use crate::format::{NONE, num, opt_spread, ratio, setting};
use crate::input::Spread;
use crate::table::table;

/// The ratio to linear two processes must reach.
pub const AIM_TWO: f64 = 0.9;

/// `scale_out.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ScaleOut {
    /// Nodes of the cluster.
    pub cluster_nodes: Option<u64>,
    /// Host names of the site.
    pub hosts: Option<u64>,
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
    /// The commit measured.
    pub commit: Option<String>,
    /// When the benchmark ran.
    pub date: Option<String>,
    /// One entry per process count.
    pub counts: Vec<ScaleCount>,
    /// Every run, in the order run.
    pub crawls: Vec<ScaleRun>,
}

/// The runs of one process count.
#[derive(Debug, Clone, Default, Deserialize)]
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ScaleRun {
    /// Crawler processes.
    pub processes: u64,
    /// Pages per second in the window.
    pub pages_per_second: Option<f64>,
    /// CPU cores the crawler processes used.
    pub crawler_cpu_cores: Option<f64>,
    /// CPU cores the engine nodes used.
    pub engine_cpu_cores: Option<f64>,
    /// Share of the machine's CPU time busy.
    pub machine_busy: Option<f64>,
    /// Fetches of one host by two processes at once.
    pub cross_process_overlaps: Option<u64>,
}

impl ScaleOut {
    /// Medians over the runs of `processes`: crawler cores, engine cores, machine busy share, and
    /// the overlaps summed.
    fn cpu(&self, processes: u64) -> (Option<f64>, Option<f64>, Option<f64>, u64) {
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

/// "### Scale-out": pages/s per process count, the ratio to linear, and where the CPU went.
pub fn section(scale: Option<&ScaleOut>) -> String {
    let mut out = String::from("### Scale-out on a three-node cluster\n\n");
    let Some(s) = scale else {
        out.push_str("_Not run in this run_ (no `scale_out.json`).\n");
        return out;
    };
    let mut about = Vec::new();
    if let (Some(nodes), Some(hosts)) = (s.cluster_nodes, s.hosts) {
        about.push(format!(
            "{nodes} engine nodes (one replica per shard), a site of {} host names",
            setting(hosts as f64)
        ));
    }
    if let (Some(queues), Some(delay)) = (s.max_queues_per_process, s.delay_seconds) {
        about.push(format!(
            "each process holds at most {queues} queues at a {} s delay (ceiling {} pages/s per process)",
            setting(delay),
            num(queues as f64 / delay)
        ));
    }
    if let (Some(w), Some(m), Some(r)) = (s.warmup_seconds, s.window_seconds, s.runs) {
        about.push(format!(
            "{} s warm-up then {} s measured per run, {r} run(s) per count in mirrored order",
            setting(w),
            setting(m)
        ));
    }
    if let (Some(date), Some(commit)) = (&s.date, &s.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    if !about.is_empty() {
        out.push_str(&format!("{}.\n\n", about.join("; ")));
    }
    let rows: Vec<Vec<String>> = s
        .counts
        .iter()
        .map(|c| {
            let (crawlers, engine, busy, overlaps) = s.cpu(c.processes);
            vec![
                c.processes.to_string(),
                opt_spread(c.pages_per_second.as_ref()),
                c.ceiling_pages_per_second
                    .map_or_else(|| NONE.to_string(), num),
                ratio(c.ratio_to_linear),
                crawlers.map_or_else(|| NONE.to_string(), |v| format!("{v:.2}")),
                engine.map_or_else(|| NONE.to_string(), |v| format!("{v:.2}")),
                busy.map_or_else(|| NONE.to_string(), |v| format!("{:.0}%", v * 100.0)),
                overlaps.to_string(),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "processes",
            "pages/s",
            "politeness ceiling",
            "ratio to linear",
            "crawler CPU (cores)",
            "engine CPU (cores)",
            "machine busy",
            "host fetched by two at once",
        ],
        &rows,
    ));
    let verdict = match s.two_process_ratio() {
        Some(r) if r >= AIM_TWO => format!("met ({})", ratio(Some(r))),
        Some(r) => format!("**missed** ({})", ratio(Some(r))),
        None => "not measured".to_string(),
    };
    out.push_str(&format!(
        "\nTwo processes against twice one (aim ≥ {}): {verdict}.\n",
        setting(AIM_TWO)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_shows_each_count_and_the_verdict() {
        let json = r#"{"cluster_nodes":3,"hosts":1000,"delay_seconds":2.0,"max_queues_per_process":50,
            "runs":2,"warmup_seconds":20,"window_seconds":90,"commit":"abc","date":"today",
            "counts":[{"processes":1,"pages_per_second":{"median":24,"min":23,"max":25},"ratio_to_linear":1.0,"ceiling_pages_per_second":25},
                      {"processes":2,"pages_per_second":{"median":44,"min":43,"max":45},"ratio_to_linear":0.917,"ceiling_pages_per_second":50}],
            "crawls":[{"processes":1,"crawler_cpu_cores":0.1,"engine_cpu_cores":0.5,"machine_busy":0.3,"cross_process_overlaps":0},
                      {"processes":2,"crawler_cpu_cores":0.2,"engine_cpu_cores":0.9,"machine_busy":0.6,"cross_process_overlaps":0}]}"#;
        let s: ScaleOut = serde_json::from_str(json).expect("parse");
        let md = section(Some(&s));
        assert!(md.contains("| 2 | 44"), "{md}");
        assert!(md.contains("met (0.92)"), "{md}");
        assert!(section(None).contains("no `scale_out.json`"));
    }
}
