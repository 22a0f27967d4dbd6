//! What the live status page costs a crawl, and whether the live view's memory stays fixed.
//!
//! `cargo bench --bench live_view` runs two measurements:
//!
//! - **CPU.** The crawl binary crawls the demo site (served by this process, so that its CPU is not
//!   the crawler's) at the demo's rate (its hosts, the default 1 s delay), in three arms that crawl
//!   at the same time, each its own process and frontier: `--no-progress` (no live view at all:
//!   the baseline), and `--status-addr` with the page read once and `/status.json` every 5 s (what
//!   an open page does by default) or every second (`?refresh=1`). Each crawl runs
//!   `SQUALL_BENCH_LIVE_SECONDS` (default 60; 5 with SQUALL_BENCH_QUICK=1); `SQUALL_BENCH_RUNS`
//!   rounds (default 5, at most 10), each arm `SQUALL_BENCH_LIVE_COPIES` times over (default
//!   4: twelve crawls at once). The figure: the crawler process's CPU per page fetched, a page's
//!   arm over the baseline's that crawled beside it; their median, min and max, and their mean
//!   with its 95 % confidence interval. CPU is the kernel's accounting of each finished crawl
//!   (getrusage in a parent of its own: this binary run again), to the microsecond.
//! - **The document.** The time to make a fresh status document and write it as JSON (the median
//!   of 21, each after the last went stale), and its size.
//! - **Memory.** A live view fed synthetic events (a fetch and its status each, a new host every
//!   event up to a million hosts, errors of thirty causes), its document made every thousand
//!   events; the bytes it holds (counted by this binary's allocator) after 10 k, 100 k, 1 M and
//!   3 M events.
//!
//! Prints JSON (`squall_bench_schema::live_view`).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use cap::Cap;
use common::{Spread, crawl_binary, env_or, fresh_temp_dir, print_result, quick, runs};
use squall::live::{DocumentSource, LiveCrawl, LiveSettings};
use squall::message::{CrawlEvent, EventError, FetchRecord};
use squall::model::Status;
use squall_bench_schema::Run;
use squall_bench_schema::live_view::{LiveView, LiveViewArm, LiveViewMemory, MeanInterval};
use squall_testsite::{Site, SiteSpec};

#[global_allocator]
static ALLOCATOR: Cap<std::alloc::System> = Cap::new(std::alloc::System, usize::MAX);

/// The arms: a name, and how often the page's data is read (none: no live view at all).
const ARMS: [(&str, Option<Duration>); 3] = [
    ("baseline (no live view)", None),
    (
        "status page open (data every 5 s, the default)",
        Some(Duration::from_secs(5)),
    ),
    (
        "status page open, ?refresh=1 (every second)",
        Some(Duration::from_secs(1)),
    ),
];

/// What one crawl measured.
struct Measured {
    pages: f64,
    cpu_seconds: f64,
    wall_seconds: f64,
}

