//! The browser protocol: rendered pages per second and the browser's peak memory with 1, 2, 4 and
//! 8 tabs, against squall's plain HTTP client fetching the same pages.
//!
//! `cargo bench --bench browser` serves the JavaScript test application (`tests/site`, `AppSite`)
//! on loopback: `BROWSER_HOSTS` host names (40) of `BROWSER_POSTS` posts (25), no API delay, so that
//! nothing but the renderer limits the rate. The post pages (`/post/ID`, the hosts taking turns)
//! are served as an HTML shell whose script fetches the post from `/api/post/ID` and renders it, so
//! a page holds its text only once rendered. The protocols are driven directly (no crawl, no
//! politeness): a driver keeps a fixed number of fetches in flight over the post pages, round and
//! round, through a warm-up of `BROWSER_WARMUP` seconds (3) and a window of `BROWSER_WINDOW`
//! seconds (10), and counts the fetches that end within the window.
//!
//! - **Browser** (`squall_browser::BrowserProtocol`, a fresh Chromium per run): N fetches in
//!   flight for `browser.tabs=N`, N in `BROWSER_TABS` (1,2,4,8), with `browser.settle.idle` =
//!   `BROWSER_SETTLE_IDLE` (0.3 s: a page has settled once no request has been in flight for that
//!   long, so it bounds each page's latency from below), `browser.max.rss.mb` = `BROWSER_MAX_RSS_MB`
//!   (2048: the protocol restarts the browser above it), the Chromium host rules of the tests, the
//!   other keys at their defaults (images, fonts and media blocked; restart after 1,000 pages). A
//!   page counts when its rendered HTML holds its post's text; a 200 without it is a miss
//!   (reported). Memory: the PSS of the browser's process tree, sampled every 200 ms from its start
//!   to the window's end (`benches/browser/memory.rs`); restarts are counted from its process ids.
//! - **HTTP** (`squall::protocol::HttpClient`): `BROWSER_HTTP_CONCURRENCY` fetches in flight (8),
//!   the same pages; a 200 counts (its body is the shell, without the post's text: the point of the
//!   comparison).
//!
//! For each: pages/s, p50 and p95 latency of the counted pages, misses and failures, and where the
//! CPU went in the window, in cores (`benches/browser/cpu.rs`): the crawler's side (this process
//! without the site's and the memory sampler's threads: the driver, the DevTools client or the
//! HTTP client), the site, the sampler, the browser's processes (with the renderers that exited in
//! the window and were reaped inside its tree: every host is a site of its own, so each navigation
//! starts a new renderer), other programs, and the machine's busy share. The candidates run in
//! mirrored order (HTTP, 1, 2, 4, 8 tabs, then 8, 4, 2, 1, HTTP, ...), `RUNS` runs (3).
//!
//! The JSON: the site, budget and settings; `http` and, per tab count, `tabs[]`: each figure's
//! median, min and max over the runs, the sums of misses, failures and restarts, `ratio_to_one_tab`
//! and `ratio_to_http` (of the medians), the peak memory and its largest value over the limit
//! (`peak_memory_to_limit`), and every run (`runs[]`, with its place in the order); then
//! `ratio_4_tabs_to_1_tab` and `peak_memory_to_limit` (the most tabs' largest peak against the
//! limit).
//!
//! Settings (env, `SQUALL_BENCH_` prefix) as named above; quick (`SQUALL_BENCH_QUICK=1`): 4 hosts of
//! 10 posts, 1 and 2 tabs, 1 s warm-up and 2 s windows, one run. Needs Chromium on `PATH` (Debian:
//! `apt-get install chromium`). Prints JSON.

mod common;

#[path = "browser/candidates.rs"]
mod candidates;
#[path = "browser/cpu.rs"]
mod cpu;
#[path = "browser/drive.rs"]
mod drive;
#[path = "browser/memory.rs"]
mod memory;
#[path = "browser/site.rs"]
mod site;
#[path = "browser/summary.rs"]
mod summary;

use std::time::Duration;

use candidates::{BrowserChoice, BrowserRun, HOST_RULES};
use common::{env_or, print_result, quick};
use drive::{Budget, Window};
use site::BenchSite;
use squall_bench_schema::Run;
use squall_bench_schema::browser::{Browser, Keys};
use squall_testsite::app::AppSpec;

/// One candidate of the order: HTTP, or the browser with this many tabs.
#[derive(Debug, Clone, Copy)]
enum Step {
    Http,
    Tabs(usize),
}

/// What the benchmark runs, from the environment.
struct Plan {
    spec: AppSpec,
    budget: Budget,
    tab_counts: Vec<usize>,
    choice: BrowserChoice,
    concurrency: usize,
    runs: usize,
}

