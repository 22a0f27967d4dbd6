//! `as_given.json`: crawls as a user starts them (a StormCrawler user's files, flux included, and
//! no configuration at all), each run to the end of its site; issue 43's aims on many hosts and
//! issue 60's on few. Until the as-given benchmark has run on its own, the rows an older
//! `end_to_end.json` kept are shown, said to be from it.

pub use squall_bench_schema::as_given::{AsGiven, AsGivenResult, Row};
use squall_bench_schema::end_to_end::EndToEnd;

use crate::format::{NONE, num, opt_spread, setting, thousands};
use crate::input::Spread;
use crate::table::table;

/// StormCrawler 3.4.0 on the archetype's files, same site, 1 s delay (issue 43's table, run by
/// hand): pages/s while steady.
pub const STORMCRAWLER_PAGES_PER_SECOND: f64 = 152.0;

/// The files' own spout budget: 10 instances × 50 buckets × 2 URLs every 2 s.
pub const FILES_BUDGET_PAGES_PER_SECOND: f64 = 500.0;

/// Issue 60: the hybrid spout's whole-site time over the aggregation spout's, on few hosts, at most.
pub const AIM_HYBRID_TO_AGGREGATION: f64 = 2.0;

fn median(s: Option<&Spread>) -> Option<f64> {
    s.map(|s| s.median)
}

