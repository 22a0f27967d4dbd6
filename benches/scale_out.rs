//! Crawler scale-out: do crawler processes sharing one queue frontier in a three-node cluster add
//! up?
//!
//! `cargo bench --bench scale_out` serves a generated site of 1,000 host names on loopback (the test
//! site of `tests/site`, every host reached through `--resolve`; 40 pages per host, its home page a
//! seed) and crawls it with 1, 2 and 4 processes of the example crawl binary on one queue frontier
//! in the cluster at `SQUALL_BENCH_CLUSTER` (comma-separated node addresses; scripts/bench starts a
//! three-node cluster for it), on fresh indices per run (urls 3 shards, queues 1, one replica each).
//!
//! The crawl is politeness-bound: each process holds at most `frontier.max.buckets` = 50 queues at
//! a 2 s delay, so one process can fetch at most 25 pages/s and N processes N times that (the
//! site's 1,000 hosts leave room for all). A process count runs for the same budget: once every
//! process has fetched its first page, a warm-up of `SCALE_WARMUP` seconds, then a measured window
//! of `SCALE_WINDOW` seconds, and is repeated in
//! mirrored order (1, 2, 4, 4, 2, 1 with two runs), so that drift over the benchmark weighs on
//! every count alike. Pages/s is the fetch-log lines written during the window over its length;
//! the ratio to linear is the rate with N processes over N times the single-process rate of the
//! same benchmark run.
//!
//! What limits the curve: during the window the benchmark reads the CPU time of the crawler
//! processes and of the engine nodes (`SQUALL_BENCH_CLUSTER_PIDS`, space-separated) from /proc, and
//! the whole machine's busy share from /proc/stat. Politeness across processes is checked from the
//! fetch logs (fetches of one host by two processes that overlap in time: must be 0).
//!
//! Settings (env, `SQUALL_BENCH_` prefix): `RUNS` (2; quick 1), `SCALE_HOSTS` (1000; quick 60),
//! `SCALE_PAGES` (40; quick 10), `SCALE_WARMUP` (20; quick 5), `SCALE_WINDOW` (90; quick 15).
//! Prints JSON.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::binary::{lines, queue_frontier_args, set_args, site_args};
use common::process::{cpu_seconds, interrupt, machine_jiffies, wait_or_kill};
use common::{
    Spread, crawl_binary, env_or, fresh_temp_dir, print_result, quick, spawn_crawler,
    start_closed_site,
};
use serde_json::Value;
use squall_bench_schema::Run;
use squall_bench_schema::scale_out::{ScaleCount, ScaleOut, ScaleRun};
use squall_engine::client::Method;
use squall_engine::client::{ConnectionConfig, EsClient};
use squall_testsite::{Site, SiteSpec};

/// Process counts measured.
const COUNTS: [usize; 3] = [1, 2, 4];
/// The per-host delay, seconds.
const DELAY: f64 = 2.0;
/// Queues one process holds at most (`frontier.max.buckets`).
const MAX_QUEUES: usize = 50;

/// The cluster's addresses: `SQUALL_BENCH_CLUSTER`, else `SQUALL_BENCH_ES`, else the local node.
fn cluster_urls() -> String {
    std::env::var("SQUALL_BENCH_CLUSTER").unwrap_or_else(|_| common::engine_url())
}

/// The engine nodes' PIDs, for their CPU time.
fn node_pids() -> Vec<u32> {
    std::env::var("SQUALL_BENCH_CLUSTER_PIDS")
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// CPU readings at one moment.
#[derive(Debug, Clone, Copy)]
struct Cpu {
    crawlers: f64,
    engine: f64,
    busy: f64,
    total: f64,
}

fn read_cpu(crawlers: &[u32], nodes: &[u32]) -> Cpu {
    let (busy, total) = machine_jiffies();
    Cpu {
        crawlers: crawlers.iter().map(|p| cpu_seconds(*p)).sum(),
        engine: nodes.iter().map(|p| cpu_seconds(*p)).sum(),
        busy,
        total,
    }
}

/// One fetch's start, end and process.
type Span = (DateTime<Utc>, DateTime<Utc>, usize);

/// Fetches of one host by two different processes that overlap in time, from the fetch logs.
fn cross_process_overlaps(logs: &[PathBuf]) -> usize {
    let mut by_host: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for (p, log) in logs.iter().enumerate() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for line in text.lines() {
            let Ok(entry) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let time = |name: &str| {
                DateTime::parse_from_rfc3339(entry[name].as_str()?)
                    .ok()
                    .map(|t| t.with_timezone(&Utc))
            };
            if let (Some(key), Some(start), Some(end)) =
                (entry["key"].as_str(), time("started"), time("finished"))
            {
                by_host
                    .entry(key.to_string())
                    .or_default()
                    .push((start, end, p));
            }
        }
    }
    let mut overlaps = 0;
    for fetches in by_host.values_mut() {
        fetches.sort();
        for (i, a) in fetches.iter().enumerate() {
            overlaps += fetches[i + 1..]
                .iter()
                .take_while(|b| b.0 < a.1)
                .filter(|b| b.2 != a.2)
                .count();
        }
    }
    overlaps
}

