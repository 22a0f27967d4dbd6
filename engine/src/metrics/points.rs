//! The data points one interval of a crawl gives, named as StormCrawler names its metrics where
//! the meaning is the same (so that dashboards made for StormCrawler's metrics index chart squall's
//! too), and in the same style where squall measures something of its own. Counters are the
//! interval's increase, as Storm's counting metrics report them; levels are as of the interval's
//! end.

use squall::live::Totals;

/// One data point: the component it comes from (StormCrawler's component IDs), its name, value.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `spout`, `fetch`, `status` or `status_metrics`.
    pub component: &'static str,
    /// The metric's name (`fetcher_counter.fetched`, `status.count.FETCHED`, ...).
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// Every name [`points`] may give, the error and status families written with their prefix
/// (`error.`, `status.count.`): what the shipped dashboards may chart.
pub const NAMES: &[&str] = &[
    "emitted",
    "acked",
    "failed",
    "beingProcessed",
    "buffer_size",
    "fetcher_counter.fetched",
    "fetcher_counter.fetch_attempts",
    "fetcher_counter.bytes_fetched",
    "fetcher_average_persec.fetched_perSec",
    "fetcher_average_persec.bytes_fetched_perSec",
    "num_queues",
    "in_queues",
    "activethreads",
    "fetch_time_msec.p50",
    "fetch_time_msec.p95",
    "fetch_time_msec.p99",
    "status_counter.written",
    "status_counter.write_failures",
    "status_counter.errors",
    "error.",
    "status.count.",
];

/// The points of the interval from `before` to `now`, `seconds` long.
pub fn points(before: &Totals, now: &Totals, seconds: f64) -> Vec<Point> {
    let mut out = Vec::new();
    let mut push = |component: &'static str, name: &str, value: f64| {
        out.push(Point {
            component,
            name: name.to_string(),
            value,
        });
    };
    let delta = |a: u64, b: u64| b.saturating_sub(a) as f64;
    let per_second = |value: f64| value / seconds.max(f64::EPSILON);
    let (r0, r1) = (&before.runner, &now.runner);
    let spout = [
        ("emitted", delta(r0.emitted, r1.emitted)),
        ("acked", delta(r0.acked, r1.acked)),
        ("failed", delta(r0.failed, r1.failed)),
        ("beingProcessed", r1.in_flight as f64),
        ("buffer_size", r1.buffered as f64),
    ];
    let fetched = delta(before.answered, now.answered);
    let attempts = delta(before.fetches, now.fetches);
    let bytes = delta(before.bytes, now.bytes);
    let fetch = [
        ("fetcher_counter.fetched", fetched),
        ("fetcher_counter.fetch_attempts", attempts),
        ("fetcher_counter.bytes_fetched", bytes),
        ("fetcher_average_persec.fetched_perSec", per_second(fetched)),
        (
            "fetcher_average_persec.bytes_fetched_perSec",
            per_second(bytes),
        ),
        ("num_queues", now.fetcher.queues as f64),
        ("in_queues", now.fetcher.queued as f64),
        ("activethreads", now.fetcher.active as f64),
    ];
    let latency = now.fetch_latency.iter().flat_map(|latency| {
        [
            ("fetch_time_msec.p50", latency.p50),
            ("fetch_time_msec.p95", latency.p95),
            ("fetch_time_msec.p99", latency.p99),
        ]
    });
    let failures = delta(before.write_failures, now.write_failures);
    let status = [
        ("status_counter.written", delta(before.written, now.written)),
        ("status_counter.write_failures", failures),
        ("status_counter.errors", delta(before.errors, now.errors)),
    ];
    let components = [
        ("spout", spout.to_vec()),
        ("fetch", fetch.into_iter().chain(latency).collect()),
        ("status", status.to_vec()),
    ];
    for (component, values) in components {
        for (name, value) in values {
            push(component, name, value);
        }
    }
    for (cause, total) in &now.causes {
        let previous = before
            .causes
            .iter()
            .find(|(c, _)| c == cause)
            .map_or(0, |(_, n)| *n);
        push(
            "status",
            &format!("error.{}", metric_word(cause)),
            delta(previous, *total),
        );
    }
    if let Some(counts) = &now.frontier {
        for (status, count) in counts {
            push(
                "status_metrics",
                &format!("status.count.{}", status.as_str()),
                *count as f64,
            );
        }
        let total: u64 = counts.iter().map(|(_, n)| n).sum();
        push("status_metrics", "status.count.TOTAL", total as f64);
    }
    out
}

/// A cause as a word of a metric name: `HTTP 404` → `http_404`.
fn metric_word(cause: &str) -> String {
    cause
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall::Status;

    #[test]
    fn counters_are_the_intervals_increase_and_levels_are_as_of_its_end() {
        let before = Totals {
            answered: 10,
            bytes: 1_000,
            causes: vec![("HTTP 404".into(), 2)],
            ..Totals::default()
        };
        let mut now = Totals {
            answered: 30,
            bytes: 5_000,
            causes: vec![("HTTP 404".into(), 5), ("timeout".into(), 1)],
            frontier: Some(vec![(Status::Discovered, 4), (Status::Fetched, 6)]),
            ..Totals::default()
        };
        now.runner.in_flight = 7;
        let points = points(&before, &now, 10.0);
        let value = |name: &str| {
            points
                .iter()
                .find(|p| p.name == name)
                .map(|p| p.value)
                .unwrap_or_else(|| panic!("no {name}"))
        };
        assert_eq!(value("fetcher_counter.fetched"), 20.0);
        assert_eq!(value("fetcher_average_persec.fetched_perSec"), 2.0);
        assert_eq!(value("fetcher_average_persec.bytes_fetched_perSec"), 400.0);
        assert_eq!(value("beingProcessed"), 7.0);
        assert_eq!(value("error.http_404"), 3.0);
        assert_eq!(value("error.timeout"), 1.0);
        assert_eq!(value("status.count.DISCOVERED"), 4.0);
        assert_eq!(value("status.count.TOTAL"), 10.0);
    }

    #[test]
    fn every_name_given_is_listed() {
        let now = Totals {
            causes: vec![("robots.txt".into(), 1)],
            frontier: Some(vec![(Status::Error, 1)]),
            fetch_latency: Some(squall::live::Percentiles {
                p50: 1.0,
                p95: 2.0,
                p99: 3.0,
            }),
            ..Totals::default()
        };
        for point in points(&Totals::default(), &now, 1.0) {
            assert!(
                NAMES.iter().any(|name| point.name == *name
                    || (name.ends_with('.') && point.name.starts_with(name))),
                "{} is not in NAMES",
                point.name
            );
        }
    }
}
