//! One measured crawl of the end-to-end benchmark: the example crawl binary as a child process,
//! read through its metrics and /proc during a window of time.

use std::process::Child;
use std::time::{Duration, Instant};

use squall_bench_schema::end_to_end::{CrawlRun, EngineWork};
use squall_engine::client::Method;
use squall_testsite::{Site, SiteSpec};

use crate::common::binary::{queue_frontier_args, set_args, site_args};
use crate::common::engine_stats::EngineStats;
use crate::common::frontier_data::{Targets, clone_index};
use crate::common::process::{
    cpu_seconds, interrupt, machine_jiffies, peak_rss_bytes, wait_or_kill,
};
use crate::common::{crawl_binary, engine_client_at, fresh_temp_dir, spawn_crawler};
use crate::metrics::{Metrics, scrape};

/// Primary shards of the indices a crawl creates: those of the background frontier (the spouts
/// benchmark's), so that a crawl among other hosts' URLs differs from one without in that only.
pub const SHARDS: u32 = 8;

/// What every crawl gets alike.
pub struct Budget {
    /// From the first fetch to the start of the window.
    pub warmup: Duration,
    /// The measured window.
    pub window: Duration,
    /// Hosts of the site.
    pub hosts: usize,
    /// The per-host delay, seconds.
    pub delay: f64,
}

/// Where the crawl's frontier lives.
#[derive(Debug, Clone, Copy)]
pub enum FrontierChoice {
    /// The embedded frontier in a directory of its own.
    Embedded,
    /// The queue frontier in the engine.
    Queue,
    /// StormCrawler's way: a status index in the engine, read by the aggregation spout.
    Aggregation,
}

impl FrontierChoice {
    /// Whether the frontier lives in the engine (its statistics are read).
    fn uses_engine(self) -> bool {
        !matches!(self, FrontierChoice::Embedded)
    }

    fn name(self) -> &'static str {
        match self {
            FrontierChoice::Embedded => "embedded",
            FrontierChoice::Queue => "queue",
            FrontierChoice::Aggregation => "aggregation",
        }
    }
}

/// The configuration every crawl of `hosts` hosts at `delay` gets.
pub fn settings(hosts: usize, delay: f64) -> Vec<String> {
    vec![
        "http.agent.name=squall-bench".to_string(),
        format!("fetcher.server.delay={delay}"),
        format!("frontier.max.buckets={hosts}"),
        format!("topology.max.spout.pending={}", 4 * hosts),
        format!("fetcher.max.urls.in.queues={}", 4 * hosts),
        // An outlink cache that holds the site's URLs (StormCrawler's default holds 10,000).
        "status.updater.cache.spec=maximumSize=1000000,expireAfterAccess=1h".to_string(),
        SiteSpec::exclude_outside_hosts(),
    ]
}

/// A loopback port nobody listens on right now, for the crawler's metrics.
fn free_port() -> u16 {
    match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("no free port: {e}"),
    }
}

