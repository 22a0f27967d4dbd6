//! `one_host.json`: a crawl of one host on each frontier against the politeness limit 1 / delay.

pub use squall_bench_schema::one_host::{OneHost, OneHostCrawl};

use crate::format::{num, opt_spread, ratio, setting};
use crate::table::table;

/// The ratio to 1 / delay a one-host crawl must reach.
pub const AIM: f64 = 0.9;

/// "### One host": the rate of each frontier at each delay against 1 / delay.
pub fn section(one_host: Option<&OneHost>) -> String {
    let mut out = String::from("### One host\n\n");
    let Some(o) = one_host else {
        out.push_str("_Not run in this run_ (no `one_host.json`).\n");
        return out;
    };
    let mut about = Vec::new();
    if let Some(pages) = o.site_pages {
        about.push(format!("one host of {pages} pages, all injected"));
    }
    if let Some(budget) = o.budget_seconds {
        about.push(format!("{} s per crawl", setting(budget)));
    }
    if let Some(runs) = o.runs {
        about.push(format!("{runs} runs, median (min–max)"));
    }
    if let (Some(date), Some(commit)) = (&o.run.date, &o.run.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    if !about.is_empty() {
        out.push_str(&format!("{}.\n\n", about.join("; ")));
    }
    let rows: Vec<Vec<String>> = o.crawls.iter().map(row).collect();
    out.push_str(&table(
        &[
            "frontier",
            "delay",
            "pages/s",
            "ideal (1 / delay)",
            "ratio",
            "smallest gap",
            "aim",
        ],
        &rows,
    ));
    out
}

fn row(c: &OneHostCrawl) -> Vec<String> {
    let mut notes = Vec::new();
    if c.ratio_to_ideal.is_some_and(|r| r < AIM) {
        notes.push("below aim");
    }
    if let (Some(gap), Some(delay)) = (c.smallest_gap_seconds, c.delay_seconds)
        && gap < delay
    {
        notes.push("gap below delay");
    }
    if c.overlapping_fetches.is_some_and(|n| n > 0) {
        notes.push("overlapping fetches");
    }
    let mut ratio_cell = ratio(c.ratio_to_ideal);
    if !notes.is_empty() {
        ratio_cell.push_str(&format!(" ({})", notes.join(", ")));
    }
    vec![
        c.frontier.clone(),
        c.delay_seconds
            .map_or_else(String::new, |d| format!("{} s", setting(d))),
        opt_spread(c.pages_per_second.as_ref()),
        c.ideal_pages_per_second.map_or_else(String::new, num),
        ratio_cell,
        c.smallest_gap_seconds
            .map_or_else(String::new, |g| format!("{g:.4} s")),
        format!("≥ {}, gap ≥ delay", setting(AIM)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_mark_a_missed_aim_and_a_short_gap() {
        let o: OneHost = serde_json::from_str(
            r#"{"budget_seconds":30,"runs":2,"site_pages":2300,"commit":"abc1234","date":"2026-11-30",
            "crawls":[
             {"frontier":"embedded","delay_seconds":0.1,"ideal_pages_per_second":10,
              "pages_per_second":{"median":9.5,"min":9.4,"max":9.6},"ratio_to_ideal":0.95,
              "smallest_gap_seconds":0.1004,"overlapping_fetches":0},
             {"frontier":"queue","delay_seconds":0.02,"ideal_pages_per_second":50,
              "pages_per_second":{"median":30,"min":29,"max":31},"ratio_to_ideal":0.6,
              "smallest_gap_seconds":0.019,"overlapping_fetches":0}]}"#,
        )
        .expect("JSON");
        let md = section(Some(&o));
        assert!(md.contains("run of 2026-11-30 at commit abc1234"), "{md}");
        assert!(md.contains("| embedded | 0.1 s |"), "{md}");
        assert!(md.contains("(below aim, gap below delay)"), "{md}");
        assert!(!md.lines().nth(6).unwrap_or("").contains("below"), "{md}");
        assert!(section(None).contains("no `one_host.json`"));
    }
}
