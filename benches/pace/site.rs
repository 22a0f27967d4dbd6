//! The two sites the pace rows crawl, served in the benchmark's process, and what the plain
//! site's log says (the capacity site has its own judge): its rate and gaps.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use squall_testsite::RequestRecord;
use squall_testsite::capacity::{CapacitySite, CapacitySpec};

use crate::common::binary::resolve_args_for;

/// Serves `spec` on loopback: every bucket full, no Retry-After window open.
pub async fn capacity_site(spec: CapacitySpec) -> CapacitySite {
    match CapacitySite::start(spec).await {
        Ok(site) => site,
        Err(e) => panic!("capacity site: {e}"),
    }
}

/// The crawl binary's `--resolve` arguments for every host of `site`, then its seeds.
pub fn capacity_args(site: &CapacitySite) -> Vec<String> {
    let mut args = resolve_args_for(&site.host_names(), site.addr());
    args.extend(site.seeds());
    args
}

/// The plain site's pages per second in `requests` (robots.txt left out): requests after the
/// first over the time from the first to the last; `None` for fewer than two.
pub fn plain_rate(requests: &[RequestRecord]) -> Option<f64> {
    let at: Vec<Instant> = pages(requests).map(|r| r.at).collect();
    let (first, last) = (at.iter().min()?, at.iter().max()?);
    let span = last.duration_since(*first).as_secs_f64();
    (at.len() > 1 && span > 0.0).then(|| (at.len() - 1) as f64 / span)
}

/// Same-host requests of `requests` that arrived less than `delay` after the host's previous one.
pub fn plain_gaps_under(requests: &[RequestRecord], delay: Duration) -> u64 {
    let mut by_host: BTreeMap<&str, Vec<Instant>> = BTreeMap::new();
    for request in pages(requests) {
        by_host.entry(&request.host).or_default().push(request.at);
    }
    let mut under = 0;
    for at in by_host.values_mut() {
        at.sort();
        under += at.windows(2).filter(|w| w[1] - w[0] < delay).count() as u64;
    }
    under
}

fn pages(requests: &[RequestRecord]) -> impl Iterator<Item = &RequestRecord> {
    requests.iter().filter(|r| r.path != "/robots.txt")
}
