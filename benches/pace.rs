//! Hosts that push back: how close each pacing policy gets to what every host can take, without
//! being refused, without asking inside a Retry-After window and without slowing the hosts down.
//!
//! `cargo bench --bench pace` serves the capacity site of `tests/site` in this process: 200 hosts
//! (`cap-000.test`, ...) whose hidden capacities climb from 0.2 to 20 requests/s and sum to 400
//! (`CapacitySpec::ladder(200, 0.2, 20, 400, 59)`); a host's answers slow down as its token
//! bucket drains, and beyond it the host refuses (429 or 503, with or without Retry-After, by
//! host). Each row crawls a fresh site with the example crawl binary (`--resolve` for the names,
//! the 200 home pages as seeds), a minute of warm-up then a 180 s window, and is judged by the
//! site's own request log (`squall_testsite::capacity::judge`):
//!
//! - useful pages/s (GET answers 200) against `Σ min(capacity, 1 / floor)`, the bar being 0.85;
//! - the window's requests refused (429 or 503), the bar 1 %;
//! - requests inside a Retry-After window (0) and same-host gaps under the floor (0);
//! - the p95 over every answer of the window of its time over its page's unloaded time (≤ 1.5),
//!   and per host: the largest and median host's p95 and the hosts over 1.5;
//! - the crawler's CPU per useful page, and the engine's for the queue frontier rows.
//!
//! The rows: `fixed` (today's default, 1 s), `fixed-tuned` (5 s, the slowest host's pace),
//! `block` (StormCrawler's URLFrontier curve: 60 s, doubled, capped at a day, 10 % jitter),
//! `adaptive` (floor 1 s) and `adaptive-fast` (`fetcher.pace.floor=0.25`) on the embedded
//! frontier; `shared-fixed`, `shared-adaptive` and `shared-adaptive-fast`, three processes on a
//! queue frontier at `SQUALL_BENCH_ES`; `restart-embedded` and `restart-shared`: adaptive for
//! 3 minutes, every process killed (SIGKILL) and started again on the same frontier, no host
//! asked in the first minute after more often than the pace its requests showed before the kill
//! allows (10 % over, and one request). Then the control rows, on the plain test site (200 hosts
//! of 60 pages, nothing pushes back) crawled to its end at 1 s: `fixed` and `adaptive`
//! interleaved in mirrored order over `PACE_CONTROL_RUNS` rounds (2), adaptive's pages/s over
//! fixed's the bar being 0.98; and `control-shared-fixed`, the three processes' rate there: the
//! engine's limit, which the shared rows are shown beside.
//!
//! The crawl binary is not built by `cargo bench`: `scripts/bench` builds it (or name one with
//! `SQUALL_BENCH_CRAWL_BIN`). Settings (env, `SQUALL_BENCH_` prefix): `PACE_ROWS` (a comma list
//! of the rows to run, default all), `PACE_CONTROL_RUNS`, `PACE_SET` (settings added to every
//! row, `key=value` separated by `;`: for trying one); `QUICK=1` runs 20 hosts summing to 40
//! requests/s, 10 s of warm-up and a 20 s window, a few rows, for a smoke test. `KEEP_LOGS=1`
//! keeps each row's directory (the processes' output). Prints JSON.

mod common;

#[path = "pace/control.rs"]
mod control;
#[path = "pace/crawl.rs"]
mod crawl;
#[path = "pace/restart.rs"]
mod restart;
#[path = "pace/rows.rs"]
mod rows;
#[path = "pace/site.rs"]
mod site;

use std::time::Duration;

use common::{crawl_binary, env_or, print_result, quick, start_closed_site};
use rows::{ADAPTIVE, Budget, capacity_rows, common_settings};
use squall_bench_schema::Run;
use squall_bench_schema::pace::{Pace, PaceRow};
use squall_testsite::capacity::CapacitySpec;

/// The sizes of a run: the published one, or the quick smoke test's.
struct Sizes {
    hosts: usize,
    capacity: f64,
    budget: Budget,
    before_kill: Duration,
    plain_pages: usize,
    control_runs: usize,
}

