//! `end_to_end.json`: the whole topology crawling many hosts, on each frontier, against
//! min(politeness limit, fetcher-alone rate).

use serde::Deserialize;

use crate::format::{NONE, num, opt_spread, ratio, setting};
use crate::results::Spread;
use crate::tables::table;

/// The ratio to the baseline the embedded frontier's crawl must reach.
pub const AIM: f64 = 0.5;

/// `end_to_end.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EndToEnd {
    /// Host names of the site.
    pub hosts: Option<u64>,
    /// Pages per host.
    pub pages_per_host: Option<u64>,
    /// The per-host delay.
    pub delay_seconds: Option<f64>,
    /// Seconds of warm-up before each window.
    pub warmup_seconds: Option<f64>,
    /// Seconds of each measured window.
    pub window_seconds: Option<f64>,
    /// Runs per candidate.
    pub runs: Option<u64>,
    /// The commit measured.
    pub commit: Option<String>,
    /// Hosts / delay.
    pub politeness_pages_per_second: Option<f64>,
    /// The fetcher bolt alone on the same site.
    pub fetcher_alone_pages_per_second: Option<Spread>,
    /// min(politeness, fetcher alone).
    pub baseline_pages_per_second: Option<f64>,
    /// The embedded frontier's crawls.
    pub embedded: Option<Frontier>,
    /// The queue frontier's crawls.
    pub queue: Option<Frontier>,
    /// Embedded median over the baseline.
    pub ratio_embedded_to_baseline: Option<f64>,
    /// Queue median over the baseline.
    pub ratio_queue_to_baseline: Option<f64>,
}

/// One frontier's crawls.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Frontier {
    /// Fetches per second in the window.
    pub pages_per_second: Option<Spread>,
    /// Status documents written per second in the window.
    pub status_writes_per_second: Option<Spread>,
    /// The crawler's CPU milliseconds per page.
    pub cpu_ms_per_page: Option<Spread>,
    /// The crawler's peak resident set, MiB.
    pub peak_rss_mib: Option<Spread>,
    /// The limiting stage named for each run.
    pub limiting_stages: Vec<String>,
}

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
            "embedded",
            e.embedded.as_ref(),
            e.ratio_embedded_to_baseline,
            true,
        ),
        ("queue", e.queue.as_ref(), e.ratio_queue_to_baseline, false),
    ]
    .into_iter()
    .filter_map(|(name, f, r, gated)| f.map(|f| row(name, f, r, gated)))
    .collect::<Vec<_>>();
    out.push_str(&table(
        &[
            "frontier",
            "pages/s",
            "ratio to baseline",
            "status writes/s",
            "CPU per page",
            "peak RSS",
            "limiting stage",
        ],
        &rows,
    ));
    out
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
    if let Some(commit) = &e.commit {
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
        f.cpu_ms_per_page
            .as_ref()
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
        assert!(md.contains("| 0.400 ms | 81.0 MiB | politeness |"), "{md}");
        assert!(md.contains("| queue |"), "{md}");
        assert!(
            !md.contains("below aim"),
            "only the embedded frontier has an aim: {md}"
        );
        assert!(section(None).contains("no `end_to_end.json`"));
    }
}
