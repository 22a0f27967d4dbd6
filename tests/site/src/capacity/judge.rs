//! The judge: the figures a pacing crawl is held to, read from the capacity site's request log
//! alone. `/robots.txt` requests and hosts the spec does not have are left out throughout.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::gate::CapacityRecord;
use super::spec::{CapacitySpec, HostCapacity};

/// The figures the log gives of one host's requests, or of every host's summed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Requests in the window.
    pub requests: usize,
    /// GET requests answered 200 in the window.
    pub useful: usize,
    /// Of those, the ones for a page the host had already served 200 (earlier in the log): a
    /// crawl that fetches a page twice gains nothing by it.
    pub repeated: usize,
    /// Requests answered 429 or 503 in the window.
    pub refused: usize,
    /// Requests (anywhere in the log) arriving inside a Retry-After window an earlier answer
    /// of the same host announced.
    pub inside_retry_after: usize,
    /// Same-host gaps (anywhere in the log) from the end of one answer (arrival + host-side
    /// latency) to the next arrival that are shorter than the floor.
    pub gaps_under_floor: usize,
    /// The smallest same-host gap, if a host had two requests.
    pub smallest_gap: Option<Duration>,
}

impl Figures {
    /// The figures of `records`, one host's in order of arrival: counts in `window`, Retry-After
    /// windows and gaps (against `floor`) over all of them.
    fn of(records: &[&CapacityRecord], window: (Instant, Instant), floor: Duration) -> Figures {
        let inside = |r: &&&CapacityRecord| (window.0..window.1).contains(&r.at());
        let in_window: Vec<&&CapacityRecord> = records.iter().filter(inside).collect();
        let refusal = |r: &&&CapacityRecord| matches!(r.request.status, 429 | 503);
        let useful = |r: &&&CapacityRecord| r.request.method == "GET" && r.request.status == 200;
        let gaps = gaps(records);
        Figures {
            requests: in_window.len(),
            useful: in_window.iter().filter(|r| useful(r)).count(),
            repeated: repeated(records, window),
            refused: in_window.iter().filter(|r| refusal(r)).count(),
            inside_retry_after: inside_retry_after(records),
            gaps_under_floor: gaps.iter().filter(|&&gap| gap < floor).count(),
            smallest_gap: gaps.iter().min().copied(),
        }
    }

    /// The share of the window's requests answered 429 or 503, the bar being 1 %.
    pub fn refused_share(&self) -> f64 {
        ratio(self.refused as f64, self.requests as f64)
    }
}

impl<'a> std::iter::Sum<&'a Figures> for Figures {
    /// The counts added up, the smallest of the smallest gaps.
    fn sum<I: Iterator<Item = &'a Figures>>(all: I) -> Figures {
        all.fold(Figures::default(), |sum, one| Figures {
            requests: sum.requests + one.requests,
            useful: sum.useful + one.useful,
            repeated: sum.repeated + one.repeated,
            refused: sum.refused + one.refused,
            inside_retry_after: sum.inside_retry_after + one.inside_retry_after,
            gaps_under_floor: sum.gaps_under_floor + one.gaps_under_floor,
            smallest_gap: sum.smallest_gap.into_iter().chain(one.smallest_gap).min(),
        })
    }
}

/// What the log says of one host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    /// The host's name.
    pub name: String,
    /// Its capacity, in requests/s.
    pub capacity: f64,
    /// Its unloaded latency.
    pub unloaded: Duration,
    /// Its requests' figures.
    pub figures: Figures,
    /// The 95th percentile (nearest rank), over its 200 answers, of what the host's load
    /// multiplied each page's unloaded time by.
    pub p95: Option<f64>,
}

impl HostRow {
    /// The p95 of answer times over the pages' unloaded times, the bar being 1.5.
    pub fn p95_over_unloaded(&self) -> Option<f64> {
        self.p95
    }
}

/// The figures of a crawl of a capacity site, from its log.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityVerdict {
    /// The window's length.
    pub window: Duration,
    /// GET requests answered 200 in the window, per second: the useful pages/s.
    pub useful_per_s: f64,
    /// `Σ min(capacity, 1 / floor)`: the most a crawl at the floor can take.
    pub ideal_per_s: f64,
    /// `Σ min(capacity, 1 / (floor + unloaded))`: the most one fetch at a time per host reaches.
    pub ideal_one_at_a_time_per_s: f64,
    /// Every host's figures, summed.
    pub figures: Figures,
    /// Per host, in the spec's order.
    pub hosts: Vec<HostRow>,
    /// The 95th percentile (nearest rank), over every host's answers 200 in the window, of what
    /// the host's load multiplied each page's unloaded time by: the site's p95 answer time over
    /// unloaded.
    pub p95_every_answer: Option<f64>,
}

impl CapacityVerdict {
    /// `useful_per_s / ideal_per_s`, the bar being 0.85 (0 when the ideal is 0).
    pub fn ratio(&self) -> f64 {
        ratio(self.useful_per_s, self.ideal_per_s)
    }

    /// The largest `p95 / unloaded` over the hosts that served a page.
    pub fn p95_over_unloaded_max(&self) -> Option<f64> {
        self.p95_ratios().last().copied()
    }

    /// The median `p95 / unloaded` over the hosts that served a page.
    pub fn p95_over_unloaded_median(&self) -> Option<f64> {
        let ratios = self.p95_ratios();
        let middle = ratios.len() / 2;
        match ratios.len() {
            0 => None,
            n if n % 2 == 1 => Some(ratios[middle]),
            _ => Some((ratios[middle - 1] + ratios[middle]) / 2.0),
        }
    }

