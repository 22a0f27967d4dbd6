//! `pace.json`: hosts that push back, crawled under each pacing policy, judged by the capacity
//! site's own log; the restart rows and the control rows on the plain site.

pub use squall_bench_schema::pace::{Pace, PaceControl, PaceRestart, PaceRow};

use crate::format::{NONE, num, opt_spread, ratio, setting, thousands};
use crate::table::{not_run, table};

/// The share of `Σ min(capacity, 1 / floor)` a row must reach.
pub const AIM_RATIO: f64 = 0.85;
/// The share of refused requests a row may have at most.
pub const AIM_REFUSED: f64 = 0.01;
/// The p95, over every answer of the window, of its time over its page's unloaded time, at most.
pub const AIM_P95: f64 = 1.5;
/// Adaptive's pages/s over fixed's on the plain site, at least.
pub const AIM_CONTROL: f64 = 0.98;

/// "### Pace": the rows, the restarts, the control.
pub fn section(pace: Option<&Pace>) -> String {
    let mut out = String::from("### Pace: hosts that push back\n\n");
    let Some(p) = pace else {
        out.push_str(&not_run("pace.json"));
        return out;
    };
    out.push_str(&about(p));
    out.push_str(&rows_table(&p.rows));
    if !p.restarts.is_empty() {
        out.push('\n');
        out.push_str(&restarts_table(&p.restarts));
    }
    if !p.control.is_empty() {
        out.push('\n');
        out.push_str(&control_table(&p.control));
    }
    out
}

/// The paragraph above the tables: the site, the window, the run.
fn about(p: &Pace) -> String {
    let mut about = Vec::new();
    if let (Some(h), Some(c)) = (p.hosts, p.capacity_per_second) {
        let range = p
            .capacity_range
            .map(|(a, b)| format!(" ({}–{} each)", num(a), num(b)))
            .unwrap_or_default();
        about.push(format!(
            "{h} hosts of a hidden capacity, {} requests/s in all{range}",
            num(c)
        ));
    }
    if let (Some(w), Some(l)) = (p.warm_up_seconds, p.window_seconds) {
        about.push(format!(
            "{} s of warm-up, then a {} s window",
            setting(w),
            setting(l)
        ));
    }
    if let (Some(date), Some(commit)) = (&p.run.date, &p.run.commit) {
        about.push(format!("run of {date} at commit {commit}"));
    }
    format!(
        "{}. Judged by the site's request log. Bars: useful pages/s ≥ {AIM_RATIO} × Σ min(capacity, \
         1 / floor); refused ≤ {} %; no request inside a Retry-After window; no same-host gap \
         under the floor; p95 answer time ≤ {AIM_P95} × unloaded, over every answer of the window \
         (each answer's time over its page's unloaded time; each host's own p95 is shown beside \
         it). One fetch at a time per host, the floor a gap from the end of one answer to the \
         next request, reaches Σ min(capacity, 1 / (floor + unloaded time)) at most: its ratio \
         is shown beside the bar's.\n\n",
        about.join("; "),
        setting(100.0 * AIM_REFUSED)
    )
}

/// A value against its bar: "0.91", or "0.71 (below 0.85)".
fn against(value: Option<f64>, shown: String, passes: impl Fn(f64) -> bool, bar: &str) -> String {
    match value {
        Some(v) if !passes(v) => format!("{shown} ({bar})"),
        _ => shown,
    }
}

fn rows_table(rows: &[PaceRow]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(row_cells).collect();
    let mut out = table(
        &[
            "row",
            "frontier",
            "floor s",
            "useful pages/s",
            "ideal",
            "÷ ideal",
            "÷ one fetch at a time",
            "refused",
            "inside Retry-After",
            "gaps under floor (smallest s)",
            "p95 ÷ unloaded: every answer (hosts: max / median / over 1.5)",
            "CPU ms/page crawler (engine)",
        ],
        &cells,
    );
    for row in rows.iter().filter(|r| r.note.is_some()) {
        out.push_str(&format!(
            "\n{}: {}.",
            row.name,
            row.note.as_deref().unwrap_or_default()
        ));
    }
    if rows.iter().any(|r| r.note.is_some()) {
        out.push('\n');
    }
    out
}

