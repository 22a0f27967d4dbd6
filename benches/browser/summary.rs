//! The runs of each candidate summed up: medians with min and max, and the ratios.

use squall_bench_schema::browser::{Candidate, PeakMemory};

use crate::candidates::BrowserRun;
use crate::common::Spread;
use crate::drive::Window;

/// Median, min and max of `f` over `windows`.
fn spread<'a>(windows: impl Iterator<Item = &'a Window>, f: fn(&Window) -> f64) -> Option<Spread> {
    Some(Spread::of(&windows.map(f).collect::<Vec<_>>()))
}

/// The figures every candidate has: pages/s, latency, failures and CPU.
fn common<'a>(windows: impl Iterator<Item = &'a Window> + Clone) -> Candidate {
    let sum = |f: fn(&Window) -> usize| Some(windows.clone().map(f).sum::<usize>() as u64);
    Candidate {
        pages_per_second: spread(windows.clone(), Window::pages_per_second),
        latency_p50_ms: spread(windows.clone(), |w| w.latency_ms.0),
        latency_p95_ms: spread(windows.clone(), |w| w.latency_ms.1),
        misses: sum(|w| w.misses),
        failures: sum(|w| w.failures),
        with_post_text: sum(|w| w.with_text),
        driver_cpu_cores: spread(windows.clone(), |w| w.cpu.driver_cores),
        site_cpu_cores: spread(windows.clone(), |w| w.cpu.site_cores),
        sampler_cpu_cores: spread(windows.clone(), |w| w.cpu.sampler_cores),
        browser_cpu_cores: spread(windows.clone(), |w| w.cpu.browser_cores),
        other_cpu_cores: spread(windows.clone(), |w| w.cpu.other_cores),
        machine_busy: spread(windows, |w| w.cpu.machine_busy),
        ..Candidate::default()
    }
}

/// The median pages/s of `windows`.
fn median_rate<'a>(windows: impl Iterator<Item = &'a Window>) -> f64 {
    Spread::of(&windows.map(Window::pages_per_second).collect::<Vec<_>>()).median
}

/// The HTTP client's runs (with their place in the order).
pub fn http(runs: &[(usize, Window)], concurrency: usize) -> Candidate {
    Candidate {
        concurrency: Some(concurrency as u64),
        runs: runs.iter().map(|(order, w)| w.record(*order)).collect(),
        ..common(runs.iter().map(|(_, w)| w))
    }
}

/// The runs with `tabs` tabs.
fn with(runs: &[BrowserRun], tabs: usize) -> impl Iterator<Item = &BrowserRun> + Clone {
    runs.iter().filter(move |r| r.tabs == tabs)
}

/// One entry per tab count: its figures, × of one tab, rendered / HTTP, memory against `limit_mb`.
pub fn tab_counts(
    counts: &[usize],
    runs: &[BrowserRun],
    http: &[(usize, Window)],
    limit_mb: u64,
) -> Vec<Candidate> {
    let http_rate = median_rate(http.iter().map(|(_, w)| w));
    let one_tab = median_rate(with(runs, 1).map(|r| &r.window));
    counts
        .iter()
        .map(|&tabs| {
            let these = with(runs, tabs);
            let rate = median_rate(these.clone().map(|r| &r.window));
            let peaks: Vec<f64> = these.clone().map(BrowserRun::peak_mib).collect();
            Candidate {
                tabs: Some(tabs as u64),
                ratio_to_one_tab: (one_tab > 0.0).then(|| rate / one_tab),
                ratio_to_http: (http_rate > 0.0).then(|| rate / http_rate),
                peak_memory_mib: Some(Spread::of(&peaks)),
                peak_memory_to_limit: Some(Spread::of(&peaks).max / limit_mb as f64),
                restarts: Some(these.clone().map(|r| r.memory.restarts() as u64).sum()),
                runs: these.clone().map(BrowserRun::record).collect(),
                ..common(these.map(|r| &r.window))
            }
        })
        .collect()
}

/// Pages/s with `tabs` tabs over pages/s with one (medians); `None` unless both ran.
pub fn ratio_to_one_tab(counts: &[usize], runs: &[BrowserRun], tabs: usize) -> Option<f64> {
    if !counts.contains(&1) || !counts.contains(&tabs) {
        return None;
    }
    let one = median_rate(with(runs, 1).map(|r| &r.window));
    let these = median_rate(with(runs, tabs).map(|r| &r.window));
    (one > 0.0).then(|| these / one)
}

/// The largest peak memory at the most tabs run, against the configured limit.
pub fn peak_to_limit(runs: &[BrowserRun], limit_mb: u64) -> PeakMemory {
    let most = runs.iter().map(|r| r.tabs).max().unwrap_or(0);
    let peak = with(runs, most)
        .map(BrowserRun::peak_mib)
        .fold(0.0, f64::max);
    PeakMemory {
        tabs: most as u64,
        peak_memory_mib: peak,
        limit_mib: limit_mb,
        ratio: peak / limit_mb as f64,
    }
}