    /// How many hosts' `p95 / unloaded` is over `bar`.
    pub fn hosts_p95_over(&self, bar: f64) -> usize {
        self.p95_ratios().iter().filter(|&&p95| p95 > bar).count()
    }

    fn p95_ratios(&self) -> Vec<f64> {
        let mut ratios: Vec<f64> = self
            .hosts
            .iter()
            .filter_map(HostRow::p95_over_unloaded)
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios
    }
}

/// `a / b`, 0 when `b` is 0.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// The figures of `records` (a capacity site's log) for the site `spec`: rates and shares in
/// `window` (from its start, inclusive, to its end, exclusive), the bars on gaps, Retry-After
/// windows and latency over the whole log; `floor` is the shortest same-host interval the crawl
/// was configured to keep.
pub fn judge(
    records: &[CapacityRecord],
    spec: &CapacitySpec,
    window: (Instant, Instant),
    floor: Duration,
) -> CapacityVerdict {
    let by_host = by_host(records);
    let hosts: Vec<HostRow> = spec
        .hosts
        .iter()
        .map(|h| host_row(h, by_host.get(h.name.as_str()), window, floor))
        .collect();
    let length = window.1.saturating_duration_since(window.0);
    let figures: Figures = hosts.iter().map(|h| &h.figures).sum();
    let every_answer: Vec<&CapacityRecord> = by_host.values().flatten().copied().collect();
    CapacityVerdict {
        window: length,
        useful_per_s: ratio(figures.useful as f64, length.as_secs_f64()),
        ideal_per_s: ideal(spec, floor, false),
        ideal_one_at_a_time_per_s: ideal(spec, floor, true),
        figures,
        hosts,
        p95_every_answer: p95(&every_answer, window),
    }
}

/// `Σ min(c, 1 / floor)`, or with `one_at_a_time` `Σ min(c, 1 / (floor + unloaded))`.
fn ideal(spec: &CapacitySpec, floor: Duration, one_at_a_time: bool) -> f64 {
    let reach = |h: &HostCapacity| {
        let interval = if one_at_a_time {
            floor + h.unloaded
        } else {
            floor
        };
        h.rate.min(1.0 / interval.as_secs_f64())
    };
    spec.hosts.iter().map(reach).sum()
}

/// The log's requests by host, robots.txt left out, each host's in order of arrival.
pub(super) fn by_host(records: &[CapacityRecord]) -> HashMap<&str, Vec<&CapacityRecord>> {
    let mut hosts: HashMap<&str, Vec<&CapacityRecord>> = HashMap::new();
    for record in records.iter().filter(|r| !r.is_robots()) {
        hosts.entry(&record.request.host).or_default().push(record);
    }
    for list in hosts.values_mut() {
        list.sort_by_key(|r| r.at());
    }
    hosts
}

/// What the log says of `host`, its requests `records` in order of arrival.
fn host_row(
    host: &HostCapacity,
    records: Option<&Vec<&CapacityRecord>>,
    window: (Instant, Instant),
    floor: Duration,
) -> HostRow {
    let records: &[&CapacityRecord] = records.map_or(&[], Vec::as_slice);
    HostRow {
        name: host.name.clone(),
        capacity: host.rate,
        unloaded: host.unloaded,
        figures: Figures::of(records, window, floor),
        p95: p95(records, window),
    }
}

/// How many of `records` (one host's, in order) arrive before the end of a Retry-After window
/// an earlier one announced. Only an answer outside a window opens one: the refusals repeated
/// inside it announce its rest, rounded up to whole seconds, which must not stretch it.
fn inside_retry_after(records: &[&CapacityRecord]) -> usize {
    let mut until: Option<Instant> = None;
    let mut inside = 0;
    for record in records {
        if until.is_some_and(|end| record.at() < end) {
            inside += 1;
        } else if let Some(wait) = record.retry_after {
            until = Some(record.at() + wait);
        }
    }
    inside
}

/// How many GET 200 answers among `records` (one host's, in order) in `window` are for a page
/// the host had served 200 before.
fn repeated(records: &[&CapacityRecord], window: (Instant, Instant)) -> usize {
    let mut served = std::collections::HashSet::new();
    let mut again = 0;
    for record in records {
        let request = &record.request;
        if request.method != "GET" || request.status != 200 {
            continue;
        }
        let first = served.insert(request.path.as_str());
        if !first && (window.0..window.1).contains(&record.at()) {
            again += 1;
        }
    }
    again
}

/// The gaps between consecutive `records` (one host's, in order): from the end of one answer
/// (arrival + host-side latency) to the next arrival, zero when they overlap.
fn gaps(records: &[&CapacityRecord]) -> Vec<Duration> {
    records
        .windows(2)
        .map(|pair| {
            let done = pair[0].at() + pair[0].served_in;
            pair[1].at().saturating_duration_since(done)
        })
        .collect()
}

/// The 95th percentile (nearest rank) of the load multipliers of the 200 answers in `records`
/// that arrived in `window` (the warm-up before it left out, as for the other figures).
fn p95(records: &[&CapacityRecord], window: (Instant, Instant)) -> Option<f64> {
    let mut served: Vec<f64> = records
        .iter()
        .filter(|r| r.request.status == 200 && (window.0..window.1).contains(&r.at()))
        .map(|r| r.load)
        .collect();
    served.sort_by(f64::total_cmp);
    let rank = (served.len() as f64 * 0.95).ceil() as usize;
    served.get(rank.checked_sub(1)?).copied()
}