#[tokio::main]
async fn main() {
    if let Ok(spec) = std::env::var(MEASURE_ENV) {
        return measure_child(&spec);
    }
    let (document_us, document_bytes) = document_cost(if quick() { 3 } else { 21 });
    eprintln!("document: {document_us:.1} µs to make and write, {document_bytes} bytes");
    let budget = env_or("LIVE_SECONDS", if quick() { 5.0 } else { 60.0 });
    let rounds = runs().min(if quick() { 1 } else { 10 });
    let copies: usize = env_or("LIVE_COPIES", if quick() { 1 } else { 4 });
    let site = match Site::start(SiteSpec::default()).await {
        Ok(site) => site,
        Err(e) => panic!("site: {e}"),
    };
    let dir = fresh_temp_dir("squall-bench-live-view");
    // Per arm, one entry per (round, copy), in the same order for every arm: entry i of the
    // baseline and entry i of a page's arm crawled at the same time.
    let mut measured: [Vec<Measured>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..rounds {
        eprintln!("round {}", round + 1);
        // Every arm of a round crawls at the same time, `copies` times over, so that the
        // machine's moods (other load, the host's scheduling) fall on all of them alike.
        let crawls = (0..copies).flat_map(|copy| {
            let dir = &dir;
            let site = &site;
            ARMS.iter().enumerate().map(move |(i, (name, page))| {
                let run_dir = dir.join(format!("run-{round}-{copy}-{i}"));
                crawl(site, run_dir, (name, *page), budget)
            })
        });
        let done = futures::future::join_all(crawls).await;
        for (n, m) in done.into_iter().enumerate() {
            measured[n % ARMS.len()].push(m);
        }
    }
    let ratios = |page: &[Measured]| -> Vec<f64> {
        measured[0]
            .iter()
            .zip(page)
            .map(|(base, page)| per_page(page) / per_page(base) - 1.0)
            .collect()
    };
    let (default_refresh, every_second) = (ratios(&measured[1]), ratios(&measured[2]));
    print_result(&LiveView {
        run: Run::now("live_view"),
        budget_seconds: Some(budget),
        runs: Some(rounds as u64),
        copies: Some(copies as u64),
        concurrent: Some(true),
        hosts: Some(site.in_scope_host_names().len() as u64),
        delay_seconds: Some(1.0),
        poll_seconds: Some(5.0),
        arms: ARMS
            .iter()
            .zip(&measured)
            .map(|((name, _), runs)| arm(name, runs))
            .collect(),
        cpu_overhead: Some(Spread::of(&default_refresh)),
        cpu_overhead_every_second: Some(Spread::of(&every_second)),
        cpu_overhead_mean: MeanInterval::of(&default_refresh),
        cpu_overhead_every_second_mean: MeanInterval::of(&every_second),
        document_micros: Some(document_us),
        document_bytes: Some(document_bytes as u64),
        memory: memory(if quick() { 100_000 } else { 3_000_000 }),
    });
    site.shutdown().await;
}

fn per_page(m: &Measured) -> f64 {
    m.cpu_seconds / m.pages.max(1.0)
}

fn arm(name: &str, runs: &[Measured]) -> LiveViewArm {
    let of = |f: fn(&Measured) -> f64| Some(Spread::of(&runs.iter().map(f).collect::<Vec<_>>()));
    LiveViewArm {
        arm: name.to_string(),
        pages_per_second: of(|m| m.pages / m.wall_seconds),
        cpu_ms_per_page: of(|m| per_page(m) * 1000.0),
        cpu_cores: of(|m| m.cpu_seconds / m.wall_seconds),
    }
}

/// The crawl binary's arguments for the demo site served here, as `--demo-site` crawls it.
fn crawl_args(site: &Site, dir: &Path, budget: f64) -> Vec<String> {
    let mut args: Vec<String> = [
        "--no-progress",
        "--frontier-path",
        &dir.join("frontier").display().to_string(),
        "--max-duration",
        &budget.to_string(),
        "--summary-json",
        &dir.join("summary.json").display().to_string(),
        "--set",
        "http.agent.name=squall-bench",
        "--set",
        &SiteSpec::exclude_outside_hosts(),
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(common::binary::site_args(site));
    args
}

/// One crawl of `budget` seconds for the arm `(name, page)`: with a page, the status page served
/// and its data read that often. Its CPU is measured by a parent of its own ([`measure_child`]),
/// so that crawls running at once are told apart.
async fn crawl(
    site: &Site,
    dir: std::path::PathBuf,
    (name, page): (&str, Option<Duration>),
    budget: f64,
) -> Measured {
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("{}: {e}", dir.display());
    }
    let mut args = crawl_args(site, &dir, budget);
    let status_port = free_port();
    if page.is_some() {
        args.extend(["--status-addr".to_string(), status_port.to_string()]);
    }
    let this = std::env::current_exe().unwrap_or_else(|e| panic!("this benchmark's path: {e}"));
    let spec = serde_json::json!([crawl_binary(), args, dir]).to_string();
    let mut parent = tokio::process::Command::new(this);
    parent.env(MEASURE_ENV, spec);
    let started = Instant::now();
    let measuring = parent.output();
    let reader = page.map(|every| tokio::spawn(read_page(status_port, every)));
    let output = measuring
        .await
        .unwrap_or_else(|e| panic!("the crawl's measuring parent: {e}"));
    let wall = started.elapsed().as_secs_f64();
    let cpu: f64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| {
            panic!(
                "the crawl in {} measured nothing: {}",
                dir.display(),
                String::from_utf8_lossy(&output.stderr)
            )
        });
    if let Some(reader) = reader {
        reader.abort();
    }
    let summary: serde_json::Value = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("no summary in {}", dir.display()));
    let measured = Measured {
        pages: summary["pages"].as_f64().unwrap_or(0.0),
        cpu_seconds: cpu,
        wall_seconds: wall,
    };
    eprintln!(
        "  {name}: {} pages, {:.1} ms CPU, {:.4} ms a page",
        measured.pages,
        measured.cpu_seconds * 1000.0,
        per_page(&measured) * 1000.0
    );
    measured
}

