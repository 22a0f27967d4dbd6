//! "### Acceptance (issue 44)": the issue's figures computed from this run's results, each with its
//! aim and whether it was met.

use crate::format::{count, divide, num, ratio, setting, size};
use crate::shared_crawl::{AIM_RATE, AIM_SHARE, SharedCrawl, shares_text};
use crate::table::table;

use super::{HEADLINE_SPOUT, REFERENCE_SPOUT, SpoutResult, SpoutSize, Spouts, find, sorted_sizes};

/// The sizes the issue's aims are stated at.
const ONE_M: u64 = 1_000_000;
const TEN_M: u64 = 10_000_000;

/// The queue spout at its best setting (outside the equal budget).
const HELD_SPOUT: &str = "queue-1000";

/// Aims of issue 44.
const AIM_OF_CEILING: f64 = 0.15;
const AIM_OVER_AGGREGATION_10M: f64 = 2.0;
const AIM_OVER_AGGREGATION_1M: f64 = 1.0;
const AIM_OVER_AGGREGATION_ALL_DUE: f64 = 10.0;
const AIM_FLAT_P99: f64 = 1.3;
const AIM_NEW_HOST_SECONDS: f64 = 2.0;

/// Whether an aim was met.
#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    Met,
    Missed,
    /// Not measured in this run, and why.
    NotMeasured(String),
}

impl Verdict {
    fn from(met: bool) -> Self {
        if met { Verdict::Met } else { Verdict::Missed }
    }

    fn text(&self) -> String {
        match self {
            Verdict::Met => "met".to_string(),
            Verdict::Missed => "**missed**".to_string(),
            Verdict::NotMeasured(why) => format!("not measured ({why})"),
        }
    }
}

/// One figure of the acceptance table.
struct Row {
    figure: String,
    aim: String,
    measured: String,
    verdict: Verdict,
}

impl Row {
    fn not_measured(figure: String, aim: String, why: String) -> Self {
        Row {
            figure,
            aim,
            measured: crate::format::NONE.to_string(),
            verdict: Verdict::NotMeasured(why),
        }
    }
}

/// The acceptance section.
pub fn section(spouts: Option<&Spouts>, shared: Option<&SharedCrawl>) -> String {
    let mut out = String::from("### Acceptance (issue 44)\n\n");
    out.push_str(
        "Computed from the tables above (medians over the runs; the spouts at equal budgets \
         unless a row names `queue (1000 held)`, the queue spout at its best setting).\n\n",
    );
    let sizes = spouts.map(sorted_sizes).unwrap_or_default();
    let at = |urls: u64| sizes.iter().copied().find(|sz| sz.urls == urls);
    let ran = spouts.is_some();
    let all_due = spouts.and_then(|s| s.all_due.as_ref());
    let mut rows = vec![
        of_ceiling(at(TEN_M), ran),
        held_over_equal(at(TEN_M), ran),
        over_aggregation(at(TEN_M), "10 M", AIM_OVER_AGGREGATION_10M, ran),
        over_aggregation(at(ONE_M), "1 M", AIM_OVER_AGGREGATION_1M, ran),
        over_aggregation(all_due, "10 M, all due", AIM_OVER_AGGREGATION_ALL_DUE, ran),
        flat_p99(at(ONE_M), at(TEN_M), ran),
        new_host(at(TEN_M), ran),
    ];
    rows.extend(shared_rows(shared));
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| vec![r.figure, r.aim, r.measured, r.verdict.text()])
        .collect();
    out.push_str(&table(&["figure", "aim", "measured", ""], &rows));
    out
}

/// Why a spout figure is missing: no spouts.json, no such size, or no such spout there.
fn missing(ran: bool, needed: &[(u64, Option<&SpoutSize>)]) -> String {
    if !ran {
        return "no `spouts.json`".to_string();
    }
    match needed.iter().find(|(_, sz)| sz.is_none()) {
        Some((urls, _)) => format!("this run has no {} size", size(*urls)),
        None => "a spout did not run or gave no figure".to_string(),
    }
}

fn queue(sz: Option<&SpoutSize>) -> Option<&SpoutResult> {
    sz.and_then(|sz| find(sz, HEADLINE_SPOUT))
}

fn rate(sp: Option<&SpoutResult>) -> Option<f64> {
    sp.and_then(|sp| sp.urls_per_second.map(|u| u.median))
}

fn p99(sp: Option<&SpoutResult>) -> Option<f64> {
    sp.and_then(|sp| sp.query_ms_p99.map(|q| q.median))
}

