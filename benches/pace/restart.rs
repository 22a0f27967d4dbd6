//! The restart rows: an adaptive crawl of the capacity site killed (SIGKILL, every process at
//! once) and started again on the frontier it left; in the first minute after, no host may be
//! asked more often than the pace it had before the kill allows (10 % over, and one request).
//! The pace is read from the site's log, not from squall (`paces_before`: the median gap of the
//! host's last requests before the kill).

use std::path::Path;
use std::time::{Duration, Instant};

use squall_bench_schema::pace::PaceRestart;
use squall_testsite::capacity::{CapacitySpec, FIRST_MINUTE, first_minute, paces_before};

use crate::crawl::{Crawl, Frontier};
use crate::rows::Row;
use crate::site::{capacity_args, capacity_site};

/// A pace this much over the floor counts as backed off.
const BACKED_OFF: f64 = 1.25;

/// Crawls a fresh capacity site of `spec` as `row` says for `before_kill`, kills the processes,
/// starts them again at once on the same frontier and crawls a minute more: the figures.
pub async fn run_restart(
    (name, row): (&str, Row),
    spec: &CapacitySpec,
    binary: &Path,
    before_kill: Duration,
) -> PaceRestart {
    eprintln!("pace: {name}");
    let site = capacity_site(spec.clone()).await;
    let frontier = Frontier::fresh(row.frontier, name);
    let settings = row.settings(spec.hosts.len());
    let args = capacity_args(&site);
    let limit = before_kill + FIRST_MINUTE + Duration::from_secs(60);
    let first = Crawl::start(
        binary,
        &frontier,
        (row.processes, 0),
        &settings,
        &args,
        limit,
    );
    tokio::time::sleep(before_kill).await;
    let killed_at = Instant::now();
    first.kill();
    let learned = paces_before(&site.records(), killed_at);

    let again = Crawl::start(
        binary,
        &frontier,
        (row.processes, row.processes),
        &settings,
        &args,
        limit,
    );
    let restarted_at = again.started;
    tokio::time::sleep(FIRST_MINUTE + Duration::from_secs(2)).await;
    again.stop().await;

    let records = site.records();
    let problems = first_minute(&records, restarted_at, &learned);
    let in_first_minute = records
        .iter()
        .filter(|r| !r.is_robots() && learned.contains_key(&r.request.host))
        .filter(|r| (restarted_at..restarted_at + FIRST_MINUTE).contains(&r.at()))
        .count();
    let floor = row.floor().as_secs_f64();
    let backed_off = learned
        .values()
        .filter(|pace| pace.as_secs_f64() > BACKED_OFF * floor)
        .count();
    eprintln!(
        "  {} hosts with a pace before the kill ({backed_off} backed off), {} over it in the first minute after",
        learned.len(),
        problems.len()
    );
    site.shutdown().await;
    frontier.remove().await;
    PaceRestart {
        name: name.to_string(),
        frontier: row.frontier.name().to_string(),
        processes: row.processes as u64,
        before_kill_seconds: before_kill.as_secs_f64(),
        hosts_checked: learned.len() as u64,
        hosts_backed_off: backed_off as u64,
        problems,
        requests_first_minute: in_first_minute as u64,
    }
}
