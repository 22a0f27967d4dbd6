//! `end_to_end.json`'s `as_given`: crawls as a user starts them (a StormCrawler user's files, flux
//! included, and no configuration at all), each run to the end of its site, and issue 43's aims.

pub use squall_bench_schema::end_to_end::{AsGiven, Row};

use crate::format::{NONE, num, opt_spread, setting, thousands};
use crate::input::Spread;
use crate::table::table;

/// StormCrawler 3.4.0 on the archetype's files, same site, 1 s delay (issue 43's table, run by
/// hand): pages/s while steady.
pub const STORMCRAWLER_PAGES_PER_SECOND: f64 = 152.0;

/// The files' own spout budget: 10 instances × 50 buckets × 2 URLs every 2 s.
pub const FILES_BUDGET_PAGES_PER_SECOND: f64 = 500.0;

fn median(s: Option<&Spread>) -> Option<f64> {
    s.map(|s| s.median)
}

/// "#### Crawls as a user starts them": the table, then issue 43's verdicts.
pub fn section(a: Option<&AsGiven>) -> String {
    let mut out = String::from("#### Crawls as a user starts them\n\n");
    let Some(a) = a.filter(|a| !a.rows.is_empty()) else {
        out.push_str("_Not run in this run_ (no `as_given` in `end_to_end.json`).\n");
        return out;
    };
    out.push_str(&format!(
        "A site of {} hosts × {} pages ({} URLs), each crawl run to its end (`--until-idle`), \
         {} run(s) of each, median (min–max); the site's request log is the judge: pages/s between \
         its 10th and 90th percentile of requests, the whole site from the first page request to \
         the last, the smallest gap between two requests to one host, URLs requested twice. \
         `files-*`: StormCrawler 3.4.0's archetype as published (`crawler.flux` with \
         `crawler-conf.yaml` and `opensearch-conf.yaml`, seeds injected by `injection.flux`; \
         `files-queue` adds `--spout queue`); `default-*`: no configuration but the agent name and \
         the delay. StormCrawler 3.4.0 on the same files crawled {} pages/s (issue 43).\n\n",
        thousands(a.hosts.unwrap_or(0)),
        a.pages_per_host.unwrap_or(0),
        thousands(a.site_urls.unwrap_or(0)),
        a.runs.unwrap_or(0),
        num(STORMCRAWLER_PAGES_PER_SECOND),
    ));
    let rows: Vec<Vec<String>> = a.rows.iter().map(row).collect();
    out.push_str(&table(
        &[
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
        ],
        &rows,
    ));
    out.push_str(&format!("\n{}\n", verdicts(a)));
    out
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

    #[test]
    fn the_table_and_the_verdicts_read_the_rows() {
        let md = section(Some(&sample()));
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
        assert!(section(None).contains("Not run"));
    }
}
