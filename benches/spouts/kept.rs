//! The kept frontiers: each size loaded once and kept in the node, copied for every window; the
//! raw `_bulk` ceiling on them, and the largest kept for the end-to-end benchmark.

use chrono::{TimeDelta, Utc};
use squall_engine::client::EsClient;

use crate::common::frontier_data::{Generator, Targets, background, clone_index, delete, names};
use crate::common::kept_frontier::{Kept, KeptFrontiers};
use crate::common::raw_bulk::raw_bulk_rate;
use crate::common::{env_or, quick};
use crate::frontier::REFRESH;
use crate::trial::{WRITE_BATCH, WRITES_AT_ONCE};

/// About `count` URL numbers spread over a frontier of `size`, rewritten as generated to measure
/// the ceiling: URLs not due, which no window changes, so the frontier stays as it was (in an
/// all-due frontier every URL is due: there they are any URLs).
fn untouched_urls(size: u64, count: u64, all_due: bool) -> Vec<u64> {
    let stride = (size / count.max(1)).max(1);
    (0..size)
        .step_by(stride as usize)
        .map(|n| {
            if !all_due && Generator::is_due(n) {
                n + 1
            } else {
                n
            }
        })
        .filter(|&n| n < size)
        .collect()
}

/// The ceiling: a raw `_bulk` into the frontier's urls index, in requests of the size and number
/// in flight the immediate-ack fetcher uses.
pub async fn ceiling(
    kept: &KeptFrontiers,
    epoch: chrono::DateTime<Utc>,
    urls: &str,
    size: u64,
) -> f64 {
    let count = env_or("CEILING_DOCS", if quick() { 5_000 } else { 100_000 });
    let numbers = untouched_urls(size, count, kept.all_due);
    let rate = raw_bulk_rate(
        &kept.generator(epoch),
        urls,
        &numbers,
        WRITE_BATCH,
        WRITES_AT_ONCE,
    )
    .await;
    eprintln!("  raw _bulk: {rate:.0} docs/s");
    rate
}

/// The frontier just grown to the largest size, nothing due, kept under [`background`]'s names.
pub async fn keep_background(client: &EsClient, targets: &Targets) {
    let kept = background();
    let names = names(&kept);
    delete(
        client,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    for (from, to) in self::names(targets).iter().zip(&names) {
        clone_index(client, from, to, false).await;
    }
    eprintln!("spouts: kept the frontier as {}", names.join(", "));
}

/// The benchmark's kept frontiers of this shape, copied with its refresh interval. One older than
/// `SQUALL_BENCH_KEPT_DAYS` (default 3) is loaded again: URLs that were not due at its load come due
/// from an hour after it on (about 2 % of the frontier a day).
pub fn kept_frontiers(hosts: u64, shards: u32, all_due: bool) -> KeptFrontiers {
    let max_age = TimeDelta::try_hours((env_or("KEPT_DAYS", 3.0_f64) * 24.0).round() as i64)
        .unwrap_or(TimeDelta::days(3));
    KeptFrontiers {
        hosts,
        shards,
        all_due,
        refresh: format!("{}s", REFRESH.as_secs()),
        max_age,
    }
}

/// Where every window starts: a fresh copy of the kept frontier, so that no spout meets a frontier
/// an earlier window drained (at 1 M, one run of the five spouts writes back most of the due URLs).
pub struct Start<'a> {
    /// The kept frontiers.
    pub frontiers: &'a KeptFrontiers,
    /// The one copied.
    pub kept: &'a Kept,
    /// Where it is copied to.
    pub targets: &'a Targets,
}

impl Start<'_> {
    /// Copies the kept frontier into the targets.
    pub async fn copy(&self, client: &EsClient) {
        self.frontiers
            .working_copy(client, self.kept, self.targets)
            .await;
    }
}
