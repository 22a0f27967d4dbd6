//! The restart bar, read from the log alone: each host's pace as its requests showed it before a
//! crawl was stopped or killed, and the hosts asked more often than that pace allows after the
//! crawl started again.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::gate::CapacityRecord;
use super::judge::by_host;

/// The restart bar's span in the benchmark: the first minute after a start.
pub const FIRST_MINUTE: Duration = Duration::from_secs(60);

/// Requests whose gaps give a host's pace: its last 6 (5 gaps).
pub const PACE_REQUESTS: usize = 6;

/// Each host's pace as its requests arriving before `before` show it (robots.txt left out): the
/// median of the gaps between the arrivals of its last [`PACE_REQUESTS`]. Hosts asked fewer
/// times have none.
pub fn paces_before(records: &[CapacityRecord], before: Instant) -> HashMap<String, Duration> {
    let earlier: Vec<CapacityRecord> = records
        .iter()
        .filter(|r| r.at() < before)
        .cloned()
        .collect();
    by_host(&earlier)
        .into_iter()
        .filter(|(_, list)| list.len() >= PACE_REQUESTS)
        .map(|(host, list)| {
            let last = &list[list.len() - PACE_REQUESTS..];
            let mut gaps: Vec<Duration> = last.windows(2).map(|w| w[1].at() - w[0].at()).collect();
            gaps.sort();
            (host.to_string(), gaps[gaps.len() / 2])
        })
        .collect()
}

/// The restart bar: each host of `learned` (its pace learned before the restart) whose requests
/// in the [`FIRST_MINUTE`] from `start` exceed `1.1 × 60 s / pace + 1`, written as a problem. An
/// empty list passes.
pub fn first_minute(
    records: &[CapacityRecord],
    start: Instant,
    learned: &HashMap<String, Duration>,
) -> Vec<String> {
    over_pace(records, (start, FIRST_MINUTE), learned)
}

/// The same bar over any `span` from `start`: each host of `learned` with more requests in it
/// than [`allowed_in`] allows, written as a problem.
pub fn over_pace(
    records: &[CapacityRecord],
    (start, span): (Instant, Duration),
    learned: &HashMap<String, Duration>,
) -> Vec<String> {
    let by_host = by_host(records);
    let mut problems = Vec::new();
    for (host, pace) in learned {
        let Some(allowed) = allowed_in(span, *pace) else {
            continue;
        };
        let list = by_host.get(host.as_str()).map_or(&[][..], Vec::as_slice);
        let count = list
            .iter()
            .filter(|r| (start..start + span).contains(&r.at()))
            .count();
        if count as f64 > allowed {
            problems.push(format!(
                "{host}: {count} requests in the {span:?} from the start; its learned pace of \
                 {pace:?} allows {allowed:.1}"
            ));
        }
    }
    problems.sort();
    problems
}

/// `1.1 × span / pace + 1`: the most requests a host at `pace` may get in `span`, 10 % over;
/// none for a pace of zero (no bar).
pub fn allowed_in(span: Duration, pace: Duration) -> Option<f64> {
    (!pace.is_zero()).then(|| 1.1 * span.as_secs_f64() / pace.as_secs_f64() + 1.0)
}

/// [`allowed_in`] the [`FIRST_MINUTE`].
pub fn allowed_in_first_minute(pace: Duration) -> Option<f64> {
    allowed_in(FIRST_MINUTE, pace)
}
