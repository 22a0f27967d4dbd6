//! As a user starts them: crawls run to the end of their site with StormCrawler 3.4.0's archetype
//! files as published (`tests/fixtures/stormcrawler/archetype-3.4`: its `OS_IndexInit.sh`, seeds
//! injected by `injection.flux`, the crawl by `crawler.flux`), and with squall and no
//! configuration on each frontier. The site's request log judges them: pages/s between its 10th
//! and 90th percentile of requests, the whole site's time, the smallest gap between two requests
//! to one host, URLs requested twice; with the crawler's CPU and the engine's per page (from the
//! node's own statistics) and the peak RSS (see `as_given/setup.rs`).
//!
//! **Many hosts** (issue 43): a site of `ASGIVEN_HOSTS` hosts × `ASGIVEN_PAGES` pages (1,000 × 50)
//! at a 1 s delay (politeness-bound) and at 0.1 s (CPU-bound), `ASGIVEN` choosing the setups
//! (`files-aggregation,files-queue,default-embedded,default-queue,default-aggregation`),
//! `ASGIVEN_DELAYS` the delays (`1,0.1`).
//!
//! **Few hosts** (issue 60): a site of `ASGIVEN_FEW_HOSTS` hosts × `ASGIVEN_FEW_PAGES` pages (3 ×
//! 94) at `ASGIVEN_FEW_DELAY` (0.05 s), crawled with the files and each spout over the status
//! index (`files-aggregation`, `files-collapsing`, `files-hybrid`, the last two adding `--spout`):
//! few queues of many URLs, where a spout that refills a host late leaves it idle.
//!
//! The node is the one at `SQUALL_BENCH_ES`; `scripts/bench` starts one for this benchmark alone
//! with the bundled scripts' default heap (2 GB), the node a user gets from `scripts/opensearch
//! start`. A node just started spends its first crawls compiling (docs/design/engine-work.md:
//! 1.4-2.2 ms of engine CPU a page on its first crawl, 0.6-0.75 by the third), so one unmeasured
//! crawl of each engine setup of the many-host site runs first, for `ASGIVEN_WARM_UP` seconds
//! each (60; 0 leaves it out). Each part runs `RUNS` times (2) in mirrored order;
//! `ASGIVEN_LIMIT` bounds a crawl's seconds (900). Quick: 50 hosts × 10 pages at 0.1 s with
//! `files-aggregation,default-queue`, 2 hosts × 10 pages for the few, no warm-up, one run. The
//! crawl binary is not built by `cargo bench`: build it first (`cargo build --release --example
//! crawl`; scripts/bench does), or name one with `SQUALL_BENCH_CRAWL_BIN`. Prints JSON.

mod common;

#[path = "as_given/setup.rs"]
mod setup;

use std::time::Duration;

use common::fetch_driver::site_urls;
use common::{Spread, engine_url, env_or, print_result, quick, start_closed_site};
use setup::Setup;
use squall_bench_schema::Run;
use squall_bench_schema::as_given::{AsGiven, AsGivenResult, GivenRun, Row};

/// One part of the benchmark: a site, its setups and delays.
struct Plan {
    hosts: usize,
    pages: usize,
    setups: Vec<Setup>,
    delays: Vec<f64>,
    limit: Duration,
}

/// Setups named in a comma-separated list; an unknown name stops the benchmark.
fn setups(names: &str) -> Vec<Setup> {
    names
        .split(',')
        .map(str::trim)
        .map(|name| Setup::named(name).unwrap_or_else(|| panic!("no setup is named '{name}'")))
        .collect()
}

/// The many-host part, from its `ASGIVEN*` keys.
fn many_hosts(limit: Duration) -> Plan {
    let all = if quick() {
        "files-aggregation,default-queue"
    } else {
        "files-aggregation,files-queue,default-embedded,default-queue,default-aggregation"
    };
    Plan {
        hosts: env_or("ASGIVEN_HOSTS", if quick() { 50 } else { 1_000 }),
        pages: env_or("ASGIVEN_PAGES", if quick() { 10 } else { 50 }),
        setups: setups(&env_or("ASGIVEN", all.to_string())),
        delays: env_or(
            "ASGIVEN_DELAYS",
            if quick() { "0.1" } else { "1,0.1" }.to_string(),
        )
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect(),
        limit,
    }
}

/// The few-host part, from its `ASGIVEN_FEW*` keys.
fn few_hosts(limit: Duration) -> Plan {
    Plan {
        hosts: env_or("ASGIVEN_FEW_HOSTS", if quick() { 2 } else { 3 }),
        pages: env_or("ASGIVEN_FEW_PAGES", if quick() { 10 } else { 94 }),
        setups: setups(&env_or(
            "ASGIVEN_FEW",
            "files-aggregation,files-collapsing,files-hybrid".to_string(),
        )),
        delays: vec![env_or("ASGIVEN_FEW_DELAY", 0.05)],
        limit,
    }
}

