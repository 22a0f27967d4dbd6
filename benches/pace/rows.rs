//! The rows crawling the capacity site: which policy, frontier and floor each runs, and one row's
//! crawl from start to figures (a warm-up, then the window the site's log is judged over).

use std::path::Path;
use std::time::{Duration, Instant};

use squall_bench_schema::pace::PaceRow;
use squall_testsite::capacity::{CapacitySpec, CapacityVerdict, HostRow, judge};

use crate::common::engine_stats::EngineStats;
use crate::common::engine_url;
use crate::crawl::{Crawl, Frontier, FrontierKind};
use crate::site::{capacity_args, capacity_site};

/// Crawl processes of the shared rows.
pub const SHARED_PROCESSES: usize = 3;

/// One way of crawling the capacity site.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// Its name in the results.
    pub name: &'static str,
    /// Where its frontier lives.
    pub frontier: FrontierKind,
    /// Crawl processes on that frontier.
    pub processes: usize,
    /// `fetcher.pace.policy`.
    pub policy: &'static str,
    /// `fetcher.server.delay`, seconds.
    pub delay: f64,
    /// `fetcher.pace.floor`, seconds, when opted in.
    pub fast_floor: Option<f64>,
}

impl Row {
    const fn embedded(name: &'static str, policy: &'static str, delay: f64) -> Row {
        Row {
            name,
            frontier: FrontierKind::Embedded,
            processes: 1,
            policy,
            delay,
            fast_floor: None,
        }
    }

    /// The same row on a queue frontier shared by [`SHARED_PROCESSES`] processes.
    pub const fn shared(self, name: &'static str) -> Row {
        Row {
            name,
            frontier: FrontierKind::Queue,
            processes: SHARED_PROCESSES,
            ..self
        }
    }

    /// The same row with the opted-in faster `floor`.
    pub const fn faster(self, name: &'static str, floor: f64) -> Row {
        Row {
            name,
            fast_floor: Some(floor),
            ..self
        }
    }

    /// The shortest same-host interval the row keeps: the opted-in floor, else the delay.
    pub fn floor(&self) -> Duration {
        Duration::from_secs_f64(self.fast_floor.unwrap_or(self.delay))
    }

    /// Every setting of a crawl of this row on `hosts` hosts: [`common_settings`], then its own.
    pub fn settings(&self, hosts: usize) -> Vec<String> {
        let mut settings = common_settings(hosts);
        settings.extend(self.own_settings());
        settings
    }

    /// The settings that make this row (beside [`common_settings`]).
    pub fn own_settings(&self) -> Vec<String> {
        let mut settings = vec![
            format!("fetcher.pace.policy={}", self.policy),
            format!("fetcher.server.delay={}", self.delay),
        ];
        settings.extend(self.fast_floor.map(|f| format!("fetcher.pace.floor={f}")));
        settings
    }
}

/// Today's fixed delay.
pub const FIXED: Row = Row::embedded("fixed", "fixed", 1.0);
/// squall's policy at the default floor.
pub const ADAPTIVE: Row = Row::embedded("adaptive", "adaptive", 1.0);

/// The rows on the capacity site, in the order they run.
pub fn capacity_rows() -> Vec<Row> {
    let fast = ADAPTIVE.faster("adaptive-fast", 0.25);
    vec![
        FIXED,
        // Tuned by hand to the slowest host (0.2 requests/s).
        Row::embedded("fixed-tuned", "fixed", 5.0),
        // StormCrawler's URLFrontier curve (the urlfrontier.backoff.* defaults).
        Row::embedded("block", "block", 1.0),
        ADAPTIVE,
        fast,
        FIXED.shared("shared-fixed"),
        ADAPTIVE.shared("shared-adaptive"),
        fast.shared("shared-adaptive-fast"),
    ]
}

/// The settings of every crawl of `hosts` hosts: a fetch thread for each URL a host may be
/// asked for at once, and room for every host in the spout and the fetcher; then any given in
/// `SQUALL_BENCH_PACE_SET` (`key=value` pairs separated by `;`, for trying a setting on every
/// row: the results name them).
pub fn common_settings(hosts: usize) -> Vec<String> {
    let mut settings = vec![
        "http.agent.name=squall-bench".to_string(),
        format!("frontier.max.buckets={hosts}"),
        format!("topology.max.spout.pending={}", 4 * hosts),
        format!("fetcher.max.urls.in.queues={}", 4 * hosts),
        format!("fetcher.threads.number={}", 2 * hosts),
        "status.updater.cache.spec=maximumSize=1000000,expireAfterAccess=1h".to_string(),
    ];
    let tried = std::env::var("SQUALL_BENCH_PACE_SET").unwrap_or_default();
    settings.extend(
        tried
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    );
    settings
}