/// One crawl process of a run.
struct Process {
    child: Child,
    log: PathBuf,
}

/// The arguments of crawl process `p` of run `id`.
fn arguments(site: &Site, id: &str, p: usize, log: &Path, limit: Duration) -> Vec<String> {
    let mut args = queue_frontier_args(
        &cluster_urls(),
        &format!("bench-scale-urls-{id}"),
        &format!("bench-scale-queues-{id}"),
        (3, 1),
        &format!("scale-{id}-{p}"),
    );
    args.extend(
        [
            "--es-timeout",
            "10",
            "--fetch-log",
            &log.display().to_string(),
            "--max-duration",
            &limit.as_secs_f64().to_string(),
        ]
        .map(str::to_string),
    );
    args.extend(set_args(&[
        "http.agent.name=squall-bench",
        &format!("fetcher.server.delay={DELAY}"),
        &format!("frontier.max.buckets={MAX_QUEUES}"),
        &SiteSpec::exclude_outside_hosts(),
    ]));
    args.extend(site_args(site));
    args
}

/// One run with `count` processes: returns its JSON and its pages per second.
async fn run(
    site: &Site,
    count: usize,
    order: usize,
    warmup: Duration,
    window: Duration,
) -> (ScaleRun, f64) {
    let id = format!("{}-{order}", std::process::id());
    let dir = fresh_temp_dir(&format!("squall-scale-out-{id}"));
    let limit = warmup + window + Duration::from_secs(240);
    let binary = crawl_binary();
    let mut processes = Vec::new();
    for p in 0..count {
        let log = dir.join(format!("fetch-{p}.jsonl"));
        let child = spawn_crawler(&binary, &arguments(site, &id, p, &log, limit), &dir, p);
        processes.push(Process { child, log });
    }
    let pids: Vec<u32> = processes.iter().map(|p| p.child.id()).collect();
    let nodes = node_pids();
    let logs: Vec<PathBuf> = processes.iter().map(|p| p.log.clone()).collect();
    let fetched = || logs.iter().map(|l| lines(l)).sum::<usize>();

    // The warm-up counts from the moment every process fetches (each injects the seeds first).
    let starting = Instant::now();
    while logs.iter().any(|l| lines(l) == 0) && starting.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(warmup).await;
    let (before, cpu_before, at) = (fetched(), read_cpu(&pids, &nodes), Instant::now());
    tokio::time::sleep(window).await;
    let seconds = at.elapsed().as_secs_f64();
    let (after, cpu_after) = (fetched(), read_cpu(&pids, &nodes));
    // A process that ended in the window would make the rate and its CPU meaningless.
    let ended: Vec<usize> = processes
        .iter_mut()
        .enumerate()
        .filter_map(|(i, p)| (!matches!(p.child.try_wait(), Ok(None))).then_some(i))
        .collect();
    if !ended.is_empty() {
        panic!(
            "crawl process(es) {ended:?} ended before the window did; see {}",
            dir.display()
        );
    }
    let per_process: Vec<usize> = logs.iter().map(|l| lines(l)).collect();

    for process in &processes {
        interrupt(&process.child);
    }
    let stopping = Instant::now();
    for process in &mut processes {
        wait_or_kill(&mut process.child, stopping).await;
    }
    let overlaps = cross_process_overlaps(&logs);
    let rate = (after - before) as f64 / seconds;
    let ideal = count as f64 * MAX_QUEUES as f64 / DELAY;
    let cores = |a: f64, b: f64| (b - a) / seconds;
    let busy = (cpu_after.busy - cpu_before.busy) / (cpu_after.total - cpu_before.total).max(1.0);
    eprintln!(
        "  {count} process(es): {rate:.1} pages/s ({:.2} of the politeness ceiling {ideal}), crawlers {:.2} cores, engine {:.2} cores, machine {:.0}% busy, {overlaps} cross-process overlaps",
        rate / ideal,
        cores(cpu_before.crawlers, cpu_after.crawlers),
        cores(cpu_before.engine, cpu_after.engine),
        busy * 100.0
    );
    let report = ScaleRun {
        processes: count as u64,
        order: Some(order as u64),
        window_seconds: Some(seconds),
        pages_in_window: Some((after - before) as u64),
        pages_per_second: Some(rate),
        ceiling_pages_per_second: Some(ideal),
        fetches_per_process: per_process.iter().map(|n| *n as u64).collect(),
        crawler_cpu_cores: Some(cores(cpu_before.crawlers, cpu_after.crawlers)),
        engine_cpu_cores: (!nodes.is_empty()).then(|| cores(cpu_before.engine, cpu_after.engine)),
        machine_busy: Some(busy),
        cross_process_overlaps: Some(overlaps as u64),
    };
    delete_indices(&id).await;
    let _ = std::fs::remove_dir_all(&dir);
    (report, rate)
}

