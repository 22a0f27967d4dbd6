//! The control rows: the plain test site (no host pushes back) crawled to its end at the default
//! delay, `fixed` and `adaptive` interleaved in mirrored order, so that what adaptive pacing costs
//! where nothing calls for it shows as a ratio; and the engine's limit, three processes on a
//! queue frontier crawling the same site, that the shared rows are held to beside their ideal.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use squall_bench_schema::Spread;
use squall_bench_schema::pace::PaceControl;
use squall_testsite::Site;

use crate::common::binary::site_args;
use crate::crawl::{Crawl, Frontier};
use crate::rows::{ADAPTIVE, FIXED, Row};
use crate::site::{plain_gaps_under, plain_rate};

/// How long the processes may go on once every URL of the site was asked for.
const GRACE: Duration = Duration::from_secs(10);

/// One crawl of the plain site to its end: pages/s and gaps under the delay, from its log.
async fn crawl_plain(site: &Site, row: Row, binary: &Path, limit: Duration) -> (Option<f64>, u64) {
    site.clear_requests();
    let frontier = Frontier::fresh(row.frontier, &format!("control-{}", row.name));
    let settings = row.settings(site.host_names().len());
    let mut args = site_args(site);
    args.push("--until-idle".to_string());
    let mut crawl = Crawl::start(
        binary,
        &frontier,
        (row.processes, 0),
        &settings,
        &args,
        limit,
    );
    let wanted = site.expected().reachable_in_scope_urls();
    let mut all_asked: Option<Instant> = None;
    while !crawl.ended() && all_asked.is_none_or(|at| at.elapsed() < GRACE) {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if all_asked.is_none() {
            let asked: BTreeSet<String> = site.requests().into_iter().map(|r| r.url).collect();
            all_asked = wanted.iter().all(|u| asked.contains(u)).then(Instant::now);
        }
    }
    crawl.stop().await;
    frontier.remove().await;
    let requests = site.requests();
    let delay = Duration::from_secs_f64(row.delay);
    (plain_rate(&requests), plain_gaps_under(&requests, delay))
}

/// `control-fixed` and `control-adaptive` over `runs` mirrored rounds (fixed first in even
/// rounds, adaptive first in odd ones), then `control-shared-fixed` once: the engine's limit.
pub async fn run_control(
    site: &Site,
    binary: &Path,
    runs: usize,
    limit: Duration,
) -> Vec<PaceControl> {
    let policies = [FIXED, ADAPTIVE];
    let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut gaps = [0u64; 2];
    for round in 0..runs {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            eprintln!("pace: control-{}, round {round}", policies[i].name);
            let (rate, under) = crawl_plain(site, policies[i], binary, limit).await;
            eprintln!(
                "  {:.1} pages/s, {under} gaps under the delay",
                rate.unwrap_or(0.0)
            );
            rates[i].extend(rate);
            gaps[i] += under;
        }
    }
    let median = |i: usize| (!rates[i].is_empty()).then(|| Spread::of(&rates[i]));
    let fixed = median(0).map(|s| s.median);
    let mut rows: Vec<PaceControl> = (0..2)
        .map(|i| PaceControl {
            name: format!("control-{}", policies[i].name),
            policy: policies[i].policy.to_string(),
            pages_per_second: median(i),
            ratio_to_fixed: median(i).zip(fixed).map(|(s, f)| s.median / f),
            gaps_under_delay: gaps[i],
        })
        .collect();

    let shared = FIXED.shared("shared-fixed");
    eprintln!("pace: control-shared-fixed (the engine's limit)");
    let (rate, under) = crawl_plain(site, shared, binary, limit).await;
    eprintln!(
        "  {:.1} pages/s, {under} gaps under the delay",
        rate.unwrap_or(0.0)
    );
    rows.push(PaceControl {
        name: "control-shared-fixed".to_string(),
        policy: shared.policy.to_string(),
        pages_per_second: rate.map(|r| Spread::of(&[r])),
        ratio_to_fixed: rate.zip(fixed).map(|(r, f)| r / f),
        gaps_under_delay: under,
    });
    rows
}
