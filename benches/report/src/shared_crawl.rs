//! `shared_crawl.json`: crawler processes sharing one queue frontier, against the politeness limit
//! hosts / delay.

pub use squall_bench_schema::shared_crawl::{SharedCrawl, SharedRun};

use crate::format::{NONE, count, num, opt_spread, ratio, setting, thousands};
use crate::table::table;

/// The share of the politeness limit the processes must reach together.
pub const AIM_RATE: f64 = 0.8;
/// The share of the pages each process must fetch at least.
pub const AIM_SHARE: f64 = 0.2;

/// "60 pages/s (6 hosts / 0.1 s)".
pub fn ideal_text(s: &SharedCrawl) -> String {
    let mut text = format!(
        "{} pages/s",
        s.ideal_pages_per_second
            .map_or_else(|| NONE.to_string(), setting)
    );
    if let (Some(h), Some(d)) = (s.hosts, s.delay_seconds) {
        text.push_str(&format!(" ({h} hosts / {} s)", setting(d)));
    }
    text
}

/// "0.98 / 0.02 / 0.00".
pub fn shares_text(run: &SharedRun) -> String {
    run.processes
        .iter()
        .map(|p| ratio(p.share))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// "### Shared crawl": every run, and the rate against hosts / delay.
pub fn section(shared: Option<&SharedCrawl>) -> String {
    let mut out = String::from("### Shared crawl\n\n");
    let Some(s) = shared else {
        out.push_str("_Not run in this run_ (no `shared_crawl.json`).\n");
        return out;
    };
    let mut about = Vec::new();
    if let Some(p) = s.processes {
        about.push(format!("{p} crawl processes on one queue frontier"));
    }
    if let (Some(h), Some(pages)) = (s.hosts, s.pages_per_host) {
        let urls = s
            .site_urls
            .map(|u| format!(", {} URLs in all", thousands(u)))
            .unwrap_or_default();
        about.push(format!("{h} hosts of {pages} pages{urls}"));
    }
    about.push(format!("ideal {}", ideal_text(s)));
    if let Some(runs) = s.runs {
        about.push(count(runs, "run"));
    }
    if let (Some(date), Some(commit)) = (&s.run.date, &s.run.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    out.push_str(&format!("{}.\n\n", about.join("; ")));
    let rows: Vec<Vec<String>> = s
        .crawls
        .iter()
        .enumerate()
        .map(|(i, run)| row(i, run))
        .collect();
    out.push_str(&table(
        &[
            "run",
            "pages",
            "pages/s",
            "÷ ideal",
            "share of each process",
            "hosts per process",
            "overlaps between processes",
            "never fetched / fetched twice",
            "how each process ended",
        ],
        &rows,
    ));
    if s.crawls.len() > 1 {
        out.push_str(&format!(
            "\nOver the runs: {} pages/s (median, min–max), {} of the ideal.\n",
            opt_spread(s.pages_per_second.as_ref()),
            ratio(s.ratio_to_ideal)
        ));
    }
    out
}

fn row(i: usize, run: &SharedRun) -> Vec<String> {
    let number = |n: Option<u64>| n.map_or_else(|| NONE.to_string(), thousands);
    let mut ratio_cell = ratio(run.ratio_to_ideal);
    if run.ratio_to_ideal.is_some_and(|r| r < AIM_RATE) {
        ratio_cell.push_str(" (below aim)");
    }
    let hosts = run
        .processes
        .iter()
        .map(|p| number(p.hosts))
        .collect::<Vec<_>>()
        .join(" / ");
    let ended = run
        .processes
        .iter()
        .map(|p| {
            let how = if p.stopped_by_benchmark == Some(true) {
                "stopped by the benchmark".to_string()
            } else {
                p.stop.clone().unwrap_or_else(|| "no summary".to_string())
            };
            match p.exited_seconds {
                Some(t) => format!("{how} after {} s", num(t)),
                None => how,
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    vec![
        (i + 1).to_string(),
        number(run.fetches),
        run.pages_per_second.map_or_else(|| NONE.to_string(), num),
        ratio_cell,
        shares_text(run),
        hosts,
        number(run.cross_process_overlaps),
        format!(
            "{} / {}",
            number(run.missing_urls),
            number(run.fetched_more_than_once)
        ),
        ended,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"processes":3,"hosts":6,"pages_per_host":400,"site_urls":2430,
      "delay_seconds":0.1,"ideal_pages_per_second":60,"runs":2,"commit":"abc1234","date":"2026-12-01",
      "crawls":[
       {"fetches":2430,"seconds":120.5,"pages_per_second":20.2,"ratio_to_ideal":0.336,
        "processes":[{"fetches":2430,"share":1.0,"hosts":6,"stop":"Idle","exited_seconds":130},
                     {"fetches":0,"share":0.0,"hosts":0,"stop":"Idle","exited_seconds":70},
                     {"fetches":0,"share":0.0,"hosts":0,"stopped_by_benchmark":true,"exited_seconds":200}],
        "cross_process_overlaps":0,"missing_urls":0,"fetched_more_than_once":0},
       {"fetches":2430,"seconds":45,"pages_per_second":54,"ratio_to_ideal":0.9,
        "processes":[{"fetches":810,"share":0.333,"hosts":2,"stop":"Idle"},
                     {"fetches":800,"share":0.329,"hosts":2,"stop":"Idle"},
                     {"fetches":820,"share":0.337,"hosts":2,"stop":"Idle"}],
        "cross_process_overlaps":0,"missing_urls":0,"fetched_more_than_once":0}],
      "pages_per_second":{"median":37.1,"min":20.2,"max":54},"ratio_to_ideal":0.618,"smallest_share":0.0}"#;

    #[test]
    fn rows_show_shares_and_how_processes_ended() {
        let s: SharedCrawl = serde_json::from_str(SAMPLE).expect("JSON");
        let md = section(Some(&s));
        assert!(
            md.contains("3 crawl processes on one queue frontier"),
            "{md}"
        );
        assert!(md.contains("ideal 60 pages/s (6 hosts / 0.1 s)"), "{md}");
        assert!(
            md.contains("| 1 | 2,430 | 20.2 | 0.34 (below aim) | 1.00 / 0.00 / 0.00 | 6 / 0 / 0 | 0 | 0 / 0 |"),
            "{md}"
        );
        assert!(md.contains("stopped by the benchmark after 200 s"), "{md}");
        assert!(
            md.contains("| 2 | 2,430 | 54.0 | 0.90 | 0.33 / 0.33 / 0.34 |"),
            "{md}"
        );
        assert!(
            md.contains("Over the runs: 37.1 (20.2–54.0) pages/s"),
            "{md}"
        );
        let (i, _, share) = s.least_shared_run().expect("a run");
        assert_eq!((i, share), (0, 0.0));
        assert!(section(None).contains("no `shared_crawl.json`"));
    }
}