/// The crawl binary's arguments for one run (a frontier in the engine at `engine`).
fn arguments(
    site: &Site,
    frontier: FrontierChoice,
    engine: &str,
    dir: &std::path::Path,
    id: &str,
    metrics: &str,
    budget: &Budget,
) -> Vec<String> {
    let mut args = match frontier {
        FrontierChoice::Embedded => vec![
            "--frontier".to_string(),
            "embedded".to_string(),
            "--frontier-path".to_string(),
            dir.join("frontier").display().to_string(),
        ],
        FrontierChoice::Queue => queue_frontier_args(
            engine,
            &format!("bench-e2e-urls-{id}"),
            &format!("bench-e2e-queues-{id}"),
            (SHARDS, 0),
            &format!("e2e-{id}"),
        ),
        FrontierChoice::Aggregation => [
            "--frontier",
            "opensearch",
            "--es-url",
            engine,
            "--spout",
            "aggregation",
            "--es-index",
            &format!("bench-e2e-status-{id}"),
            "--es-shards",
            &SHARDS.to_string(),
            "--es-replicas",
            "0",
        ]
        .map(str::to_string)
        .to_vec(),
    };
    let limit = budget.warmup + budget.window + Duration::from_secs(180);
    args.extend(
        [
            "--metrics-addr",
            metrics,
            "--max-duration",
            &limit.as_secs_f64().to_string(),
        ]
        .map(str::to_string),
    );
    let settings = settings(budget.hosts, budget.delay);
    args.extend(set_args(
        &settings.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    args.extend(site_args(site));
    args
}

/// Where a crawl's frontier lives: its kind, and the engine node (base URL) of those in one.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The kind of frontier.
    pub frontier: FrontierChoice,
    /// The engine's base URL (unused by the embedded frontier).
    pub engine: &'a str,
}

/// Crawls `site` on the frontier at `place` for the budget and reads what it did in the window;
/// with `background`, in copies of those indices (other hosts' URLs, none due, in the same
/// engine) rather than empty ones.
pub async fn run(
    site: &Site,
    place: Place<'_>,
    budget: &Budget,
    order: usize,
    background: Option<&Targets>,
) -> CrawlRun {
    let id = format!("{}-{order}", std::process::id());
    if let Some(background) = background {
        copy_background(place.frontier, place.engine, background, &id).await;
    }
    let mut crawl = Crawling::start(site, place, budget, id);
    crawl.wait_for_first_fetch().await;
    tokio::time::sleep(budget.warmup).await;
    let window = crawl.measure_window(budget.window).await;
    crawl.stop_after_window().await;
    let run = crawl_run(place.frontier, order, budget, window);
    report(&run);
    crawl.clean_up().await;
    run
}

/// A crawl binary running on one frontier: its process, its directory and its metrics address.
struct Crawling {
    frontier: FrontierChoice,
    engine: String,
    id: String,
    dir: std::path::PathBuf,
    metrics_addr: String,
    child: Child,
    client: reqwest::Client,
}

/// What the crawler, this process (the site), the machine and the engine did in the window.
struct Window {
    /// The window's length, seconds.
    seconds: f64,
    before: Metrics,
    after: Metrics,
    /// The crawler's CPU seconds in the window.
    cpu: f64,
    /// This process's CPU seconds in the window (the site's server).
    own: f64,
    /// The share of the machine's time its cores were busy.
    machine_busy: f64,
    /// The crawler's peak RSS, bytes.
    peak: u64,
    /// The engine's work per page, for a frontier in the engine.
    engine: Option<EngineWork>,
}

impl Crawling {
    /// Starts the crawl binary for run `id` on the frontier at `place`.
    fn start(site: &Site, place: Place<'_>, budget: &Budget, id: String) -> Crawling {
        let dir = fresh_temp_dir(&format!("squall-e2e-{id}"));
        let metrics_addr = format!("127.0.0.1:{}", free_port());
        let args = arguments(
            site,
            place.frontier,
            place.engine,
            &dir,
            &id,
            &metrics_addr,
            budget,
        );
        let child = spawn_crawler(&crawl_binary(), &args, &dir, 0);
        Crawling {
            frontier: place.frontier,
            engine: place.engine.to_string(),
            id,
            dir,
            metrics_addr,
            child,
            client: reqwest::Client::new(),
        }
    }

    /// Waits for the first fetch: the warm-up counts from it (the process injects the seeds first).
    async fn wait_for_first_fetch(&mut self) {
        let starting = Instant::now();
        loop {
            let fetched = scrape(&self.client, &self.metrics_addr)
                .await
                .map(|m| m.get("squall_fetch_total"));
            if fetched.unwrap_or(0.0) > 0.0 {
                break;
            }
            if starting.elapsed() > Duration::from_secs(120) || !running(&mut self.child) {
                panic!(
                    "the {} crawl fetched nothing; see {}",
                    self.frontier.name(),
                    self.dir.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The engine's statistics, for a frontier in the engine.
    async fn engine_stats(&self) -> Option<EngineStats> {
        if self.frontier.uses_engine() {
            EngineStats::read(&self.engine).await
        } else {
            None
        }
    }

    /// Reads the crawler's metrics, the CPU of both processes and of the machine at both ends of
    /// a window of `length`.
    async fn measure_window(&mut self, length: Duration) -> Window {
        let pid = self.child.id();
        let me = std::process::id();
        let engine_before = self.engine_stats().await;
        let (before, cpu_before, own_before, machine_before, at) = (
            read(&self.client, &self.metrics_addr).await,
            cpu_seconds(pid),
            cpu_seconds(me),
            machine_jiffies(),
            Instant::now(),
        );
        tokio::time::sleep(length).await;
        let seconds = at.elapsed().as_secs_f64();
        let after = read(&self.client, &self.metrics_addr).await;
        let engine_after = self.engine_stats().await;
        let (cpu_after, own_after, machine_after, peak) = (
            cpu_seconds(pid),
            cpu_seconds(me),
            machine_jiffies(),
            peak_rss_bytes(pid),
        );
        let pages = after.since(&before, "squall_fetch_total");
        let engine = match (&engine_before, &engine_after) {
            (Some(before), Some(after)) => Some(after.per_page(before, pages)),
            _ => None,
        };
        Window {
            seconds,
            before,
            after,
            cpu: cpu_after - cpu_before,
            own: own_after - own_before,
            machine_busy: (machine_after.0 - machine_before.0)
                / (machine_after.1 - machine_before.1).max(1.0),
            peak,
            engine,
        }
    }

    /// Stops the crawler, which must still be running when the window ends.
    async fn stop_after_window(&mut self) {
        if !running(&mut self.child) {
            panic!(
                "the {} crawl ended before its window did; see {}",
                self.frontier.name(),
                self.dir.display()
            );
        }
        stop(&mut self.child).await;
    }

    /// Deletes the run's indices and, unless `SQUALL_BENCH_KEEP_LOGS=1`, its directory.
    async fn clean_up(self) {
        if self.frontier.uses_engine() {
            delete_indices(&self.engine, &self.id).await;
        }
        if std::env::var("SQUALL_BENCH_KEEP_LOGS").is_ok_and(|v| v == "1") {
            eprintln!("  its output is in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The figures of run `order` on `frontier` from what its window saw.
fn crawl_run(frontier: FrontierChoice, order: usize, budget: &Budget, window: Window) -> CrawlRun {
    let Window {
        seconds,
        before,
        after,
        cpu,
        own,
        machine_busy,
        peak,
        engine,
    } = window;
    let pages = after.since(&before, "squall_fetch_total");
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    let site_cores = own / seconds;
    // What neither the crawler nor this process (the site) used: the engine, for the queue frontier.
    let other_cores = (machine_busy * cores - cpu / seconds - site_cores).max(0.0);
    let per_second = |name: &str| after.since(&before, name) / seconds;
    let mut run = CrawlRun {
        frontier: frontier.name().to_string(),
        order: order as u64,
        pages_per_second: pages / seconds,
        status_writes_per_second: per_second("squall_status_writes_total"),
        cpu_ms_per_page: if pages > 0.0 {
            cpu * 1000.0 / pages
        } else {
            0.0
        },
        peak_rss_mib: peak as f64 / (1024.0 * 1024.0),
        limiting_stage: String::new(),
        engine,
        window_seconds: seconds,
        pages_in_window: pages,
        pages_before_window: before.get("squall_fetch_total"),
        crawler_cpu_cores: cpu / seconds,
        machine_busy,
        site_cpu_cores: site_cores,
        other_cpu_cores: other_cores,
        fetch_seconds_per_second: per_second("squall_fetch_seconds_sum"),
        parse_seconds_per_second: per_second("squall_parse_seconds_sum"),
        status_store_seconds_per_second: per_second("squall_status_store_seconds_sum"),
        spout_query_seconds_per_second: per_second("squall_spout_query_seconds_sum"),
        spout_queries_per_second: per_second("squall_spout_query_seconds_count"),
        spout_in_flight: after.get("squall_spout_in_flight"),
        spout_max_pending: 4 * budget.hosts as u64,
        fetcher_queues: after.get("squall_fetcher_queues"),
        fetcher_queued: after.get("squall_fetcher_queued"),
        fetcher_active: after.get("squall_fetcher_active"),
        status_write_failures: after.get("squall_status_write_failures_total"),
    };
    run.limiting_stage = limiting_stage(budget, &run);
    run
}

/// The run's figures on stderr, as the crawl ends.
fn report(run: &CrawlRun) {
    eprintln!(
        "  {} frontier: {:.0} pages/s, {:.0} status writes/s, {:.2} ms CPU/page, {:.0} MiB peak RSS, crawler {:.2} cores, machine {:.0}% busy; limit: {}",
        run.frontier,
        run.pages_per_second,
        run.status_writes_per_second,
        run.cpu_ms_per_page,
        run.peak_rss_mib,
        run.crawler_cpu_cores,
        run.machine_busy * 100.0,
        run.limiting_stage
    );
    if let Some(engine) = &run.engine {
        eprintln!(
            "    engine: {:.2} ms CPU/page; {}",
            engine.cpu_ms_per_page.unwrap_or(0.0),
            engine_line(engine)
        );
    }
}

/// The stage that limits a crawl running at `rate`, read from its figures in order: politeness
/// when the rate is within 10 % of hosts / delay; the machine when its cores were busy 95 % of the
/// time, naming what used them most (the crawler, the site served by this process, or the rest:
/// the engine of the queue frontier); the spout's pending limit when the URLs in flight reached it; the frontier when the
/// fetcher held fewer queues than 90 % of the hosts (the spout did not hand out enough hosts);
/// else the fetcher's queues, each waiting its delay.
pub fn limiting_stage(budget: &Budget, run: &CrawlRun) -> String {
    let politeness = budget.hosts as f64 / budget.delay;
    if run.pages_per_second >= 0.9 * politeness {
        return "politeness (the rate is within 10 % of hosts / delay)".to_string();
    }
    if run.machine_busy >= 0.95 {
        let (crawler, site, other) = (
            run.crawler_cpu_cores,
            run.site_cpu_cores,
            run.other_cpu_cores,
        );
        let user = if other > crawler.max(site) {
            "the engine (and anything else running)"
        } else if crawler >= site {
            "the crawler"
        } else {
            "the site's server"
        };
        return format!(
            "CPU, mostly {user}: the machine was {:.0} % busy; crawler {crawler:.2} cores, site \
             {site:.2}, the rest {other:.2}",
            run.machine_busy * 100.0
        );
    }
    if run.spout_in_flight >= 0.95 * run.spout_max_pending as f64 {
        return "the spout's pending limit (topology.max.spout.pending)".to_string();
    }
    if run.fetcher_queues < 0.9 * budget.hosts as f64 {
        return format!(
            "the frontier: the fetcher held {:.0} host queues of {}",
            run.fetcher_queues, budget.hosts
        );
    }
    "the fetcher's host queues (each waits its delay; hosts have too few URLs due)".to_string()
}

/// The metrics at `addr`, or a panic when the process no longer answers.
async fn read(client: &reqwest::Client, addr: &str) -> Metrics {
    match scrape(client, addr).await {
        Some(metrics) => metrics,
        None => panic!("the crawler's metrics at {addr} do not answer"),
    }
}

fn running(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(None))
}

/// Stops the crawler as a user would (SIGINT), killing it after a minute.
async fn stop(child: &mut Child) {
    interrupt(child);
    wait_or_kill(child, Instant::now()).await;
}

/// Copies the background frontier into the indices run `id` crawls on (see [`clone_index`]).
async fn copy_background(frontier: FrontierChoice, engine: &str, background: &Targets, id: &str) {
    let client = engine_client_at(engine);
    let copies = match (frontier, background) {
        (
            FrontierChoice::Queue,
            Targets {
                queue_frontier: Some((urls, queues)),
                ..
            },
        ) => vec![
            (urls.clone(), format!("bench-e2e-urls-{id}")),
            (queues.clone(), format!("bench-e2e-queues-{id}")),
        ],
        (
            FrontierChoice::Aggregation,
            Targets {
                status: Some(status),
                ..
            },
        ) => {
            vec![(status.clone(), format!("bench-e2e-status-{id}"))]
        }
        _ => Vec::new(),
    };
    for (from, to) in copies {
        clone_index(&client, &from, &to, true).await;
    }
}

/// Deletes the indices of run `id` in the engine at `engine` (the queue frontier's, or the status index). A run
/// has one kind or the other: the names missing are skipped (without `ignore_unavailable` the
/// engine refuses the whole request, and every run's indices were left behind).
async fn delete_indices(engine: &str, id: &str) {
    let client = engine_client_at(engine);
    let path = format!("/bench-e2e-urls-{id},bench-e2e-queues-{id}*,bench-e2e-status-{id}");
    let query = [("ignore_unavailable", "true")];
    if let Err(e) = client.request(Method::Delete, &path, &query, None).await {
        eprintln!("  could not delete the run's indices ({path}): {e}");
    }
}

/// The engine's work per page by kind, on one line: `search 1.2 ms (3.4 ops)`, ...
fn engine_line(engine: &EngineWork) -> String {
    engine
        .kinds
        .iter()
        .map(|(name, kind)| {
            format!(
                "{name} {:.2} ms ({:.2} ops)",
                kind.ms_per_page, kind.operations_per_page
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