/// Runs `plan`'s crawls `runs` times in mirrored order; their rows.
async fn crawl(plan: &Plan, runs: usize, order: &mut usize) -> AsGiven {
    let site = start_closed_site(plan.hosts, plan.pages).await;
    let site_urls = site_urls(&site).len();
    eprintln!(
        "as given: {} hosts × {} pages, {site_urls} reachable URLs",
        plan.hosts, plan.pages
    );
    let mut results: Vec<GivenRun> = Vec::new();
    for run in 0..runs {
        let mut steps: Vec<(Setup, f64)> = plan
            .delays
            .iter()
            .flat_map(|d| plan.setups.iter().map(move |s| (*s, *d)))
            .collect();
        if run % 2 == 1 {
            steps.reverse();
        }
        for (setup, delay) in steps {
            *order += 1;
            results.push(setup::run(&site, setup, delay, plan.limit, *order).await);
        }
    }
    site.shutdown().await;
    let rows = plan
        .delays
        .iter()
        .flat_map(|delay| plan.setups.iter().map(move |setup| (*setup, *delay)))
        .map(|(setup, delay)| row(&results, setup, delay, plan.hosts))
        .collect();
    AsGiven {
        hosts: Some(plan.hosts as u64),
        pages_per_host: Some(plan.pages as u64),
        site_urls: Some(site_urls as u64),
        runs: Some(runs as u64),
        rows,
    }
}

/// The row of `setup` at `delay`: medians over its runs.
fn row(results: &[GivenRun], setup: Setup, delay: f64, hosts: usize) -> Row {
    let mine: Vec<&GivenRun> = results
        .iter()
        .filter(|r| r.setup == setup.name() && r.delay_seconds == delay)
        .collect();
    let spread = |f: &dyn Fn(&GivenRun) -> Option<f64>| {
        let values: Vec<f64> = mine.iter().filter_map(|r| f(r)).collect();
        (!values.is_empty()).then(|| Spread::of(&values))
    };
    Row {
        setup: setup.name().to_string(),
        delay_seconds: delay,
        politeness_pages_per_second: hosts as f64 / delay,
        steady_pages_per_second: spread(&|r| Some(r.requests.steady_pages_per_second)),
        whole_site_seconds: spread(&|r| r.whole_site_seconds),
        whole_site_done: mine
            .iter()
            .filter(|r| r.whole_site_seconds.is_some())
            .count() as u64,
        crawler_cpu_ms_per_page: spread(&|r| Some(r.crawler_cpu_ms_per_page)),
        engine_cpu_ms_per_page: spread(&|r| r.engine_cpu_ms_per_page),
        peak_rss_mib: spread(&|r| Some(r.peak_rss_mib)),
        smallest_gap_seconds: mine
            .iter()
            .filter_map(|r| r.requests.smallest_gap_seconds)
            .min_by(f64::total_cmp),
        fetched_twice: mine.iter().map(|r| r.requests.fetched_twice).sum(),
        runs: mine.into_iter().cloned().collect(),
    }
}

/// One unmeasured crawl of each engine setup of `plan`, at its first delay, for `seconds` at most;
/// the setups crawled.
async fn warm_up(plan: &Plan, seconds: f64, order: &mut usize) -> Vec<String> {
    let Some(delay) = plan.delays.first().copied() else {
        return Vec::new();
    };
    if seconds <= 0.0 {
        return Vec::new();
    }
    let site = start_closed_site(plan.hosts, plan.pages).await;
    let limit = Duration::from_secs_f64(seconds);
    let mut warmed = Vec::new();
    for setup in plan.setups.iter().filter(|s| s.uses_engine()) {
        *order += 1;
        eprintln!(
            "  (warming the engine up: an unmeasured {} crawl)",
            setup.name()
        );
        let _ = setup::run(&site, *setup, delay, limit, *order).await;
        warmed.push(setup.name().to_string());
    }
    site.shutdown().await;
    warmed
}

/// The node's name, version and heap, as it says.
async fn describe_engine() -> Option<String> {
    let name = common::describe(&engine_url()).await?;
    let stats = common::engine_client()
        .request(
            squall_engine::client::Method::Get,
            "/_nodes/stats/jvm",
            &[],
            None,
        )
        .await
        .ok()?;
    let heap = stats["nodes"]
        .as_object()?
        .values()
        .filter_map(|n| n["jvm"]["mem"]["heap_max_in_bytes"].as_u64())
        .map(|b| format!("{:.1} GiB heap", b as f64 / f64::from(1u32 << 30)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!("{name} at {}, {heap}", engine_url()))
}

#[tokio::main]
async fn main() {
    let limit =
        Duration::from_secs_f64(env_or("ASGIVEN_LIMIT", if quick() { 120.0 } else { 900.0 }));
    let runs: usize = if quick() { 1 } else { env_or("RUNS", 2).max(1) };
    let (many, few) = (many_hosts(limit), few_hosts(limit));
    let mut order = 0;
    let warm_seconds = env_or("ASGIVEN_WARM_UP", if quick() { 0.0 } else { 60.0 });
    let warm_up = warm_up(&many, warm_seconds, &mut order).await;
    let many_hosts = crawl(&many, runs, &mut order).await;
    let few_hosts = crawl(&few, runs, &mut order).await;
    print_result(&AsGivenResult {
        run: Run::now("as_given"),
        engine: describe_engine().await,
        warm_up,
        many_hosts: Some(many_hosts),
        few_hosts: Some(few_hosts),
    });
}
