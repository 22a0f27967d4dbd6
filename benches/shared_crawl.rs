//! Three crawler processes sharing one queue frontier: do they share the work, and together reach
//! the politeness limit?
//!
//! `cargo bench --bench shared_crawl` serves a generated site of six hosts on loopback (the test
//! site of `tests/site`: 400 pages per host, about eight links per page, a few redirects, missing
//! pages and errors; all six home pages are the seeds, the rest is found by following links) and
//! starts three processes of the example crawl binary (`examples/crawl.rs`) on one queue frontier at
//! `SQUALL_BENCH_ES` (`--frontier opensearch --spout queue`, a fresh urls index and queues index per
//! run), each given the six seeds, `--resolve` for the site's host names, `--until-idle` and default
//! settings but `fetcher.server.delay=0.1`. Politeness then allows 6 hosts / 0.1 s = 60 pages per
//! second over all processes: that is the baseline.
//!
//! From the fetch logs (`--fetch-log`, one JSON line per fetch: url, key, started, finished):
//! pages per second from the first fetch's start to the last's, against 60; each process's share
//! of the pages and the hosts it fetched from; fetches of one host that started before another
//! fetch of that host ended, counted separately when the two were made by different processes
//! (politeness across processes: must be 0); the smallest gap between two fetches of a host by
//! different processes. From the site's own request log: URLs of the site never fetched, fetched
//! more than once, or not expected at all. From each process's `--summary-json`: why it stopped.
//! A process still running `SHARED_GRACE` seconds after every URL of the site was fetched is
//! stopped by the benchmark with SIGINT (said in the output); each process also stops itself after
//! `SHARED_SECONDS`.
//!
//! The crawl binary is not built by `cargo bench`: build it first (`cargo build --release --example
//! crawl`; scripts/bench does, and builds the debug one for `--quick`), or name one with
//! `SQUALL_BENCH_CRAWL_BIN`. Settings (env, `SQUALL_BENCH_` prefix): `RUNS` (3; quick 1),
//! `SHARED_PAGES` pages per host (400; quick 30), `SHARED_SECONDS` (240; quick 60), `SHARED_GRACE`
//! (60; quick 15); `KEEP_LOGS=1` keeps each run's directory (the processes' output and fetch logs).
//! Prints JSON.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use common::binary::{queue_frontier_args, set_args, site_args};
use common::fetch_log::{Fetch, read_log_lenient};
use common::frontier_data::delete;
use common::process::interrupt;
use common::{
    Spread, crawl_binary, engine_client, engine_url, env_or, fresh_temp_dir, print_result, quick,
    seconds, spawn_crawler, start_closed_site,
};
use serde_json::Value;
use squall_bench_schema::Run;
use squall_bench_schema::shared_crawl::{SharedCrawl, SharedProcess, SharedRun};
use squall_engine::queue::QueueSpoutConfig;
use squall_testsite::{Site, SiteSpec};

/// Crawler processes sharing the frontier.
const PROCESSES: usize = 3;
/// Hosts of the site.
const HOSTS: usize = 6;
/// The per-host delay, seconds.
const DELAY: f64 = 0.1;

/// Politeness over all processes: for each host, its fetches in order of start.
#[derive(Debug, Default)]
struct HostCheck {
    /// Fetches that started before an earlier-started fetch of the same host ended.
    overlaps: usize,
    /// Of those, the ones where the two fetches were made by different processes.
    cross_process_overlaps: usize,
    /// Times a host's next fetch was made by another process than its previous one.
    handovers: usize,
    /// Smallest time from the end of a host's fetch to the start of its next one.
    smallest_gap: Option<f64>,
    /// The same, where the two fetches were made by different processes.
    smallest_cross_process_gap: Option<f64>,
    /// Hosts fetched by more than one process.
    hosts_fetched_by_several: usize,
}