/// How long a row crawls before and during its window.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// From the start to the window.
    pub warm_up: Duration,
    /// The window judged.
    pub window: Duration,
}

/// Crawls a fresh capacity site of `spec` as `row` says with `binary`: the figures of the window.
pub async fn run_row(row: Row, spec: &CapacitySpec, binary: &Path, budget: Budget) -> PaceRow {
    eprintln!("pace: {}", row.name);
    let site = capacity_site(spec.clone()).await;
    let frontier = Frontier::fresh(row.frontier, row.name);
    let settings = row.settings(spec.hosts.len());
    let limit = budget.warm_up + budget.window + Duration::from_secs(60);
    let crawl = Crawl::start(
        binary,
        &frontier,
        (row.processes, 0),
        &settings,
        &capacity_args(&site),
        limit,
    );
    tokio::time::sleep_until((crawl.started + budget.warm_up).into()).await;
    let engine = row.frontier == FrontierKind::Queue;
    let before = (
        Instant::now(),
        crawl.cpu_seconds(),
        engine_reading(engine).await,
    );
    tokio::time::sleep(budget.window).await;
    let after = (
        Instant::now(),
        crawl.cpu_seconds(),
        engine_reading(engine).await,
    );
    crawl.stop().await;

    let verdict = judge(
        &site.records(),
        site.spec(),
        (before.0, after.0),
        row.floor(),
    );
    let useful = verdict.figures.useful as f64;
    let per_page = |ms: f64| (useful > 0.0).then(|| ms / useful);
    let engine_ms = match (&before.2, &after.2) {
        (Some(b), Some(a)) => a.per_page(b, useful).cpu_ms_per_page,
        _ => None,
    };
    site.shutdown().await;
    frontier.remove().await;
    let f = &verdict.figures;
    eprintln!(
        "  {:.1} useful pages/s ({:.2} of {:.1}), refused {:.2} %, inside Retry-After {}, gaps under the floor {}",
        verdict.useful_per_s,
        verdict.ratio(),
        verdict.ideal_per_s,
        100.0 * f.refused_share(),
        f.inside_retry_after,
        f.gaps_under_floor
    );
    PaceRow {
        name: row.name.to_string(),
        frontier: row.frontier.name().to_string(),
        processes: row.processes as u64,
        settings: row.own_settings(),
        floor_seconds: row.floor().as_secs_f64(),
        useful_per_second: verdict.useful_per_s,
        ideal_per_second: verdict.ideal_per_s,
        ideal_one_at_a_time_per_second: verdict.ideal_one_at_a_time_per_s,
        ratio_to_ideal: verdict.ratio(),
        requests: f.requests as u64,
        repeated: f.repeated as u64,
        refused_share: f.refused_share(),
        inside_retry_after: f.inside_retry_after as u64,
        gaps_under_floor: f.gaps_under_floor as u64,
        smallest_gap_seconds: f.smallest_gap.map(|g| g.as_secs_f64()),
        p95_over_unloaded: verdict.p95_every_answer,
        p95_over_unloaded_max: verdict.p95_over_unloaded_max(),
        p95_over_unloaded_median: verdict.p95_over_unloaded_median(),
        hosts_p95_over_bar: Some(verdict.hosts_p95_over(P95_BAR) as u64),
        crawler_cpu_ms_per_page: per_page(1000.0 * (after.1 - before.1)),
        engine_cpu_ms_per_page: engine_ms,
        note: None,
        slowest_hosts: slowest_hosts(&verdict, spec),
    }
}

/// The bar on the p95 answer time over unloaded: hosts over it are counted.
const P95_BAR: f64 = 1.5;

/// How many hosts [`slowest_hosts`] names.
const SLOWEST: usize = 5;

/// The hosts of the largest p95 answer time over unloaded, worst first, each written out.
fn slowest_hosts(verdict: &CapacityVerdict, spec: &CapacitySpec) -> Vec<String> {
    let mut hosts: Vec<&HostRow> = verdict.hosts.iter().filter(|h| h.p95.is_some()).collect();
    hosts.sort_by(|a, b| b.p95.unwrap_or(0.0).total_cmp(&a.p95.unwrap_or(0.0)));
    hosts
        .into_iter()
        .take(SLOWEST)
        .map(|h| {
            let over = spec.host(&h.name).map(|c| c.over);
            format!(
                "{} ({:.2} requests/s, {over:?} over it): p95 {:.2}, {} requests, {} refused",
                h.name,
                h.capacity,
                h.p95.unwrap_or(0.0),
                h.figures.requests,
                h.figures.refused
            )
        })
        .collect()
}

/// The engine's statistics now, for a row on the engine.
async fn engine_reading(engine: bool) -> Option<EngineStats> {
    if engine {
        EngineStats::read(&engine_url()).await
    } else {
        None
    }
}