/// "### As a user starts them": the many-host table and issue 43's verdicts, then the few-host
/// table and issue 60's.
pub fn section(result: Option<&AsGivenResult>, older: Option<&EndToEnd>) -> String {
    let mut out = String::from("### As a user starts them\n\n");
    let Some(result) = result else {
        match older
            .and_then(|e| e.as_given.as_ref())
            .filter(|a| !a.rows.is_empty())
        {
            Some(a) => {
                out.push_str(&format!(
                    "_Not run as a benchmark of its own yet_: the rows below are those the \
                     end-to-end benchmark kept (`end_to_end.json`, commit {}).\n\n",
                    older
                        .and_then(|e| e.run.commit.as_deref())
                        .unwrap_or("unknown")
                ));
                out.push_str(&many_hosts(a));
            }
            None => out.push_str("_Not run in this run_ (no `as_given.json`).\n"),
        }
        return out;
    };
    let mut about = Vec::new();
    if let (Some(date), Some(commit)) = (&result.run.date, &result.run.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    if let Some(engine) = &result.engine {
        about.push(format!("engine {engine}"));
    }
    if !result.warm_up.is_empty() {
        about.push(format!(
            "warmed first by one unmeasured crawl of {}",
            result.warm_up.join(", ")
        ));
    }
    if !about.is_empty() {
        out.push_str(&format!("{}.\n\n", about.join("; ")));
    }
    match result.many_hosts.as_ref().filter(|a| !a.rows.is_empty()) {
        Some(a) => out.push_str(&many_hosts(a)),
        None => out.push_str("_Many hosts: not run in this run._\n"),
    }
    out.push('\n');
    match result.few_hosts.as_ref().filter(|a| !a.rows.is_empty()) {
        Some(a) => out.push_str(&few_hosts(a)),
        None => out.push_str("_Few hosts: not run in this run._\n"),
    }
    out
}

/// The header of both tables.
const COLUMNS: [&str; 10] = [
    "setup",
    "delay s",
    "pages/s (steady)",
    "of hosts / delay",
    "whole site s",
    "crawler CPU / page ms",
    "engine CPU / page ms",
    "peak RSS MiB",
    "smallest same-host gap s",
    "URLs twice",
];

/// The site in words, and how rows are read.
fn site_sentence(a: &AsGiven) -> String {
    format!(
        "A site of {} hosts × {} pages ({} URLs), each crawl run to its end (`--until-idle`), \
         {} run(s) of each, median (min–max); the site's request log is the judge: pages/s \
         between its 10th and 90th percentile of requests, the whole site from the first page \
         request to the last, the smallest gap between two requests to one host, URLs requested \
         twice.",
        thousands(a.hosts.unwrap_or(0)),
        a.pages_per_host.unwrap_or(0),
        thousands(a.site_urls.unwrap_or(0)),
        a.runs.unwrap_or(0),
    )
}

/// "#### Many hosts": the table, then issue 43's verdicts.
fn many_hosts(a: &AsGiven) -> String {
    let setups = format!(
        "`files-*`: StormCrawler 3.4.0's archetype as published (`crawler.flux` with \
         `crawler-conf.yaml` and `opensearch-conf.yaml`, seeds injected by `injection.flux`; \
         `files-queue` adds `--spout queue`); `default-*`: no configuration but the agent name \
         and the delay. StormCrawler 3.4.0 on the same files crawled {} pages/s (issue 43).",
        num(STORMCRAWLER_PAGES_PER_SECOND),
    );
    part("Many hosts", a, &setups, &verdicts(a))
}

/// "#### Few hosts": the table, then issue 60's verdict on the hybrid spout.
fn few_hosts(a: &AsGiven) -> String {
    let setups = "The archetype's files as above, with each spout over its status index \
                  (`files-collapsing` and `files-hybrid` add `--spout`): few queues of many URLs \
                  each.";
    part("Few hosts", a, setups, &hybrid_verdict(a))
}

/// "#### `title`": the site, the setups, the table of `a`'s rows and the verdict.
fn part(title: &str, a: &AsGiven, setups: &str, verdict: &str) -> String {
    let rows: Vec<Vec<String>> = a.rows.iter().map(row).collect();
    format!(
        "#### {title}\n\n{} {setups}\n\n{}\n{verdict}\n",
        site_sentence(a),
        table(&COLUMNS, &rows)
    )
}

/// Issue 60's aim: the hybrid spout's whole site within twice the aggregation spout's.
fn hybrid_verdict(a: &AsGiven) -> String {
    let whole = |setup: &str| {
        a.rows
            .iter()
            .find(|r| r.setup == setup && r.whole_site_done > 0)
            .and_then(|r| median(r.whole_site_seconds.as_ref()))
    };
    match (whole("files-hybrid"), whole("files-aggregation")) {
        (Some(hybrid), Some(aggregation)) => {
            let ratio = hybrid / aggregation.max(1e-9);
            let met = if ratio <= AIM_HYBRID_TO_AGGREGATION {
                "met"
            } else {
                "missed"
            };
            format!(
                "Issue 60 (the hybrid spout's whole site within {} × the aggregation spout's): \
                 {} s against {} s, {} × ({met}).",
                num(AIM_HYBRID_TO_AGGREGATION),
                num(hybrid),
                num(aggregation),
                num(ratio)
            )
        }
        _ => "Issue 60 (the hybrid spout against the aggregation spout): not both crawled to \
              the end in this run."
            .to_string(),
    }
}

fn row(r: &Row) -> Vec<String> {
    let share = median(r.steady_pages_per_second.as_ref())
        .map(|p| num(p / r.politeness_pages_per_second.max(1e-9)));
    vec![
        r.setup.clone(),
        setting(r.delay_seconds),
        opt_spread(r.steady_pages_per_second.as_ref()),
        share.unwrap_or_else(|| NONE.to_string()),
        if r.whole_site_done == 0 {
            "not done".to_string()
        } else {
            opt_spread(r.whole_site_seconds.as_ref())
        },
        opt_spread(r.crawler_cpu_ms_per_page.as_ref()),
        opt_spread(r.engine_cpu_ms_per_page.as_ref()),
        opt_spread(r.peak_rss_mib.as_ref()),
        r.smallest_gap_seconds.map_or_else(|| NONE.to_string(), num),
        r.fetched_twice.to_string(),
    ]
}

/// Issue 43's aims, each said met or missed from the medians.
fn verdicts(a: &AsGiven) -> String {
    let mut parts = Vec::new();
    let aim = 0.9 * FILES_BUDGET_PAGES_PER_SECOND;
    for r in a.rows.iter().filter(|r| r.setup.starts_with("files-")) {
        let rate = median(r.steady_pages_per_second.as_ref()).unwrap_or(0.0);
        let cpu = median(r.crawler_cpu_ms_per_page.as_ref()).unwrap_or(f64::INFINITY);
        let met = rate >= aim && cpu <= 1.0;
        parts.push(format!(
            "{} at {} s {} pages/s ({} × StormCrawler), {} ms CPU a page ({})",
            r.setup,
            setting(r.delay_seconds),
            num(rate),
            num(rate / STORMCRAWLER_PAGES_PER_SECOND),
            num(cpu),
            if met { "met" } else { "missed" }
        ));
    }
    for r in a
        .rows
        .iter()
        .filter(|r| r.setup.starts_with("default-") && r.delay_seconds >= 1.0)
    {
        let share = median(r.steady_pages_per_second.as_ref()).unwrap_or(0.0)
            / r.politeness_pages_per_second.max(1e-9);
        let met = if share >= 0.7 { "met" } else { "missed" };
        parts.push(format!(
            "{} {} of hosts / delay ({met})",
            r.setup,
            num(share)
        ));
    }
    let polite = a.rows.iter().all(|r| {
        r.fetched_twice == 0 && r.smallest_gap_seconds.is_none_or(|g| g >= r.delay_seconds)
    });
    parts.push(format!(
        "0 URLs twice and no same-host gap below the delay in every row: {}",
        if polite { "met" } else { "missed" }
    ));
    format!(
        "Issue 43 (files ≥ {} pages/s and ≤ 1 ms crawler CPU a page at both delays; no \
         configuration ≥ 0.7 of hosts / delay at 1 s): {}.",
        num(aim),
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> AsGiven {
        serde_json::from_str(
            r#"{"hosts":1000,"pages_per_host":50,"site_urls":53000,"runs":2,"rows":[
              {"setup":"files-aggregation","delay_seconds":1.0,"politeness_pages_per_second":1000.0,
               "steady_pages_per_second":{"median":600,"min":590,"max":610},
               "whole_site_seconds":{"median":110,"min":105,"max":115},"whole_site_done":2,
               "crawler_cpu_ms_per_page":{"median":0.9,"min":0.8,"max":1.0},
               "smallest_gap_seconds":1.0002,"fetched_twice":0},
              {"setup":"default-embedded","delay_seconds":1.0,"politeness_pages_per_second":1000.0,
               "steady_pages_per_second":{"median":650,"min":640,"max":660},
               "whole_site_done":0,"smallest_gap_seconds":0.4,"fetched_twice":0}]}"#,
        )
        .expect("sample")
    }

    fn result(many: AsGiven, few: Option<AsGiven>) -> AsGivenResult {
        AsGivenResult {
            many_hosts: Some(many),
            few_hosts: few,
            ..AsGivenResult::default()
        }
    }

    fn few(hybrid_seconds: f64) -> AsGiven {
        let row = |setup: &str, seconds: f64| Row {
            setup: setup.to_string(),
            delay_seconds: 0.05,
            whole_site_seconds: Some(Spread::of(&[seconds])),
            whole_site_done: 1,
            ..Row::default()
        };
        AsGiven {
            hosts: Some(3),
            rows: vec![
                row("files-aggregation", 12.0),
                row("files-hybrid", hybrid_seconds),
            ],
            ..AsGiven::default()
        }
    }

    #[test]
    fn the_table_and_the_verdicts_read_the_rows() {
        let md = section(Some(&result(sample(), None)), None);
        assert!(md.contains("| files-aggregation | 1 | 600"), "{md}");
        assert!(md.contains("not done"), "{md}");
        assert!(md.contains("files-aggregation at 1 s 600 pages/s"), "{md}");
        assert!(md.contains("(met)"), "{md}");
        assert!(
            md.contains("default-embedded 0.650 of hosts / delay (missed)"),
            "{md}"
        );
        assert!(
            md.contains("no same-host gap below the delay in every row: missed"),
            "{md}"
        );
    }

    #[test]
    fn no_rows_say_so() {
        assert!(section(None, None).contains("Not run"));
        let md = section(Some(&result(sample(), None)), None);
        assert!(md.contains("Few hosts: not run"), "{md}");
    }

    #[test]
    fn the_hybrid_spout_is_judged_against_twice_the_aggregation_spouts_time() {
        let md = section(Some(&result(sample(), Some(few(20.0)))), None);
        assert!(md.contains("20.0 s against 12.0 s, 1.67 × (met)"), "{md}");
        let md = section(Some(&result(sample(), Some(few(143.0)))), None);
        assert!(md.contains("(missed)"), "{md}");
    }

    #[test]
    fn an_older_end_to_end_file_lends_its_rows_and_says_so() {
        let older = EndToEnd {
            as_given: Some(sample()),
            ..EndToEnd::default()
        };
        let md = section(None, Some(&older));
        assert!(md.contains("Not run as a benchmark of its own yet"), "{md}");
        assert!(md.contains("| files-aggregation | 1 | 600"), "{md}");
    }
}