fn check_hosts(fetches: &[Fetch]) -> HostCheck {
    let mut by_host: BTreeMap<&str, Vec<&Fetch>> = BTreeMap::new();
    for fetch in fetches {
        by_host.entry(&fetch.key).or_default().push(fetch);
    }
    let mut check = HostCheck::default();
    let smaller = |a: Option<f64>, b: f64| Some(a.map_or(b, |a| a.min(b)));
    for spans in by_host.values_mut() {
        spans.sort_by_key(|f| (f.started, f.finished));
        let processes: BTreeSet<usize> = spans.iter().map(|f| f.process).collect();
        if processes.len() > 1 {
            check.hosts_fetched_by_several += 1;
        }
        // The fetch that ends last among those started so far, and the previous fetch.
        let mut latest: Option<&Fetch> = None;
        let mut previous: Option<&Fetch> = None;
        for &fetch in spans.iter() {
            if let Some(before) = previous
                && before.process != fetch.process
            {
                check.handovers += 1;
            }
            if let Some(last) = latest {
                let gap = seconds(fetch.started - last.finished);
                let other = last.process != fetch.process;
                if gap < 0.0 {
                    check.overlaps += 1;
                    if other {
                        check.cross_process_overlaps += 1;
                    }
                } else {
                    check.smallest_gap = smaller(check.smallest_gap, gap);
                    if other {
                        check.smallest_cross_process_gap =
                            smaller(check.smallest_cross_process_gap, gap);
                    }
                }
            }
            if latest.is_none_or(|l| fetch.finished > l.finished) {
                latest = Some(fetch);
            }
            previous = Some(fetch);
        }
    }
    check
}

/// A crawler process of one run.
struct Process {
    child: Child,
    started: Instant,
    log: PathBuf,
    summary: PathBuf,
    exited: Option<(Instant, Option<i32>)>,
    interrupted: bool,
}

impl Process {
    fn poll(&mut self) {
        if self.exited.is_none()
            && let Ok(Some(status)) = self.child.try_wait()
        {
            self.exited = Some((Instant::now(), status.code()));
        }
    }

    /// Asks the process to stop as Ctrl-C does (it finishes its fetches and writes its summary).
    fn interrupt(&mut self) {
        self.interrupted = true;
        interrupt(&self.child);
    }
}

/// The indices and the directory of one run.
struct RunPlace {
    id: String,
    urls_index: String,
    queues_index: String,
    dir: PathBuf,
}

impl RunPlace {
    /// Fresh indices and a fresh directory for run `run`.
    fn new(run: usize) -> RunPlace {
        let id = format!("{}-{run}", std::process::id());
        RunPlace {
            urls_index: format!("bench-shared-urls-{id}"),
            queues_index: format!("bench-shared-queues-{id}"),
            dir: fresh_temp_dir(&format!("squall-shared-crawl-{id}")),
            id,
        }
    }

    /// Starts the crawler processes, each with its fetch log and summary in the run's directory.
    fn spawn_processes(&self, site: &Site, binary: &Path, limit: Duration) -> Vec<Process> {
        let mut processes = Vec::new();
        for p in 0..PROCESSES {
            let log = self.dir.join(format!("fetch-{p}.jsonl"));
            let summary = self.dir.join(format!("summary-{p}.json"));
            let mut args = queue_frontier_args(
                &engine_url(),
                &self.urls_index,
                &self.queues_index,
                (1, 0),
                &format!("shared-crawl-{}-{p}", self.id),
            );
            args.extend(
                [
                    "--fetch-log",
                    &log.display().to_string(),
                    "--summary-json",
                    &summary.display().to_string(),
                    "--until-idle",
                    "--max-duration",
                    &limit.as_secs_f64().to_string(),
                ]
                .map(str::to_string),
            );
            args.extend(set_args(&[
                "http.agent.name=squall-bench",
                &format!("fetcher.server.delay={DELAY}"),
                &SiteSpec::exclude_outside_hosts(),
            ]));
            args.extend(site_args(site));
            let child = spawn_crawler(binary, &args, &self.dir, p);
            processes.push(Process {
                child,
                started: Instant::now(),
                log,
                summary,
                exited: None,
                interrupted: false,
            });
        }
        processes
    }