/// A ratio row: `a ÷ b` against a lower bound, with both figures in `unit`.
fn ratio_row(figure: String, aim: f64, a: Option<f64>, b: Option<f64>, unit: &str) -> Option<Row> {
    let r = divide(a, b)?;
    Some(Row {
        figure,
        aim: format!("≥ {}", setting(aim)),
        measured: format!(
            "{} ({} ÷ {} {unit})",
            ratio(Some(r)),
            num(a.unwrap_or_default()),
            num(b.unwrap_or_default())
        ),
        verdict: Verdict::from(r >= aim),
    })
}

/// The queue spout at its best setting over the raw `_bulk` of the same node, read and written
/// back, at 10 M; the equal-budget row's figure beside it.
fn of_ceiling(ten: Option<&SpoutSize>, ran: bool) -> Row {
    let figure =
        "queue (1000 held) URLs/s at 10 M ÷ raw `_bulk` docs/s of the same node".to_string();
    let ceiling = ten.and_then(|sz| sz.raw_bulk_docs_per_second.map(|s| s.median));
    let held = rate(ten.and_then(|sz| find(sz, HELD_SPOUT)));
    let Some(mut row) = ratio_row(figure.clone(), AIM_OF_CEILING, held, ceiling, "") else {
        let aim = format!("≥ {}", setting(AIM_OF_CEILING));
        return Row::not_measured(figure, aim, missing(ran, &[(TEN_M, ten)]));
    };
    row.measured = format!(
        "{} ({} URLs/s ÷ {} docs/s)",
        ratio(divide(held, ceiling)),
        num(held.unwrap_or_default()),
        num(ceiling.unwrap_or_default())
    );
    if let Some(r) = divide(rate(queue(ten)), ceiling) {
        row.measured
            .push_str(&format!("; queue (100 held): {}", ratio(Some(r))));
    }
    row
}

/// The queue spout holding 1,000 queues against holding 100, at 10 M.
fn held_over_equal(ten: Option<&SpoutSize>, ran: bool) -> Row {
    let figure = "queue (1000 held) ÷ queue (100 held), URLs/s at 10 M".to_string();
    let held = rate(ten.and_then(|sz| find(sz, HELD_SPOUT)));
    ratio_row(figure.clone(), 1.0, held, rate(queue(ten)), "URLs/s").unwrap_or_else(|| {
        Row::not_measured(figure, "≥ 1".to_string(), missing(ran, &[(TEN_M, ten)]))
    })
}

fn over_aggregation(sz: Option<&SpoutSize>, at: &str, aim: f64, ran: bool) -> Row {
    let figure =
        format!("{HEADLINE_SPOUT} ÷ {REFERENCE_SPOUT} spout, URLs/s at {at} (equal budgets)");
    let q = rate(queue(sz));
    let a = rate(sz.and_then(|sz| find(sz, REFERENCE_SPOUT)));
    ratio_row(figure.clone(), aim, q, a, "URLs/s").unwrap_or_else(|| {
        let why = match (ran, sz) {
            (true, None) => format!("this run has no {at} case"),
            _ => missing(ran, &[]),
        };
        Row::not_measured(figure, format!("≥ {}", setting(aim)), why)
    })
}

fn flat_p99(one: Option<&SpoutSize>, ten: Option<&SpoutSize>, ran: bool) -> Row {
    let figure = format!("{HEADLINE_SPOUT} spout p99 query latency at 10 M ÷ at 1 M");
    let aim = format!("≤ {}", setting(AIM_FLAT_P99));
    let (a, b) = (p99(queue(one)), p99(queue(ten)));
    match divide(b, a) {
        Some(r) => Row {
            figure,
            aim,
            measured: format!(
                "{} ({} ÷ {} ms)",
                ratio(Some(r)),
                num(b.unwrap_or_default()),
                num(a.unwrap_or_default())
            ),
            verdict: Verdict::from(r <= AIM_FLAT_P99),
        },
        None => Row::not_measured(figure, aim, missing(ran, &[(ONE_M, one), (TEN_M, ten)])),
    }
}

