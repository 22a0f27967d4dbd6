//! "### Browser rendering" from `browser.json`: rendered pages per second and the browser's peak memory for 1, 2, 4 and 8 tabs,
//! against squall's HTTP client fetching the same pages.

mod input;
mod notes;

pub use input::{Browser, Candidate};

use crate::format::{NONE, count, num, opt_spread, ratio, setting};
use crate::input::Spread;
use crate::table::table;

/// "### Browser": pages/s, latency, memory and CPU per tab count and for HTTP, and the verdicts.
pub fn section(b: Option<&Browser>) -> String {
    let mut out = String::from("### Browser rendering\n\n");
    let Some(b) = b else {
        out.push_str("_Not run in this run_ (no `browser.json`).\n");
        return out;
    };
    out.push_str(&about(b));
    let mut rows: Vec<Vec<String>> = b.tabs.iter().map(row).collect();
    if let Some(http) = &b.http {
        let mut cells = row(http);
        cells[0] = format!("HTTP, {} at once", http.concurrency.unwrap_or(0));
        cells[2] = NONE.to_string();
        rows.push(cells);
    }
    out.push_str(&table(
        &[
            "tabs",
            "pages/s",
            "× 1 tab",
            "rendered / HTTP",
            "latency p50 / p95",
            "peak memory",
            "vs limit",
            "CPU: browser / crawler / site / other",
            "machine busy",
            "misses, failures, restarts",
        ],
        &rows,
    ));
    out.push('\n');
    out.push_str(&notes::verdicts(b));
    out
}

/// The sentence before the table: the site, the budget, the settings.
fn about(b: &Browser) -> String {
    let mut about = Vec::new();
    if let (Some(hosts), Some(posts)) = (b.hosts, b.posts_per_host) {
        about.push(format!(
            "Post pages of the JavaScript test app ({hosts} host names × {posts} posts on \
             loopback; each page's text rendered by its script from `/api`) fetched through the \
             protocol directly, N at once"
        ));
    }
    if let Some(idle) = b.settings.settle_idle_seconds {
        about.push(format!("`browser.settle.idle` {} s", setting(idle)));
    }
    if let Some(limit) = b.settings.max_rss_mb {
        let every = b.memory_sample_every_ms.map_or_else(String::new, |ms| {
            format!(", sampled every {} ms", setting(ms))
        });
        about.push(format!(
            "`browser.max.rss.mb` {} (the limit; memory is the PSS of the browser's process \
             tree{every})",
            setting(limit)
        ));
    }
    if let (Some(warmup), Some(window), Some(runs)) = (b.warmup_seconds, b.window_seconds, b.runs) {
        about.push(format!(
            "a fresh browser per run, {} s warm-up then {} s counted, {} in mirrored order, \
             median (min–max)",
            setting(warmup),
            setting(window),
            count(runs, "run")
        ));
    }
    if let Some(commit) = &b.run.commit {
        about.push(format!("commit {commit}"));
    }
    if about.is_empty() {
        return String::new();
    }
    format!("{}.\n\n", about.join("; "))
}

