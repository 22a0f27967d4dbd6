//! "### Acceptance (issue 12)": the issue's figures computed from this run's results, each with its
//! aim and whether it was met.

use crate::format::{count, divide, num, ratio, setting, size};
use crate::shared_crawl::{AIM_RATE, AIM_SHARE, SharedCrawl, shares_text};
use crate::table::table;

use super::{HEADLINE_SPOUT, REFERENCE_SPOUT, SpoutResult, SpoutSize, Spouts, find, sorted_sizes};

/// The sizes the issue's aims are stated at.
const ONE_M: u64 = 1_000_000;
const FIVE_M: u64 = 5_000_000;
const TEN_M: u64 = 10_000_000;

/// Aims of issue 12.
const AIM_QUEUE_OVER_AGGREGATION: f64 = 10.0;
const AIM_FLAT_RATE: f64 = 0.8;
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
    let mut out = String::from("### Acceptance (issue 12)\n\n");
    out.push_str(
        "Computed from the tables above (medians over the runs; the spouts at equal budgets, the \
         `queue (1000 held)` row left out).\n\n",
    );
    let sizes = spouts.map(sorted_sizes).unwrap_or_default();
    let at = |urls: u64| sizes.iter().copied().find(|sz| sz.urls == urls);
    let mut rows = vec![
        queue_over_aggregation(at(FIVE_M), spouts.is_some()),
        flat_rate(at(ONE_M), at(TEN_M), spouts.is_some()),
        flat_p99(at(ONE_M), at(TEN_M), spouts.is_some()),
        new_host(at(TEN_M), spouts.is_some()),
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

fn queue_over_aggregation(five: Option<&SpoutSize>, ran: bool) -> Row {
    let figure =
        format!("{HEADLINE_SPOUT} ÷ {REFERENCE_SPOUT} spout, URLs/s at 5 M (equal budgets)");
    let aim = format!("≥ {}", setting(AIM_QUEUE_OVER_AGGREGATION));
    let q = rate(queue(five));
    let a = rate(five.and_then(|sz| find(sz, REFERENCE_SPOUT)));
    match divide(q, a) {
        Some(r) => Row {
            figure,
            aim,
            measured: format!(
                "{} ({} ÷ {} URLs/s)",
                ratio(Some(r)),
                num(q.unwrap_or_default()),
                num(a.unwrap_or_default())
            ),
            verdict: Verdict::from(r >= AIM_QUEUE_OVER_AGGREGATION),
        },
        None => Row::not_measured(figure, aim, missing(ran, &[(FIVE_M, five)])),
    }
}

fn flat_rate(one: Option<&SpoutSize>, ten: Option<&SpoutSize>, ran: bool) -> Row {
    let figure = format!("{HEADLINE_SPOUT} spout URLs/s at 10 M ÷ at 1 M");
    let aim = format!("≥ {}", setting(AIM_FLAT_RATE));
    let (a, b) = (rate(queue(one)), rate(queue(ten)));
    match divide(b, a) {
        Some(r) => Row {
            figure,
            aim,
            measured: format!(
                "{} ({} ÷ {} URLs/s)",
                ratio(Some(r)),
                num(b.unwrap_or_default()),
                num(a.unwrap_or_default())
            ),
            verdict: Verdict::from(r >= AIM_FLAT_RATE),
        },
        None => Row::not_measured(figure, aim, missing(ran, &[(ONE_M, one), (TEN_M, ten)])),
    }
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
         "query_ms_p99":{"median":100,"min":90,"max":110}},
        {"spout":"queue-1000","label":"queue (1000 held)","equal_budget":false,
         "urls_per_second":{"median":90000,"min":80000,"max":99000}}]},
      {"urls":5000000,"spouts":[
        {"spout":"aggregation","urls_per_second":{"median":500,"min":450,"max":520}},
        {"spout":"queue","urls_per_second":{"median":4500,"min":4400,"max":4600}},
        {"spout":"queue-1000","equal_budget":false,"urls_per_second":{"median":99000,"min":1,"max":1}}]},
      {"urls":10000000,"spouts":[
        {"spout":"queue","urls_per_second":{"median":4200,"min":4000,"max":4300},
         "query_ms_p99":{"median":120,"min":100,"max":150},
         "new_host_seconds":{"median":0.9,"min":0.8,"max":2.4},"new_host_missed":0,"new_host_trials":2}]}]}"#;

    #[test]
    fn figures_at_the_issue_sizes_with_verdicts() -> anyhow::Result<()> {
        let s: Spouts = parse(SPOUTS)?;
        let md = section(Some(&s), None);
        assert!(
            md.contains("| 9.00 (4,500 ÷ 500 URLs/s) | **missed** |"),
            "the extra queue row is not used: {md}"
        );
        assert!(
            md.contains("| ≥ 0.8 | 0.84 (4,200 ÷ 5,000 URLs/s) | met |"),
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
            md.contains("not measured (this run has no 5 M size)"),
            "{md}"
        );
        assert!(
            md.contains("not measured (this run has no 1 M size)"),
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