/// Judged on the worst trial: every trial must see the new host within the aim.
fn new_host(ten: Option<&SpoutSize>, ran: bool) -> Row {
    let figure = format!("new host's first URL out of the {HEADLINE_SPOUT} spout at 10 M");
    let aim = format!("≤ {} s (every trial)", setting(AIM_NEW_HOST_SECONDS));
    let Some(sp) = queue(ten) else {
        return Row::not_measured(figure, aim, missing(ran, &[(TEN_M, ten)]));
    };
    let missed = sp.new_host_missed.unwrap_or(0);
    let trials = sp.new_host_trials;
    let trials_text = trials.map(|t| format!(", {t} trials")).unwrap_or_default();
    match sp.new_host_seconds {
        Some(s) => {
            let mut measured = format!(
                "median {} s, worst {} s{trials_text}",
                num(s.median),
                num(s.max)
            );
            if missed > 0 {
                measured.push_str(&format!("; not seen in {missed}"));
            }
            Row {
                figure,
                aim,
                measured,
                verdict: Verdict::from(missed == 0 && s.max <= AIM_NEW_HOST_SECONDS),
            }
        }
        None if missed > 0 => Row {
            figure,
            aim,
            measured: format!("not seen in {missed}{trials_text}"),
            verdict: Verdict::Missed,
        },
        None => Row::not_measured(figure, aim, "no new-host trial".to_string()),
    }
}