/// Reads the page once, then its data `every` so often, as a browser showing it does.
async fn read_page(port: u16, every: Duration) {
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}/");
    let mut page_read = false;
    loop {
        tokio::time::sleep(every).await;
        if !page_read {
            page_read = http.get(&base).send().await.is_ok();
        }
        if let Ok(answer) = http.get(format!("{base}status.json")).send().await {
            let _ = answer.bytes().await;
        }
    }
}

/// Set in the environment of this binary run again as a crawl's measuring parent: the crawl's
/// binary, its arguments and its directory, as JSON.
const MEASURE_ENV: &str = "SQUALL_BENCH_LIVE_VIEW_MEASURE";

/// As a crawl's measuring parent (see [`MEASURE_ENV`]): runs the crawl, waits for it and prints
/// its CPU seconds (user + system): this process's one child, from getrusage, the kernel's own
/// accounting, to the microsecond, whatever else runs beside it.
fn measure_child(spec: &str) {
    let (binary, args, dir): (std::path::PathBuf, Vec<String>, std::path::PathBuf) =
        serde_json::from_str(spec).unwrap_or_else(|e| panic!("{MEASURE_ENV}: {e}"));
    let mut child = common::spawn_crawler(&binary, &args, &dir, 0);
    match child.wait() {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("the crawl in {} ended with {status}", dir.display()),
        Err(e) => panic!("waiting for the crawl: {e}"),
    }
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap_or_else(|e| panic!("getrusage: {e}"));
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    println!(
        "{}",
        seconds(usage.user_time()) + seconds(usage.system_time())
    );
}

fn free_port() -> u16 {
    match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("a free port: {e}"),
    }
}

/// The time to make a fresh document and write it as JSON, and its size, for a crawl of 25 hosts
/// that fetched 2,000 pages (a tenth failed): the median of `samples` documents, each made after
/// the last went stale.
fn document_cost(samples: usize) -> (f64, usize) {
    let live = LiveCrawl::new(LiveSettings::default());
    let observer = live.observer();
    for n in 0..2_000 {
        for event in synthetic_events(n, &format!("host-{}.test", n % 25)) {
            observer.on_event(&event);
        }
    }
    let mut micros = Vec::new();
    let mut bytes = 0;
    for _ in 0..samples {
        std::thread::sleep(Duration::from_millis(510));
        let started = Instant::now();
        let json = live
            .json()
            .unwrap_or_else(|e| panic!("the document as JSON: {e}"));
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        bytes = json.len();
    }
    (Spread::of(&micros).median, bytes)
}

/// The live view's bytes after more and more synthetic events.
fn memory(events: u64) -> Vec<LiveViewMemory> {
    let before = ALLOCATOR.allocated();
    let live = LiveCrawl::new(LiveSettings::default());
    let observer = live.observer();
    let marks = [10_000, 100_000, 1_000_000, 3_000_000];
    let mut out = Vec::new();
    for n in 0..events {
        let host = format!("host-{}.test", n % 1_000_000);
        for event in synthetic_events(n, &host) {
            observer.on_event(&event);
        }
        if n % 1_000 == 999 {
            drop(live.document());
        }
        if marks.contains(&(n + 1)) {
            drop(live.document());
            out.push(LiveViewMemory {
                events: n + 1,
                hosts: (n + 1).min(1_000_000),
                bytes: ALLOCATOR.allocated().saturating_sub(before) as u64,
            });
        }
    }
    out
}

/// A fetch of page `n` of `host`, and its processing: one in ten fails, for one of thirty causes.
fn synthetic_events(n: u64, host: &str) -> [CrawlEvent; 2] {
    let now = chrono::Utc::now();
    let failed = n.is_multiple_of(10);
    let fetch = FetchRecord {
        started: now - chrono::TimeDelta::milliseconds((n % 500) as i64),
        finished: now,
        http_status: Some(if failed { 500 } else { 200 }),
        error: None,
        bytes: 10_000,
        protocol: "http",
    };
    let url = format!("http://{host}/page/{n}");
    [
        CrawlEvent::Fetched {
            url: url.clone(),
            key: host.to_string(),
            fetch: fetch.clone(),
        },
        CrawlEvent::Processed {
            url,
            key: host.to_string(),
            status: if failed {
                Status::FetchError
            } else {
                Status::Fetched
            },
            fetch: Some(fetch),
            outlinks: 20,
            written: true,
            error: failed.then(|| EventError {
                cause: format!("cause-{}", n % 30),
                message: Some("synthetic".to_string()),
            }),
        },
    ]
}
