//! `scale_out.json`: 1, 2 and 4 crawler processes sharing one queue frontier in a three-node
//! cluster, against a linear scale-out.

pub use squall_bench_schema::scale_out::ScaleOut;

use crate::format::{NONE, num, opt_spread, ratio, setting};
use crate::table::table;

/// The ratio to linear two processes must reach.
pub const AIM_TWO: f64 = 0.9;

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
    if let (Some(date), Some(commit)) = (&s.run.date, &s.run.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    if !about.is_empty() {
        out.push_str(&format!("{}.\n\n", about.join("; ")));
    }
    let rows: Vec<Vec<String>> = s
        .counts
        .iter()
        .map(|c| {
            let (crawlers, engine, busy, overlaps) = s.cpu_medians(c.processes);
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