/// The shared crawl's figures: the rate, each process's share, and two checks.
fn shared_rows(shared: Option<&SharedCrawl>) -> Vec<Row> {
    let rate_figure =
        "three processes over six hosts at 0.1 s: pages/s ÷ hosts / delay".to_string();
    let rate_aim = format!("≥ {}", setting(AIM_RATE));
    let share_figure = "each process's share of the pages (smallest over the runs)".to_string();
    let share_aim = format!("≥ 1/5 ({})", setting(AIM_SHARE));
    let overlap_figure = "fetches of one host by two processes at once".to_string();
    let complete_figure = "site URLs never fetched / fetched twice".to_string();
    let Some(s) = shared else {
        let why = "no `shared_crawl.json`".to_string();
        return vec![
            Row::not_measured(rate_figure, rate_aim, why.clone()),
            Row::not_measured(share_figure, share_aim, why.clone()),
            Row::not_measured(overlap_figure, "0".to_string(), why.clone()),
            Row::not_measured(complete_figure, "0 / 0".to_string(), why),
        ];
    };
    let runs = s.crawls.len();
    let mut rows = Vec::new();
    let median_rate = s.pages_per_second.map(|p| p.median);
    rows.push(match s.ratio_to_ideal {
        Some(r) => Row {
            figure: rate_figure,
            aim: rate_aim,
            measured: format!(
                "{} ({} pages/s ÷ {}{})",
                ratio(Some(r)),
                median_rate.map_or_else(|| crate::format::NONE.to_string(), num),
                crate::shared_crawl::ideal_text(s),
                if runs > 1 { ", median of the runs" } else { "" }
            ),
            verdict: Verdict::from(r >= AIM_RATE),
        },
        None => Row::not_measured(rate_figure, rate_aim, "no rate".to_string()),
    });
    rows.push(match s.least_shared_run() {
        Some((i, run, share)) => Row {
            figure: share_figure,
            aim: share_aim,
            measured: format!(
                "{} (run {}: {})",
                ratio(Some(share)),
                i + 1,
                shares_text(run)
            ),
            verdict: Verdict::from(share >= AIM_SHARE),
        },
        None => Row::not_measured(share_figure, share_aim, "no shares".to_string()),
    });
    let sum = |pick: fn(&crate::shared_crawl::SharedRun) -> Option<u64>| -> Option<u64> {
        s.crawls.iter().map(pick).sum()
    };
    rows.push(match sum(|r| r.cross_process_overlaps) {
        Some(n) => Row {
            figure: overlap_figure,
            aim: "0".to_string(),
            measured: format!("{n} in {}", count(runs as u64, "run")),
            verdict: Verdict::from(n == 0),
        },
        None => Row::not_measured(overlap_figure, "0".to_string(), "not counted".to_string()),
    });
    rows.push(
        match (sum(|r| r.missing_urls), sum(|r| r.fetched_more_than_once)) {
            (Some(never), Some(twice)) => Row {
                figure: complete_figure,
                aim: "0 / 0".to_string(),
                measured: format!("{never} / {twice} in {}", count(runs as u64, "run")),
                verdict: Verdict::from(never == 0 && twice == 0),
            },
            _ => Row::not_measured(
                complete_figure,
                "0 / 0".to_string(),
                "not counted".to_string(),
            ),
        },
    );
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse;

    const SPOUTS: &str = r#"{"sizes":[
      {"urls":1000000,"spouts":[
        {"spout":"aggregation","urls_per_second":{"median":400,"min":380,"max":420}},
        {"spout":"queue","urls_per_second":{"median":5000,"min":4800,"max":5200},
         "query_ms_p99":{"median":100,"min":90,"max":110}}]},
      {"urls":10000000,"raw_bulk_docs_per_second":{"median":30000,"min":29000,"max":31000},"spouts":[
        {"spout":"aggregation","urls_per_second":{"median":1000,"min":900,"max":1100}},
        {"spout":"queue","urls_per_second":{"median":3000,"min":2900,"max":3100},
         "query_ms_p99":{"median":120,"min":100,"max":150},
         "new_host_seconds":{"median":0.9,"min":0.8,"max":2.4},"new_host_missed":0,"new_host_trials":2},
        {"spout":"queue-1000","label":"queue (1000 held)","equal_budget":false,
         "urls_per_second":{"median":6000,"min":5800,"max":6200}}]}],
      "all_due":{"urls":10000000,"spouts":[
        {"spout":"aggregation","urls_per_second":{"median":500,"min":450,"max":520}},
        {"spout":"queue","urls_per_second":{"median":4500,"min":4400,"max":4600}}]}}"#;

    #[test]
    fn figures_at_the_issue_sizes_with_verdicts() -> anyhow::Result<()> {
        let s: Spouts = parse(SPOUTS)?;
        let md = section(Some(&s), None);
        assert!(
            md.contains(
                "| ≥ 0.15 | 0.20 (6,000 URLs/s ÷ 30,000 docs/s); queue (100 held): 0.10 | met |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| ≥ 1 | 2.00 (6,000 ÷ 3,000 URLs/s) | met |"),
            "{md}"
        );
        assert!(
            md.contains("| ≥ 2 | 3.00 (3,000 ÷ 1,000 URLs/s) | met |"),
            "{md}"
        );
        assert!(
            md.contains("| ≥ 1 | 12.50 (5,000 ÷ 400 URLs/s) | met |"),
            "{md}"
        );
        assert!(
            md.contains("| ≥ 10 | 9.00 (4,500 ÷ 500 URLs/s) | **missed** |"),
            "{md}"
        );
        assert!(md.contains("| ≤ 1.3 | 1.20 (120 ÷ 100 ms) | met |"), "{md}");
        assert!(
            md.contains("| median 0.900 s, worst 2.40 s, 2 trials | **missed** |"),
            "judged on the worst trial: {md}"
        );
        assert!(md.contains("not measured (no `shared_crawl.json`)"), "{md}");
        Ok(())
    }

    #[test]
    fn missing_sizes_are_named() -> anyhow::Result<()> {
        let s: Spouts = parse(r#"{"sizes":[{"urls":5000,"spouts":[{"spout":"queue"}]}]}"#)?;
        let md = section(Some(&s), None);
        assert!(
            md.contains("not measured (this run has no 10 M size)"),
            "{md}"
        );
        assert!(
            md.contains("not measured (this run has no 10 M, all due case)"),
            "{md}"
        );
        assert!(section(None, None).contains("not measured (no `spouts.json`)"));
        Ok(())
    }
    #[test]
    fn shared_crawl_rows() -> anyhow::Result<()> {
        let shared: SharedCrawl = parse(
            r#"{"hosts":6,"delay_seconds":0.1,"ideal_pages_per_second":60,
            "crawls":[{"processes":[{"share":0.5},{"share":0.3},{"share":0.2}],
                       "cross_process_overlaps":0,"missing_urls":0,"fetched_more_than_once":1},
                      {"processes":[{"share":0.9},{"share":0.1},{"share":0.0}],
                       "cross_process_overlaps":2,"missing_urls":0,"fetched_more_than_once":0}],
            "pages_per_second":{"median":50,"min":45,"max":55},"ratio_to_ideal":0.833}"#,
        )?;
        let md = section(None, Some(&shared));
        assert!(
            md.contains(
                "| 0.83 (50.0 pages/s ÷ 60 pages/s (6 hosts / 0.1 s), median of the runs) | met |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 0.00 (run 2: 0.90 / 0.10 / 0.00) | **missed** |"),
            "{md}"
        );
        assert!(md.contains("| 0 | 2 in 2 runs | **missed** |"), "{md}");
        assert!(
            md.contains("| 0 / 0 | 0 / 1 in 2 runs | **missed** |"),
            "{md}"
        );
        Ok(())
    }
}
