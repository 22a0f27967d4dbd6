//! `live_view.json`: what the status page costs a crawl at the demo's rate, against a crawl without
//! the live view, and the live view's memory as events pile up.

pub use squall_bench_schema::live_view::{LiveView, LiveViewArm, LiveViewMemory, MeanInterval};

use crate::format::{opt_spread, setting, thousands};
use crate::table::table;

/// The share of the crawler's CPU the page may cost.
pub const AIM: f64 = 0.02;

/// "### Live view": the two arms, the page's cost, and the memory after more and more events.
pub fn section(live: Option<&LiveView>) -> String {
    let mut out = String::from("### Live view\n\n");
    let Some(l) = live else {
        out.push_str("_Not run in this run_ (no `live_view.json`).\n");
        return out;
    };
    let mut about = Vec::new();
    if let (Some(hosts), Some(delay)) = (l.hosts, l.delay_seconds) {
        about.push(format!(
            "the demo site ({hosts} hosts, {} s delay)",
            setting(delay)
        ));
    }
    if let Some(budget) = l.budget_seconds {
        about.push(format!("{} s per crawl", setting(budget)));
    }
    if let Some(runs) = l.runs {
        let how = match (l.concurrent, l.copies) {
            (Some(true), Some(copies)) if copies > 1 => {
                format!("every arm {copies} times over in a round, all crawling at the same time")
            }
            (Some(true), _) => "the arms of a round crawling at the same time".to_string(),
            _ => "the arms taking turns".to_string(),
        };
        about.push(format!("{runs} rounds, {how}, median (min–max)"));
    }
    if let (Some(date), Some(commit)) = (&l.run.date, &l.run.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    if !about.is_empty() {
        out.push_str(&format!("{}.\n\n", about.join("; ")));
    }
    let rows: Vec<Vec<String>> = l.arms.iter().map(arm_row).collect();
    out.push_str(&table(
        &["crawl", "pages/s", "CPU ms per page", "CPU (cores)"],
        &rows,
    ));
    if let Some(overhead) = &l.cpu_overhead {
        let verdict = match &l.cpu_overhead_mean {
            Some(mean) => interval_verdict(mean),
            None => verdict(overhead),
        };
        out.push_str(&format!(
            "\nThe page's cost (open, its default refresh), CPU per page over the baseline's: {}{}; \
             aim < {} %: {verdict}.\n",
            percent(overhead),
            mean_text(l.cpu_overhead_mean.as_ref()),
            setting(AIM * 100.0)
        ));
    }
    if let Some(overhead) = &l.cpu_overhead_every_second {
        out.push_str(&format!(
            "With `?refresh=1` (every second): {}{}.\n",
            percent(overhead),
            mean_text(l.cpu_overhead_every_second_mean.as_ref())
        ));
    }
    if let (Some(micros), Some(bytes)) = (l.document_micros, l.document_bytes) {
        out.push_str(&format!(
            "A fresh status document (25 hosts, 2,000 pages fetched) takes {micros:.0} µs to make \
             and write as JSON ({} bytes): the median of documents each made after the last \
             went stale.\n",
            thousands(bytes)
        ));
    }
    if !l.memory.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = l.memory.iter().map(memory_row).collect();
        out.push_str(&table(&["events", "hosts seen", "live view's heap"], &rows));
    }
    out
}

/// Whether the rounds show the page under the aim: a median under it counts only when the rounds
/// spread less than twice the aim (a wider spread cannot tell the aim apart from nothing).
fn verdict(overhead: &squall_bench_schema::Spread) -> &'static str {
    if overhead.max < AIM {
        "met in every round"
    } else if overhead.median >= AIM {
        "missed"
    } else if overhead.max - overhead.min <= 2.0 * AIM {
        "met"
    } else {
        "not shown (the median is under the aim, but the rounds spread wider than twice the aim: \
         this run cannot tell the aim apart from no cost at all)"
    }
}