    /// Deletes the run's indices and, unless `SQUALL_BENCH_KEEP_LOGS=1`, its directory.
    async fn clean_up(&self) {
        let workers_index =
            QueueSpoutConfig::new(&self.urls_index, &self.queues_index).workers_index();
        delete(
            &engine_client(),
            &[&self.urls_index, &self.queues_index, &workers_index],
        )
        .await;
        if std::env::var("SQUALL_BENCH_KEEP_LOGS").is_ok_and(|v| v == "1") {
            eprintln!(
                "  its processes' output and fetch logs are in {}",
                self.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Waits for the processes to stop by themselves; once every URL of `wanted` was fetched, gives
/// them `grace` to notice, then interrupts them (and kills them a minute later). So does a run
/// past its `limit` and a minute from `started`.
async fn wait_for_processes(
    processes: &mut [Process],
    site: &Site,
    wanted: &BTreeSet<String>,
    started: Instant,
    (limit, grace): (Duration, Duration),
) {
    let mut all_fetched: Option<Instant> = None;
    let mut interrupted_at: Option<Instant> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        for process in processes.iter_mut() {
            process.poll();
        }
        if processes.iter().all(|p| p.exited.is_some()) {
            break;
        }
        if all_fetched.is_none() {
            let requested: BTreeSet<String> = site.requests().into_iter().map(|r| r.url).collect();
            if wanted.iter().all(|u| requested.contains(u)) {
                all_fetched = Some(Instant::now());
                eprintln!(
                    "  every URL of the site fetched after {:.1} s",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        let overdue = started.elapsed() > limit + Duration::from_secs(60);
        let idle_too_long = all_fetched.is_some_and(|t| t.elapsed() > grace);
        match interrupted_at {
            None if overdue || idle_too_long => {
                for process in processes.iter_mut().filter(|p| p.exited.is_none()) {
                    process.interrupt();
                }
                interrupted_at = Some(Instant::now());
            }
            Some(at) if at.elapsed() > Duration::from_secs(60) => {
                for process in processes.iter_mut().filter(|p| p.exited.is_none()) {
                    let _ = process.child.kill();
                    let _ = process.child.wait();
                    process.poll();
                }
            }
            _ => {}
        }
    }
}

/// The fetches of every process's log, and the lines that did not parse.
fn read_logs(processes: &[Process]) -> (Vec<Fetch>, usize) {
    let mut fetches = Vec::new();
    let mut unparsed = 0;
    for (p, process) in processes.iter().enumerate() {
        let (mine, bad) = read_log_lenient(p, &process.log);
        fetches.extend(mine);
        unparsed += bad;
    }
    (fetches, unparsed)
}

/// Each process's part of the crawl: its fetches, its share of them, its hosts, why it stopped;
/// and the shares alone, in process order. Times count from `first`, the first fetch's start.
fn per_process(
    processes: &[Process],
    fetches: &[Fetch],
    first: Option<DateTime<Utc>>,
) -> (Vec<SharedProcess>, Vec<f64>) {
    let total = fetches.len();
    let at = |t: Option<DateTime<Utc>>, start: Option<DateTime<Utc>>| match (t, start) {
        (Some(t), Some(s)) => Some(seconds(t - s)),
        _ => None,
    };
    let mut per_process = Vec::new();
    let mut shares = Vec::new();
    for (p, process) in processes.iter().enumerate() {
        let mine: Vec<&Fetch> = fetches.iter().filter(|f| f.process == p).collect();
        let hosts: BTreeSet<&str> = mine.iter().map(|f| f.key.as_str()).collect();
        let share = if total > 0 {
            mine.len() as f64 / total as f64
        } else {
            0.0
        };
        shares.push(share);
        let summary: Option<Value> = std::fs::read_to_string(&process.summary)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let (exited_seconds, exit_code) = match process.exited {
            Some((t, code)) => (Some((t - process.started).as_secs_f64()), code),
            None => (None, None),
        };
        per_process.push(SharedProcess {
            process: Some(p as u64),
            fetches: Some(mine.len() as u64),
            share: Some(share),
            hosts: Some(hosts.len() as u64),
            host_names: hosts.iter().map(|h| h.to_string()).collect(),
            first_fetch_seconds: at(mine.iter().map(|f| f.started).min(), first),
            last_fetch_seconds: at(mine.iter().map(|f| f.started).max(), first),
            stop: summary
                .as_ref()
                .and_then(|s| s["stop_reason"].as_str().map(str::to_string)),
            summary_pages: summary.as_ref().and_then(|s| s["pages"].as_u64()),
            stopped_by_benchmark: Some(process.interrupted),
            exit_code,
            exited_seconds,
        });
    }
    (per_process, shares)
}

/// Completeness, from the site's own log of requests (robots.txt aside).
struct SiteLog {
    /// Requests of each URL.
    counts: BTreeMap<String, usize>,
    /// URLs wanted and never requested.
    missing: usize,
    /// URLs requested more than once.
    twice: usize,
    /// URLs requested and not wanted.
    unexpected: usize,
}

impl SiteLog {
    fn read(site: &Site, wanted: &BTreeSet<String>) -> SiteLog {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for request in site.requests() {
            if request.path == "/robots.txt" {
                continue;
            }
            *counts.entry(request.url).or_default() += 1;
        }
        let missing = wanted.iter().filter(|u| !counts.contains_key(*u)).count();
        let twice = counts.iter().filter(|(_, n)| **n > 1).count();
        let unexpected = counts.keys().filter(|u| !wanted.contains(*u)).count();
        SiteLog {
            counts,
            missing,
            twice,
            unexpected,
        }
    }
}

/// URLs that appear in more than one line of the fetch logs.
fn logged_more_than_once(fetches: &[Fetch]) -> usize {
    let mut logged: BTreeMap<&str, usize> = BTreeMap::new();
    for fetch in fetches {
        *logged.entry(&fetch.url).or_default() += 1;
    }
    logged.values().filter(|n| **n > 1).count()
}

/// One run: the processes crawl the site on fresh indices; returns the run's JSON.
async fn run(
    site: &Site,
    binary: &Path,
    run: usize,
    limit: Duration,
    grace: Duration,
) -> (SharedRun, Option<f64>, Option<f64>) {
    let place = RunPlace::new(run);
    site.clear_requests();
    let expected = site.expected();
    let wanted = expected.reachable_in_scope_urls();

    let mut processes = place.spawn_processes(site, binary, limit);
    let started = Instant::now();
    wait_for_processes(&mut processes, site, &wanted, started, (limit, grace)).await;
    let wall = started.elapsed().as_secs_f64();

    let (fetches, unparsed) = read_logs(&processes);
    let first = fetches.iter().map(|f| f.started).min();
    let last = fetches.iter().map(|f| f.started).max();
    let span = match (first, last) {
        (Some(a), Some(b)) => seconds(b - a),
        _ => 0.0,
    };
    let rate = (fetches.len() > 1 && span > 0.0).then(|| (fetches.len() - 1) as f64 / span);
    let ideal = HOSTS as f64 / DELAY;
    let total = fetches.len();
    let (per_process, shares) = per_process(&processes, &fetches, first);
    let hosts = check_hosts(&fetches);
    let logged_twice = logged_more_than_once(&fetches);
    let log = SiteLog::read(site, &wanted);
    let problems = expected.check_requests(&site.requests());

    eprintln!(
        "  {total} fetches, {:.1} pages/s ({:.2} of {ideal}); shares {}; overlaps between processes {}; \
         never fetched {}, fetched twice {}",
        rate.unwrap_or(0.0),
        rate.unwrap_or(0.0) / ideal,
        shares
            .iter()
            .map(|s| format!("{s:.2}"))
            .collect::<Vec<_>>()
            .join("/"),
        hosts.cross_process_overlaps,
        log.missing,
        log.twice
    );
    let smallest_share = shares.iter().copied().min_by(f64::total_cmp);
    let count = |n: usize| Some(n as u64);
    let report = SharedRun {
        run: count(run),
        fetches: count(total),
        unparsed_log_lines: count(unparsed),
        seconds: Some(span),
        wall_seconds: Some(wall),
        pages_per_second: rate,
        ratio_to_ideal: rate.map(|r| r / ideal),
        processes: per_process,
        overlapping_fetches: count(hosts.overlaps),
        cross_process_overlaps: count(hosts.cross_process_overlaps),
        handovers: count(hosts.handovers),
        hosts_fetched_by_several: count(hosts.hosts_fetched_by_several),
        smallest_gap_seconds: hosts.smallest_gap,
        smallest_cross_process_gap_seconds: hosts.smallest_cross_process_gap,
        site_requests: count(log.counts.values().sum::<usize>()),
        missing_urls: count(log.missing),
        fetched_more_than_once: count(log.twice),
        logged_more_than_once: count(logged_twice),
        unexpected_requests: count(log.unexpected),
        problems: problems.into_iter().take(10).collect(),
    };
    place.clean_up().await;
    (report, rate, smallest_share)
}

#[tokio::main]
async fn main() {
    let runs: usize = if quick() { 1 } else { env_or("RUNS", 3).max(1) };
    let pages_per_host: usize = env_or("SHARED_PAGES", if quick() { 30 } else { 400 });
    let limit = Duration::from_secs(env_or("SHARED_SECONDS", if quick() { 60 } else { 240 }));
    let grace = Duration::from_secs(env_or("SHARED_GRACE", if quick() { 15 } else { 60 }));
    let binary = crawl_binary();
    let site = start_closed_site(HOSTS, pages_per_host).await;
    let site_urls = site.expected().reachable_in_scope_urls().len();
    eprintln!(
        "shared crawl: {PROCESSES} processes of {}, {HOSTS} hosts of {pages_per_host} pages ({site_urls} URLs), delay {DELAY} s",
        binary.display()
    );
    let mut crawls = Vec::new();
    let mut rates = Vec::new();
    let mut smallest_share: Option<f64> = None;
    for r in 0..runs {
        eprintln!("shared crawl: run {r}");
        let (report, rate, share) = run(&site, &binary, r, limit, grace).await;
        crawls.push(report);
        rates.extend(rate);
        if let Some(share) = share {
            smallest_share = Some(smallest_share.map_or(share, |s| s.min(share)));
        }
    }
    let ideal = HOSTS as f64 / DELAY;
    let rate = (!rates.is_empty()).then(|| Spread::of(&rates));
    print_result(&SharedCrawl {
        run: Run::now("shared_crawl"),
        processes: Some(PROCESSES as u64),
        hosts: Some(HOSTS as u64),
        pages_per_host: Some(pages_per_host as u64),
        site_urls: Some(site_urls as u64),
        delay_seconds: Some(DELAY),
        ideal_pages_per_second: Some(ideal),
        runs: Some(runs as u64),
        limit_seconds: Some(limit.as_secs_f64()),
        grace_seconds: Some(grace.as_secs_f64()),
        settings: Some(
            "crawl binary, --frontier opensearch --spout queue (urls index 1 shard, queues index \
             1 shard, no replicas), --until-idle, defaults but fetcher.server.delay=0.1"
                .to_string(),
        ),
        crawls,
        pages_per_second: rate,
        ratio_to_ideal: rate.map(|r| r.median / ideal),
        smallest_share,
    });
    site.shutdown().await;
}
