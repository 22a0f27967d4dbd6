//! `end_to_end.json`: the whole topology crawling many hosts, on each frontier, against
//! min(politeness limit, fetcher-alone rate).

pub use squall_bench_schema::end_to_end::{EndToEnd, EngineWork, Frontier, KindWork};

use crate::format::{NONE, num, opt_spread, ratio, setting, thousands};
use crate::table::table;

/// The ratio to the baseline the embedded frontier's crawl must reach.
pub const AIM: f64 = 0.5;

/// The kinds of the engine's work, in the order shown.
const KINDS: [&str; 5] = ["search", "refresh", "indexing", "get", "merge"];

/// "### End to end": each frontier's rate, writes, CPU and memory against the baseline.
pub fn section(e: Option<&EndToEnd>) -> String {
    let mut out = String::from("### End to end\n\n");
    let Some(e) = e else {
        out.push_str("_Not run in this run_ (no `end_to_end.json`).\n");
        return out;
    };
    out.push_str(&about(e));
    let rows = [
        (
            "embedded".to_string(),
            e.embedded.as_ref(),
            e.ratio_embedded_to_baseline,
            true,
        ),
        (
            "queue".to_string(),
            e.queue.as_ref(),
            e.ratio_queue_to_baseline,
            false,
        ),
        (
            "aggregation (status index)".to_string(),
            e.aggregation.as_ref(),
            e.ratio_aggregation_to_baseline,
            false,
        ),
    ]
    .into_iter()
    .chain(among_rows(e))
    .filter_map(|(name, f, r, gated)| f.map(|f| row(&name, f, r, gated)))
    .collect::<Vec<_>>();
    out.push_str(&table(
        &[
            "frontier",
            "pages/s",
            "ratio to baseline",
            "status writes/s",
            "writes per page",
            "CPU per page",
            "engine CPU per page",
            "peak RSS",
            "limiting stage",
        ],
        &rows,
    ));
    out.push_str(&among_sentence(e));
    out.push_str(&engine_table(e));
    out.push_str(&crate::second_engine::section(e));
    out
}

/// The name of an `-among` row: "queue, among 10,000,000 other URLs".
fn among_name(frontier: &str, e: &EndToEnd) -> String {
    let urls = e.background.as_ref().and_then(|b| b.urls).unwrap_or(0);
    format!("{frontier}, among {} other URLs", thousands(urls))
}

/// The rows of the crawls among other hosts' URLs, their ratio to the baseline from the medians.
fn among_rows(e: &EndToEnd) -> Vec<(String, Option<&Frontier>, Option<f64>, bool)> {
    let to_baseline = |f: Option<&Frontier>| {
        let rate = f?.pages_per_second.as_ref()?.median;
        e.baseline_pages_per_second
            .filter(|b| *b > 0.0)
            .map(|b| rate / b)
    };
    // A benchmark run without the background writes these frontiers with no runs.
    fn ran(f: &Option<Frontier>) -> Option<&Frontier> {
        f.as_ref().filter(|f| !f.runs.is_empty())
    }
    let (queue, aggregation) = (ran(&e.queue_among), ran(&e.aggregation_among));
    vec![
        (among_name("queue", e), queue, to_baseline(queue), false),
        (
            among_name("aggregation", e),
            aggregation,
            to_baseline(aggregation),
            false,
        ),
    ]
}

/// What the crawls among other hosts' URLs show: the frontier they ran in and the two ratios.
fn among_sentence(e: &EndToEnd) -> String {
    let Some(b) = &e.background else {
        return String::new();
    };
    if e.queue_among.as_ref().is_none_or(|f| f.runs.is_empty()) {
        return String::new();
    }
    format!(
        "\nThe `among` rows crawl the same site on copies of a frontier that already holds {} \
         URLs of {} other hosts ({} due: a frontier that keeps up; {}). Queue among them over \
         queue alone: {}; queue over aggregation, both among them: {}.\n",
        thousands(b.urls.unwrap_or(0)),
        thousands(b.queues.unwrap_or(0)),
        thousands(b.due_urls.unwrap_or(0)),
        b.source.as_deref().unwrap_or("source not recorded"),
        ratio(e.ratio_queue_among_to_queue),
        ratio(e.ratio_queue_to_aggregation_among),
    )
}