/// Whether the mean's 95 % interval lies under the aim, over it, or across it.
fn interval_verdict(mean: &MeanInterval) -> &'static str {
    if mean.upper() < AIM {
        "met (the mean's 95 % interval lies under the aim)"
    } else if mean.mean - mean.ci95 >= AIM {
        "missed (the mean's 95 % interval lies over the aim)"
    } else {
        "not shown (the mean's 95 % interval reaches over the aim)"
    }
}

/// "; mean +1.20 % ± 0.80 % (95 %, 40 pairs)", or nothing.
fn mean_text(mean: Option<&MeanInterval>) -> String {
    mean.map_or(String::new(), |m| {
        format!(
            "; mean {:+.2} % ± {:.2} % (95 %, {} pairs)",
            m.mean * 100.0,
            m.ci95 * 100.0,
            m.n
        )
    })
}

/// "+1.10 % (min +0.40 %, max +1.90 %)".
fn percent(s: &squall_bench_schema::Spread) -> String {
    format!(
        "{:+.2} % (min {:+.2} %, max {:+.2} %)",
        s.median * 100.0,
        s.min * 100.0,
        s.max * 100.0
    )
}

fn arm_row(a: &LiveViewArm) -> Vec<String> {
    vec![
        a.arm.clone(),
        opt_spread(a.pages_per_second.as_ref()),
        opt_spread(a.cpu_ms_per_page.as_ref()),
        opt_spread(a.cpu_cores.as_ref()),
    ]
}

fn memory_row(m: &LiveViewMemory) -> Vec<String> {
    vec![
        thousands(m.events),
        thousands(m.hosts),
        format!("{:.2} MiB", m.bytes as f64 / (1024.0 * 1024.0)),
    ]
}

#[cfg(test)]
mod verdict_tests {
    use super::*;
    use squall_bench_schema::Spread;

    #[test]
    fn a_median_under_the_aim_counts_only_when_the_rounds_are_close() {
        let spread = |median, min, max| Spread { median, min, max };
        assert_eq!(verdict(&spread(0.01, 0.0, 0.015)), "met in every round");
        assert_eq!(verdict(&spread(0.01, -0.01, 0.025)), "met");
        assert!(verdict(&spread(0.014, -0.098, 0.142)).starts_with("not shown"));
        assert_eq!(verdict(&spread(0.023, 0.01, 0.04)), "missed");
    }

    #[test]
    fn the_mean_counts_by_where_its_interval_lies() {
        let interval = |mean, ci95| MeanInterval { mean, ci95, n: 40 };
        assert!(interval_verdict(&interval(0.008, 0.01)).starts_with("met"));
        assert!(interval_verdict(&interval(0.015, 0.01)).starts_with("not shown"));
        assert!(interval_verdict(&interval(0.04, 0.01)).starts_with("missed"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_gives_the_cost_against_the_aim_and_the_memory() {
        let l: LiveView = serde_json::from_str(
            r#"{"budget_seconds":60,"runs":3,"hosts":25,"delay_seconds":1,"commit":"abc1234","date":"2026-12-05",
            "arms":[{"arm":"baseline (no live view)","pages_per_second":{"median":24.9,"min":24.8,"max":25},
                     "cpu_ms_per_page":{"median":0.4,"min":0.39,"max":0.41},"cpu_cores":{"median":0.01,"min":0.01,"max":0.01}}],
            "cpu_overhead":{"median":0.011,"min":0.004,"max":0.019},
            "memory":[{"events":1000000,"hosts":1000000,"bytes":1048576}]}"#,
        )
        .expect("JSON");
        let md = section(Some(&l));
        assert!(md.contains("+1.10 %"), "{md}");
        assert!(md.contains("aim < 2 %: met"), "{md}");
        assert!(md.contains("1.00 MiB"), "{md}");
        assert!(section(None).contains("no `live_view.json`"));
    }
}