fn row_cells(r: &PaceRow) -> Vec<String> {
    let opt = |v: Option<f64>| v.map_or_else(|| NONE.to_string(), num);
    let hosts_over = r
        .hosts_p95_over_bar
        .map_or_else(|| NONE.to_string(), thousands);
    let hosts = format!(
        " ({} / {} / {hosts_over})",
        opt(r.p95_over_unloaded_max),
        opt(r.p95_over_unloaded_median)
    );
    let p95 = format!("{}{hosts}", opt(r.p95_over_unloaded));
    let refused = format!("{:.2} %", 100.0 * r.refused_share);
    let engine = r
        .engine_cpu_ms_per_page
        .map(|e| format!(" ({})", num(e)))
        .unwrap_or_default();
    vec![
        r.name.clone(),
        format!("{} × {}", r.frontier, r.processes),
        setting(r.floor_seconds),
        num(r.useful_per_second),
        num(r.ideal_per_second),
        against(
            Some(r.ratio_to_ideal),
            ratio(Some(r.ratio_to_ideal)),
            |v| v >= AIM_RATIO,
            "below 0.85",
        ),
        ratio(
            (r.ideal_one_at_a_time_per_second > 0.0)
                .then(|| r.useful_per_second / r.ideal_one_at_a_time_per_second),
        ),
        against(
            Some(r.refused_share),
            refused,
            |v| v <= AIM_REFUSED,
            "over 1 %",
        ),
        thousands(r.inside_retry_after),
        format!(
            "{} ({})",
            thousands(r.gaps_under_floor),
            opt(r.smallest_gap_seconds)
        ),
        against(r.p95_over_unloaded, p95, |v| v <= AIM_P95, "over 1.5"),
        format!("{}{engine}", opt(r.crawler_cpu_ms_per_page)),
    ]
}

fn restarts_table(restarts: &[PaceRestart]) -> String {
    let cells: Vec<Vec<String>> = restarts
        .iter()
        .map(|r| {
            let problems = if r.problems.is_empty() {
                "none".to_string()
            } else {
                format!("{}: {}", r.problems.len(), r.problems[0])
            };
            vec![
                r.name.clone(),
                format!("{} × {}", r.frontier, r.processes),
                setting(r.before_kill_seconds),
                format!("{} ({} backed off)", r.hosts_checked, r.hosts_backed_off),
                thousands(r.requests_first_minute),
                problems,
            ]
        })
        .collect();
    table(
        &[
            "restart row",
            "frontier",
            "killed after s",
            "hosts with a learned pace",
            "their requests in the first minute after",
            "hosts over their pace (+10 %)",
        ],
        &cells,
    )
}

fn control_table(control: &[PaceControl]) -> String {
    let cells: Vec<Vec<String>> = control
        .iter()
        .map(|c| {
            let shown = ratio(c.ratio_to_fixed);
            let bar = c.name == "control-adaptive";
            let vs_fixed = if bar {
                against(c.ratio_to_fixed, shown, |v| v >= AIM_CONTROL, "below 0.98")
            } else {
                shown
            };
            vec![
                c.name.clone(),
                opt_spread(c.pages_per_second.as_ref()),
                vs_fixed,
                thousands(c.gaps_under_delay),
            ]
        })
        .collect();
    table(
        &[
            "control (plain site, 1 s)",
            "pages/s (median, min–max)",
            "÷ control-fixed",
            "gaps under the delay",
        ],
        &cells,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_below_its_bar_says_so_and_a_missing_file_is_named() {
        let row = PaceRow {
            name: "fixed".to_string(),
            frontier: "embedded".to_string(),
            processes: 1,
            ratio_to_ideal: 0.5,
            refused_share: 0.2,
            ..PaceRow::default()
        };
        let pace = Pace {
            rows: vec![row],
            ..Pace::default()
        };
        let text = section(Some(&pace));
        assert!(text.contains("0.50 (below 0.85)"), "{text}");
        assert!(text.contains("20.00 % (over 1 %)"), "{text}");
        assert!(section(None).contains("pace.json"));
    }
}