impl Plan {
    /// The settings of the environment (`SQUALL_BENCH_...`), else the defaults.
    fn from_env() -> Plan {
        let seconds = |name: &str, quick_default: f64, default: f64| {
            Duration::from_secs_f64(env_or(name, if quick() { quick_default } else { default }))
        };
        let tabs = env_or(
            "BROWSER_TABS",
            if quick() { "1,2" } else { "1,2,4,8" }.to_string(),
        );
        let mut tab_counts: Vec<usize> = tabs
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .filter(|n| *n > 0)
            .collect();
        tab_counts.sort_unstable();
        tab_counts.dedup();
        Plan {
            spec: AppSpec {
                hosts: env_or("BROWSER_HOSTS", if quick() { 4 } else { 40 }),
                posts_per_host: env_or("BROWSER_POSTS", if quick() { 10 } else { 25 }),
                page_size: 10,
                api_delay: Duration::ZERO,
            },
            budget: Budget {
                warmup: seconds("BROWSER_WARMUP", 1.0, 3.0),
                window: seconds("BROWSER_WINDOW", 2.0, 10.0),
            },
            tab_counts,
            choice: BrowserChoice {
                settle_idle: env_or("BROWSER_SETTLE_IDLE", 0.3),
                max_rss_mb: env_or("BROWSER_MAX_RSS_MB", 2048),
            },
            concurrency: env_or("BROWSER_HTTP_CONCURRENCY", 8usize).max(1),
            runs: if quick() {
                1
            } else {
                env_or("RUNS", 3usize).max(1)
            },
        }
    }

    /// The candidates of run `run`: HTTP then the tab counts ascending, reversed in odd runs.
    fn steps(&self, run: usize) -> Vec<Step> {
        let mut steps = vec![Step::Http];
        steps.extend(self.tab_counts.iter().map(|n| Step::Tabs(*n)));
        if run % 2 == 1 {
            steps.reverse();
        }
        steps
    }
}

/// Every run of every candidate: the HTTP windows (with their place in the order) and the browser
/// runs.
async fn run_all(site: &BenchSite, plan: &Plan) -> (Vec<(usize, Window)>, Vec<BrowserRun>) {
    let mut http_runs = Vec::new();
    let mut browser_runs = Vec::new();
    let mut order = 0;
    for run in 0..plan.runs {
        for step in plan.steps(run) {
            order += 1;
            let started = std::time::Instant::now();
            match step {
                Step::Http => {
                    let window = candidates::http(site, plan.concurrency, plan.budget).await;
                    eprintln!("  http: {:.0} pages/s", window.pages_per_second());
                    http_runs.push((order, window));
                }
                Step::Tabs(tabs) => {
                    let one =
                        candidates::browser(site, &plan.choice, tabs, plan.budget, order).await;
                    eprintln!(
                        "  {tabs} tabs: {:.1} pages/s, p50 {:.0} ms, peak {:.0} MiB, {} misses, \
                         {} failures ({:.1} s in all)",
                        one.window.pages_per_second(),
                        one.window.latency_ms.0,
                        one.peak_mib(),
                        one.window.misses,
                        one.window.failures,
                        started.elapsed().as_secs_f64()
                    );
                    browser_runs.push(one);
                }
            }
        }
    }
    (http_runs, browser_runs)
}

#[tokio::main]
async fn main() {
    if squall_browser::find_on_path().is_none() {
        eprintln!(
            "the browser benchmark needs Chromium on PATH (none of chromium, chromium-browser, \
             google-chrome, chrome found; Debian: apt-get install chromium)"
        );
        std::process::exit(1);
    }
    let plan = Plan::from_env();
    let site = BenchSite::start(plan.spec.clone()).await;
    eprintln!(
        "site: {} hosts, {} post pages",
        plan.spec.hosts,
        site.posts.len()
    );
    let (http_runs, browser_runs) = run_all(&site, &plan).await;
    let (counts, choice) = (&plan.tab_counts, &plan.choice);
    print_result(&Browser {
        run: Run::at_commit("browser"),
        hosts: Some(plan.spec.hosts as u64),
        posts_per_host: Some(plan.spec.posts_per_host as u64),
        post_pages: Some(site.posts.len() as u64),
        warmup_seconds: Some(plan.budget.warmup.as_secs_f64()),
        window_seconds: Some(plan.budget.window.as_secs_f64()),
        runs: Some(plan.runs as u64),
        order: Some(
            "mirrored: HTTP then tabs ascending in even runs, the reverse in odd runs".to_string(),
        ),
        cores: Some(std::thread::available_parallelism().map_or(1, usize::from) as u64),
        settings: Keys {
            keys: choice.keys(),
            settle_idle_seconds: Some(choice.settle_idle),
            max_rss_mb: Some(choice.max_rss_mb as f64),
            host_rules: Some(HOST_RULES.to_string()),
        },
        memory: Some("PSS of the browser's process tree (smaps_rollup)".to_string()),
        memory_sample_every_ms: Some(memory::SAMPLE_EVERY.as_millis() as f64),
        http: Some(summary::http(&http_runs, plan.concurrency)),
        tabs: summary::tab_counts(counts, &browser_runs, &http_runs, choice.max_rss_mb),
        ratio_4_tabs_to_1_tab: summary::ratio_to_one_tab(counts, &browser_runs, 4),
        peak_memory_to_limit: Some(summary::peak_to_limit(&browser_runs, choice.max_rss_mb)),
    });
    site.stop().await;
}