/// Medians in cores, `a / b / c / d`.
fn cores(values: &[Option<&Spread>]) -> String {
    values
        .iter()
        .map(|v| v.map_or_else(|| NONE.to_string(), |s| format!("{:.2}", s.median)))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// A ratio below 1 as `1 / N` (rendered pages are a small fraction of HTTP's), else as a number.
fn fraction(r: f64) -> String {
    if r > 0.0 && r < 1.0 {
        format!("1 / {}", num(1.0 / r))
    } else {
        num(r)
    }
}

fn row(c: &Candidate) -> Vec<String> {
    let ms = |s: Option<&Spread>| s.map_or_else(|| NONE.to_string(), |s| num(s.median));
    vec![
        c.tabs.map_or_else(|| NONE.to_string(), |t| t.to_string()),
        opt_spread(c.pages_per_second.as_ref()),
        ratio(c.ratio_to_one_tab),
        c.ratio_to_http.map_or_else(|| "1".to_string(), fraction),
        format!(
            "{} / {} ms",
            ms(c.latency_p50_ms.as_ref()),
            ms(c.latency_p95_ms.as_ref())
        ),
        c.peak_memory_mib
            .as_ref()
            .map_or_else(|| NONE.to_string(), |s| format!("{} MiB", num(s.max))),
        c.peak_memory_to_limit
            .map_or_else(|| NONE.to_string(), |r| format!("{:.0}%", r * 100.0)),
        cores(&[
            c.browser_cpu_cores.as_ref().filter(|_| c.tabs.is_some()),
            c.driver_cpu_cores.as_ref(),
            c.site_cpu_cores.as_ref(),
            c.other_cpu_cores.as_ref(),
        ]),
        c.machine_busy
            .as_ref()
            .map_or_else(|| NONE.to_string(), |s| format!("{:.0}%", s.median * 100.0)),
        format!(
            "{}, {}, {}",
            c.misses.unwrap_or(0),
            c.failures.unwrap_or(0),
            c.restarts
                .map_or_else(|| NONE.to_string(), |r| r.to_string())
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two tab counts of a run, with HTTP.
    fn sample() -> Browser {
        let spread = |m: f64| format!(r#"{{"median":{m},"min":{},"max":{}}}"#, m * 0.9, m * 1.1);
        let json = format!(
            r#"{{"hosts":40,"posts_per_host":25,"warmup_seconds":3,"window_seconds":10,"runs":3,
            "cores":2,"commit":"abc1234","settings":{{"settle_idle_seconds":0.3,"max_rss_mb":2048}},
            "http":{{"concurrency":8,"pages_per_second":{},"latency_p50_ms":{},"latency_p95_ms":{},
              "misses":0,"failures":0}},
            "tabs":[
             {{"tabs":1,"pages_per_second":{},"ratio_to_one_tab":1.0,"ratio_to_http":0.001,
              "latency_p50_ms":{},"latency_p95_ms":{},"peak_memory_mib":{},"peak_memory_to_limit":0.2,
              "restarts":0,"misses":0,"failures":0,"machine_busy":{}}},
             {{"tabs":4,"pages_per_second":{},"ratio_to_one_tab":2.5,"ratio_to_http":0.0025,
              "latency_p50_ms":{},"latency_p95_ms":{},"peak_memory_mib":{},"peak_memory_to_limit":0.3,
              "restarts":0,"misses":2,"failures":0,"machine_busy":{},"browser_cpu_cores":{},
              "driver_cpu_cores":{},"site_cpu_cores":{},"other_cpu_cores":{}}}]}}"#,
            spread(3000.0),
            spread(2.5),
            spread(6.0),
            spread(3.0),
            spread(330.0),
            spread(350.0),
            spread(400.0),
            spread(0.5),
            spread(7.5),
            spread(520.0),
            spread(700.0),
            spread(550.0),
            spread(0.97),
            spread(1.4),
            spread(0.3),
            spread(0.02),
            spread(0.2),
        );
        crate::input::parse(&json).expect("JSON")
    }

    #[test]
    fn the_section_gives_each_tab_count_http_and_the_verdicts() {
        let b = sample();
        let md = section(Some(&b));
        assert!(md.contains("40 host names × 25 posts"), "{md}");
        assert!(
            md.contains("| 4 | 7.50 (6.75–8.25) | 2.50 | 1 / 400 | 520 / 700 ms | 605 MiB | 30% |"),
            "{md}"
        );
        assert!(
            md.contains("| HTTP, 8 at once | 3,000 (2,700–3,300) | – | 1 |"),
            "{md}"
        );
        assert!(md.contains("Peak memory with 4 tabs: 605 MiB, 30%"), "{md}");
        assert!(md.contains("under the limit"), "{md}");
        assert!(md.contains("**missed** (2.50×)"), "{md}");
        assert!(
            md.contains("97% busy (browser 1.40 cores, crawler 0.30"),
            "{md}"
        );
        assert!(md.contains("the CPU limits the rate"), "{md}");
        assert!(md.contains("4 tabs: 2 missed, 0 failed"), "{md}");
        assert!(section(None).contains("no `browser.json`"));
    }

    #[test]
    fn the_plot_is_drawn() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let results = crate::results::Results {
            browser: Some(sample()),
            ..Default::default()
        };
        let drawn = crate::plots::draw_all(&results, &[], dir.path())?;
        assert!(drawn.iter().any(|p| p.file == "browser.svg"), "{drawn:?}");
        let svg = std::fs::read_to_string(dir.path().join("browser.svg"))?;
        assert!(svg.contains("HTTP, 8 at once"));
        Ok(())
    }
}
