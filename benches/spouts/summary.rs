//! Each spout's figures over its trials, as the JSON gives them.

use std::time::Duration;

use squall_bench_schema::end_to_end::EngineWork;
use squall_bench_schema::spouts::{SpoutResult, StageTime};

use crate::common::Spread;
use crate::kind::Kind;
use crate::trial::Trial;

/// The value at quantile `q` of `values` (nearest rank), none of none.
fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return None;
    }
    Some(sorted[((sorted.len() as f64 - 1.0) * q).round() as usize])
}

/// The `count` slowest queries of a window, as "milliseconds@position" (the first query is 0).
pub fn slowest(latencies_ms: &[f64], count: usize) -> String {
    let mut indexed: Vec<(usize, f64)> = latencies_ms.iter().copied().enumerate().collect();
    indexed.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shown: Vec<String> = indexed
        .iter()
        .take(count)
        .map(|(at, ms)| format!("{ms:.0}@{at}"))
        .collect();
    shown.join(" ")
}

/// Mean number of distinct hosts in each complete run of 1,000 emitted URLs.
fn hosts_per_thousand(keys: &[String]) -> Option<f64> {
    let chunks: Vec<usize> = keys
        .chunks_exact(1000)
        .map(|chunk| chunk.iter().collect::<std::collections::HashSet<_>>().len())
        .collect();
    if chunks.is_empty() {
        return None;
    }
    Some(chunks.iter().sum::<usize>() as f64 / chunks.len() as f64)
}

/// The engine's work over `trials`, per URL emitted in them.
fn engine_per_url(trials: &[&Trial]) -> Option<EngineWork> {
    let works: Vec<&EngineWork> = trials.iter().filter_map(|t| t.engine.as_ref()).collect();
    if works.is_empty() {
        return None;
    }
    let urls = trials.iter().map(|t| t.keys.len()).sum::<usize>().max(1) as f64;
    let mut total = EngineWork::default();
    for work in works {
        total.cpu_ms += work.cpu_ms;
        for (kind, done) in &work.kinds {
            let entry = total.kinds.entry(kind.clone()).or_default();
            entry.operations += done.operations;
            entry.milliseconds += done.milliseconds;
        }
    }
    total.cpu_ms_per_page = Some(total.cpu_ms / urls);
    for kind in total.kinds.values_mut() {
        kind.operations_per_page = kind.operations / urls;
        kind.ms_per_page = kind.milliseconds / urls;
    }
    Some(total)
}

/// The stages of `trials` added up, with their milliseconds per URL emitted.
fn stages_per_url(trials: &[&Trial]) -> Vec<StageTime> {
    let urls = trials.iter().map(|t| t.keys.len()).sum::<usize>();
    let mut stages: Vec<StageTime> = Vec::new();
    for stage in trials.iter().flat_map(|t| &t.stages) {
        match stages.iter_mut().find(|s| s.stage == stage.stage) {
            Some(total) => {
                total.rounds += stage.rounds;
                total.items += stage.items;
                total.ms += stage.ms;
            }
            None => stages.push(stage.clone()),
        }
    }
    for stage in &mut stages {
        stage.ms_per_url = (urls > 0).then(|| stage.ms / urls as f64);
    }
    stages
}

/// The spread of `values`, none of none.
pub fn spread(values: &[f64]) -> Option<Spread> {
    (!values.is_empty()).then(|| Spread::of(values))
}

/// Each spout's figures over its trials: URLs/s, query latency, first URL, host spread, and the
/// new-host delays (none for a phase without them).
pub fn summarize(
    kinds: &[Kind],
    trials: &[(Kind, Trial)],
    new_hosts: &[(Kind, Option<Duration>)],
    window: Duration,
) -> Vec<SpoutResult> {
    let mut spouts = Vec::new();
    for &kind in kinds {
        let mine: Vec<&Trial> = trials
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, t)| t)
            .collect();
        let rates: Vec<f64> = mine
            .iter()
            .map(|t| t.keys.len() as f64 / window.as_secs_f64())
            .collect();
        let p50: Vec<f64> = mine
            .iter()
            .filter_map(|t| percentile(&t.latencies_ms, 0.5))
            .collect();
        let p99: Vec<f64> = mine
            .iter()
            .filter_map(|t| percentile(&t.latencies_ms, 0.99))
            .collect();
        let first: Vec<f64> = mine
            .iter()
            .filter_map(|t| t.first_url.map(|d| d.as_secs_f64()))
            .collect();
        let spread_hosts: Vec<f64> = mine
            .iter()
            .filter_map(|t| hosts_per_thousand(&t.keys))
            .collect();
        let queries: usize = mine.iter().map(|t| t.latencies_ms.len()).sum();
        let urls: usize = mine.iter().map(|t| t.keys.len()).sum();
        let delays: Vec<f64> = new_hosts
            .iter()
            .filter(|(k, _)| *k == kind)
            .filter_map(|(_, d)| d.map(|d| d.as_secs_f64()))
            .collect();
        let trials_new = new_hosts.iter().filter(|(k, _)| *k == kind).count();
        spouts.push(SpoutResult {
            spout: kind.name().to_string(),
            label: Some(kind.label()),
            equal_budget: Some(kind.equal_budget()),
            queues_held: kind.queues().map(|n| n as u64),
            urls_per_second: spread(&rates),
            query_ms_p50: spread(&p50),
            query_ms_p99: spread(&p99),
            first_url_seconds: spread(&first),
            hosts_per_1000_urls: spread(&spread_hosts),
            new_host_seconds: spread(&delays),
            new_host_missed: Some((trials_new - delays.len()) as u64),
            new_host_trials: Some(trials_new as u64),
            queries: Some(queries as u64),
            urls: Some(urls as u64),
            engine: engine_per_url(&mine),
            stages: stages_per_url(&mine),
        });
    }
    spouts
}