/// Deletes the run's indices.
async fn delete_indices(id: &str) {
    let Ok(settings) = ConnectionConfig::new(&cluster_urls()) else {
        return;
    };
    let Ok(client) = EsClient::new(settings) else {
        return;
    };
    let pattern = format!("bench-scale-urls-{id},bench-scale-queues-{id}*");
    let _ = client
        .request(Method::Delete, &format!("/{pattern}"), &[], None)
        .await;
}

#[tokio::main]
async fn main() {
    let runs: usize = if quick() { 1 } else { env_or("RUNS", 2).max(1) };
    let hosts: usize = env_or("SCALE_HOSTS", if quick() { 60 } else { 1000 });
    let pages: usize = env_or("SCALE_PAGES", if quick() { 10 } else { 40 });
    let warmup = Duration::from_secs(env_or("SCALE_WARMUP", if quick() { 5 } else { 20 }));
    let window = Duration::from_secs(env_or("SCALE_WINDOW", if quick() { 15 } else { 90 }));
    let site = start_closed_site(hosts, pages).await;
    eprintln!(
        "scale-out: {hosts} hosts of {pages} pages, delay {DELAY} s, {MAX_QUEUES} queues per process, cluster {}",
        cluster_urls()
    );
    // Mirrored order: 1, 2, 4, then 4, 2, 1, ...
    let mut order: Vec<usize> = Vec::new();
    for r in 0..runs {
        if r % 2 == 0 {
            order.extend(COUNTS);
        } else {
            order.extend(COUNTS.iter().rev());
        }
    }
    let mut crawls = Vec::new();
    let mut rates: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for (i, count) in order.iter().enumerate() {
        eprintln!("scale-out: run {i}, {count} process(es)");
        let (report, rate) = run(&site, *count, i, warmup, window).await;
        crawls.push(report);
        rates.entry(*count).or_default().push(rate);
    }
    let single = rates.get(&1).map(|r| Spread::of(r).median);
    let summary: Vec<ScaleCount> = rates
        .iter()
        .map(|(count, values)| {
            let spread = Spread::of(values);
            ScaleCount {
                processes: *count as u64,
                pages_per_second: Some(spread),
                ratio_to_linear: single
                    .filter(|s| *s > 0.0)
                    .map(|s| spread.median / (*count as f64 * s)),
                ceiling_pages_per_second: Some(*count as f64 * MAX_QUEUES as f64 / DELAY),
            }
        })
        .collect();
    print_result(&ScaleOut {
        run: Run::now("scale_out"),
        cluster_nodes: Some(cluster_urls().split(',').count() as u64),
        hosts: Some(hosts as u64),
        pages_per_host: Some(pages as u64),
        delay_seconds: Some(DELAY),
        max_queues_per_process: Some(MAX_QUEUES as u64),
        runs: Some(runs as u64),
        warmup_seconds: Some(warmup.as_secs_f64()),
        window_seconds: Some(window.as_secs_f64()),
        settings: Some(
            "crawl binary, --frontier opensearch --spout queue (urls 3 shards, queues 1 shard, \
             1 replica each), frontier.max.buckets=50, fetcher.server.delay=2, --es-timeout 10"
                .to_string(),
        ),
        counts: summary,
        crawls,
    });
    site.shutdown().await;
}