/// The engine's work per crawled page by kind, for each frontier in the engine: the median over
/// the runs of each kind's milliseconds, with its shard operations.
fn engine_table(e: &EndToEnd) -> String {
    let (queue_among, aggregation_among) = (among_name("queue", e), among_name("aggregation", e));
    let frontiers = [
        ("queue", e.queue.as_ref()),
        ("aggregation", e.aggregation.as_ref()),
        (queue_among.as_str(), e.queue_among.as_ref()),
        (aggregation_among.as_str(), e.aggregation_among.as_ref()),
    ];
    let rows: Vec<Vec<String>> = frontiers
        .into_iter()
        .filter_map(|(name, f)| Some((name, f?)))
        .filter(|(_, f)| f.runs.iter().any(|r| r.engine.is_some()))
        .map(|(name, f)| {
            let works: Vec<&EngineWork> = f.runs.iter().filter_map(|r| r.engine.as_ref()).collect();
            let mut row = vec![name.to_string()];
            row.push(format!(
                "{} ms",
                num(median(works.iter().filter_map(|w| w.cpu_ms_per_page)))
            ));
            for kind in KINDS {
                let of = |pick: fn(&KindWork) -> f64| {
                    median(works.iter().filter_map(|w| w.kinds.get(kind)).map(pick))
                };
                row.push(format!(
                    "{} ms ({} ops)",
                    num(of(|k| k.ms_per_page)),
                    num(of(|k| k.operations_per_page))
                ));
            }
            row
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut headers = vec!["engine's work per crawled page", "CPU"];
    headers.extend(KINDS);
    format!(
        "\nThe engine's work per crawled page, from its node statistics (`_nodes/stats`) read at \
         both ends of each window: the node's CPU time, and per kind the time its operations \
         took with their count (shard-level operations), median over the runs.\n\n{}",
        table(&headers, &rows)
    )
}

/// The median of `values` (0 for none).
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The sentence before the table: site, budget, baseline.
fn about(e: &EndToEnd) -> String {
    let mut about = Vec::new();
    if let (Some(hosts), Some(pages)) = (e.hosts, e.pages_per_host) {
        about.push(format!("{hosts} host names of {pages} pages on loopback"));
    }
    if let Some(delay) = e.delay_seconds {
        about.push(format!("{} s delay", setting(delay)));
    }
    if let (Some(warmup), Some(window)) = (e.warmup_seconds, e.window_seconds) {
        about.push(format!(
            "{} s warm-up then a {} s window per crawl",
            setting(warmup),
            setting(window)
        ));
    }
    if let Some(runs) = e.runs {
        about.push(format!("{runs} runs, median (min–max)"));
    }
    if let Some(commit) = &e.run.commit {
        about.push(format!("commit {commit}"));
    }
    let mut text = format!("{}.", about.join("; "));
    if let (Some(p), Some(b)) = (e.politeness_pages_per_second, e.baseline_pages_per_second) {
        text.push_str(&format!(
            " Baseline {} pages/s = min(politeness {}, fetcher alone {}); aim for the embedded \
             frontier ≥ {} of it.",
            num(b),
            num(p),
            opt_spread(e.fetcher_alone_pages_per_second.as_ref()),
            setting(AIM)
        ));
    }
    text.push_str("\n\n");
    text
}

fn row(name: &str, f: &Frontier, r: Option<f64>, gated: bool) -> Vec<String> {
    let mut ratio_cell = ratio(r);
    if gated && r.is_some_and(|r| r < AIM) {
        ratio_cell.push_str(" (below aim)");
    }
    let mut stages = f.limiting_stages.clone();
    stages.dedup();
    vec![
        name.to_string(),
        opt_spread(f.pages_per_second.as_ref()),
        ratio_cell,
        opt_spread(f.status_writes_per_second.as_ref()),
        f.status_writes_per_page
            .as_ref()
            .map_or_else(|| NONE.to_string(), |s| num(s.median)),
        f.cpu_ms_per_page
            .as_ref()
            .map_or_else(|| NONE.to_string(), |s| format!("{} ms", num(s.median))),
        f.engine_cpu_ms_per_page
            .as_ref()
            .filter(|s| s.median > 0.0)
            .map_or_else(|| NONE.to_string(), |s| format!("{} ms", num(s.median))),
        f.peak_rss_mib
            .as_ref()
            .map_or_else(|| NONE.to_string(), |s| format!("{} MiB", num(s.max))),
        stages.join("; "),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_each_frontier_and_mark_a_missed_aim() {
        let e: EndToEnd = serde_json::from_str(
            r#"{"hosts":2000,"pages_per_host":60,"delay_seconds":1,"warmup_seconds":20,
            "window_seconds":30,"runs":2,"commit":"abc1234","politeness_pages_per_second":2000,
            "fetcher_alone_pages_per_second":{"median":9000,"min":8800,"max":9100},
            "baseline_pages_per_second":2000,
            "embedded":{"pages_per_second":{"median":1800,"min":1750,"max":1850},
              "status_writes_per_second":{"median":9000,"min":8000,"max":9500},
              "cpu_ms_per_page":{"median":0.4,"min":0.4,"max":0.5},
              "peak_rss_mib":{"median":80,"min":79,"max":81},
              "limiting_stages":["politeness","politeness"]},
            "queue":{"pages_per_second":{"median":600,"min":590,"max":610},
              "limiting_stages":["the frontier"]},
            "ratio_embedded_to_baseline":0.9,"ratio_queue_to_baseline":0.3}"#,
        )
        .expect("JSON");
        let md = section(Some(&e));
        assert!(md.contains("2000 host names of 60 pages"), "{md}");
        assert!(
            md.contains("| embedded | 1,800 (1,750–1,850) | 0.90 |"),
            "{md}"
        );
        assert!(
            md.contains("| 0.400 ms | – | 81.0 MiB | politeness |"),
            "{md}"
        );
        assert!(md.contains("| queue |"), "{md}");
        assert!(
            !md.contains("below aim"),
            "only the embedded frontier has an aim: {md}"
        );
        assert!(section(None).contains("no `end_to_end.json`"));
    }

    #[test]
    fn crawls_among_other_urls_get_rows_and_their_ratios_only_when_they_ran() {
        let json = |among_runs: &str| {
            format!(
                r#"{{"baseline_pages_per_second":2000,
                "queue":{{"pages_per_second":{{"median":1600,"min":1500,"max":1700}},"runs":[{{}}]}},
                "background":{{"urls":10000000,"due_urls":0,"queues":200000,
                  "source":"kept by the spouts benchmark"}},
                "queue_among":{{"pages_per_second":{{"median":1520,"min":1500,"max":1540}},
                  "runs":{among_runs}}},
                "ratio_queue_among_to_queue":0.95,"ratio_queue_to_aggregation_among":3.2}}"#
            )
        };
        let e: EndToEnd = serde_json::from_str(&json("[{}]")).expect("JSON");
        let md = section(Some(&e));
        assert!(
            md.contains("| queue, among 10,000,000 other URLs | 1,520 (1,500–1,540) | 0.76 |"),
            "{md}"
        );
        assert!(
            md.contains("10,000,000 URLs of 200,000 other hosts (0 due"),
            "{md}"
        );
        assert!(md.contains("over queue alone: 0.95"), "{md}");
        assert!(md.contains("both among them: 3.20"), "{md}");
        let e: EndToEnd = serde_json::from_str(&json("[]")).expect("JSON");
        let md = section(Some(&e));
        assert!(!md.contains("among"), "{md}");
    }
}
