//! The sentences under the browser table: peak memory against the limit, the scaling from one
//! tab to [`AIM_TABS`] and to the most tabs, where the CPU went, and any page that missed its text.

use super::input::{AIM, AIM_TABS, Browser, Candidate};
use crate::format::{num, ratio, setting};

/// The machine's busy share from which the CPU is named as the limit.
const SATURATED: f64 = 0.9;

/// The verdicts, one paragraph each.
pub fn verdicts(b: &Browser) -> String {
    [memory(b), scaling(b), most(b), misses(b)]
        .into_iter()
        .flatten()
        .map(|p| format!("{p}\n\n"))
        .collect::<String>()
        .trim_end()
        .to_string()
        + "\n"
}

/// Peak memory with the most tabs against `browser.max.rss.mb`.
fn memory(b: &Browser) -> Option<String> {
    let most = b.most_tabs()?;
    let peak = most.peak_memory_mib?.max;
    let limit = b.settings.max_rss_mb?;
    let verdict = if peak < limit {
        "under the limit"
    } else {
        "**over the limit**"
    };
    let mut text = format!(
        "Peak memory with {} tabs: {} MiB, {:.0}% of the configured limit (`browser.max.rss.mb` \
         {} MiB): {verdict}.",
        most.tabs.unwrap_or(0),
        num(peak),
        peak / limit * 100.0,
        setting(limit)
    );
    let restarts: u64 = b.tabs.iter().filter_map(|c| c.restarts).sum();
    if restarts > 0 {
        text.push_str(&format!(
            " The browser was restarted {restarts} time(s) during the runs."
        ));
    }
    Some(text)
}

/// Pages/s with [`AIM_TABS`] tabs against one, and what the CPU did meanwhile.
fn scaling(b: &Browser) -> Option<String> {
    let (one, these) = (b.with(1)?, b.with(AIM_TABS)?);
    let r = these.ratio_to_one_tab?;
    let verdict = if r >= AIM {
        format!("met ({}×)", ratio(Some(r)))
    } else {
        format!("**missed** ({}×)", ratio(Some(r)))
    };
    let mut text = format!(
        "{AIM_TABS} tabs against 1 (aim ≥ {}×): {verdict}.",
        setting(AIM)
    );
    let busy = these.machine_busy.map(|s| s.median);
    if let Some(busy) = busy {
        text.push_str(&format!(" {}", cpu(these, busy, b.cores)));
    }
    if let (Some(p1), Some(pn)) = (one.latency_p50_ms, these.latency_p50_ms) {
        let idle = b
            .settings
            .settle_idle_seconds
            .map_or_else(String::new, |s| {
                format!(" ({} ms of it the settle idle)", num(s * 1000.0))
            });
        text.push_str(&format!(
            " A page's median latency went from {} ms with 1 tab to {} ms with {AIM_TABS}{idle}.",
            num(p1.median),
            num(pn.median)
        ));
    }
    if r < AIM {
        text.push_str(limit(busy));
    }
    Some(text)
}

/// The scaling to the most tabs, when more than [`AIM_TABS`], and what limits it.
fn most(b: &Browser) -> Option<String> {
    let c = b.most_tabs().filter(|c| c.tabs.unwrap_or(0) > AIM_TABS)?;
    let busy = c.machine_busy.map(|s| s.median);
    let mut text = format!(
        "{} tabs against 1: {}×.",
        c.tabs.unwrap_or(0),
        ratio(c.ratio_to_one_tab)
    );
    if let Some(busy) = busy {
        text.push_str(&format!(" {}", cpu(c, busy, b.cores)));
    }
    if let Some(p50) = c.latency_p50_ms {
        text.push_str(&format!(" Median latency {} ms.", num(p50.median)));
    }
    text.push_str(limit(busy));
    Some(text)
}

/// What the machine's busy share says about the limit.
fn limit(busy: Option<f64>) -> &'static str {
    match busy {
        Some(busy) if busy >= SATURATED => {
            " The machine's cores were saturated: the CPU limits the rate."
        }
        Some(_) => " The machine had idle CPU: something else than the cores limits the rate.",
        None => "",
    }
}

/// Where the CPU went with these tabs.
fn cpu(c: &Candidate, busy: f64, cores: Option<u64>) -> String {
    let median = |s: Option<crate::input::Spread>| s.map_or(0.0, |s| s.median);
    let of = cores.map_or_else(String::new, |n| format!(" of {n} cores"));
    format!(
        "With {} tabs the machine was {:.0}% busy (browser {:.2} cores, crawler {:.2}, site {:.2}, \
         the benchmark's memory sampler {:.2}, other programs {:.2}{of}).",
        c.tabs.unwrap_or(0),
        busy * 100.0,
        median(c.browser_cpu_cores),
        median(c.driver_cpu_cores),
        median(c.site_cpu_cores),
        median(c.sampler_cpu_cores),
        median(c.other_cpu_cores),
    )
}

/// Rendered pages without their post's text, and failed fetches: never hidden.
fn misses(b: &Browser) -> Option<String> {
    let bad: Vec<String> = b
        .tabs
        .iter()
        .filter(|c| c.misses.unwrap_or(0) + c.failures.unwrap_or(0) > 0)
        .map(|c| {
            format!(
                "{} tabs: {} missed, {} failed",
                c.tabs.unwrap_or(0),
                c.misses.unwrap_or(0),
                c.failures.unwrap_or(0)
            )
        })
        .collect();
    if bad.is_empty() {
        return Some("Every rendered page counted held its post's text.".to_string());
    }
    Some(format!(
        "**Rendered pages without their post's text or failed** ({}); they are not counted in \
         pages/s.",
        bad.join("; ")
    ))
}