impl Sizes {
    fn of_this_run() -> Sizes {
        if quick() {
            Sizes {
                hosts: 20,
                capacity: 40.0,
                budget: Budget {
                    warm_up: Duration::from_secs(10),
                    window: Duration::from_secs(20),
                },
                before_kill: Duration::from_secs(20),
                plain_pages: 10,
                control_runs: 1,
            }
        } else {
            Sizes {
                hosts: 200,
                capacity: 400.0,
                budget: Budget {
                    warm_up: Duration::from_secs(60),
                    window: Duration::from_secs(180),
                },
                before_kill: Duration::from_secs(180),
                plain_pages: 60,
                control_runs: env_or("PACE_CONTROL_RUNS", 2).max(1),
            }
        }
    }
}

/// Whether the row `name` runs: every row unless `SQUALL_BENCH_PACE_ROWS` lists some (in quick
/// mode, a few).
fn wanted(name: &str) -> bool {
    match std::env::var("SQUALL_BENCH_PACE_ROWS") {
        Ok(list) => list.split(',').any(|n| n.trim() == name),
        Err(_) if quick() => [
            "fixed",
            "adaptive",
            "shared-adaptive",
            "restart-embedded",
            "control",
        ]
        .contains(&name),
        Err(_) => true,
    }
}

/// Notes the engine's limit on the shared rows: what they are held to beside their ideal.
fn note_engine_limit(rows: &mut [PaceRow], limit: Option<f64>) {
    let Some(limit) = limit else { return };
    for row in rows.iter_mut().filter(|r| r.frontier == "queue") {
        let bar = row.ideal_per_second.min(limit);
        row.note = Some(format!(
            "held to min(ideal, the engine's limit {limit:.1} pages/s) = {bar:.1}: {:.2}",
            row.useful_per_second / bar
        ));
    }
}

#[tokio::main]
async fn main() {
    let sizes = Sizes::of_this_run();
    let binary = crawl_binary();
    let spec = CapacitySpec::ladder(sizes.hosts, 0.2, 20.0, sizes.capacity, 59);
    eprintln!(
        "pace: {} hosts, capacity {:.1} requests/s in all, crawl binary {}",
        sizes.hosts,
        spec.total_rate(),
        binary.display()
    );
    let mut rows = Vec::new();
    for row in capacity_rows().into_iter().filter(|r| wanted(r.name)) {
        rows.push(rows::run_row(row, &spec, &binary, sizes.budget).await);
    }
    let mut restarts = Vec::new();
    let shared = ADAPTIVE.shared("shared-adaptive");
    for (name, row) in [("restart-embedded", ADAPTIVE), ("restart-shared", shared)] {
        if wanted(name) {
            let kill = sizes.before_kill;
            restarts.push(restart::run_restart((name, row), &spec, &binary, kill).await);
        }
    }
    let mut control = Vec::new();
    if wanted("control") {
        let site = start_closed_site(sizes.hosts, sizes.plain_pages).await;
        let limit = Duration::from_secs(600);
        control = control::run_control(&site, &binary, sizes.control_runs, limit).await;
        site.shutdown().await;
    }
    let engine_limit = control
        .iter()
        .find(|c| c.name == "control-shared-fixed")
        .and_then(|c| c.pages_per_second.map(|s| s.median));
    note_engine_limit(&mut rows, engine_limit);
    let rates: Vec<f64> = spec.hosts.iter().map(|h| h.rate).collect();
    let smallest = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let largest = rates.iter().copied().fold(0.0, f64::max);
    print_result(&Pace {
        run: Run::now("pace"),
        hosts: Some(sizes.hosts as u64),
        capacity_per_second: Some(spec.total_rate()),
        capacity_range: Some((smallest, largest)),
        warm_up_seconds: Some(sizes.budget.warm_up.as_secs_f64()),
        window_seconds: Some(sizes.budget.window.as_secs_f64()),
        settings: Some(format!(
            "crawl binary, {}; queue frontier rows: urls and queues index of 1 shard, no replicas",
            common_settings(sizes.hosts).join(", ")
        )),
        rows,
        restarts,
        control,
    });
}
