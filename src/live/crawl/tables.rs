//! The page's tables: the stages, the frontier, the busiest and the slowest hosts, the last errors.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::hosts::HostFigures;
use super::{Inner, RECENT, Tracks};
use crate::fetch::{FetcherView, QueueView};
use crate::live::document::{Column, Table, Unit};
use crate::live::latency::{LatencyWindow, Percentiles};
use crate::live::series::{RateTrack, round};
use crate::spout::RunnerState;

/// Leases listed at most.
const LEASE_ROWS: usize = 50;

/// Every table, in the order the page shows them.
pub(super) fn tables(inner: &Inner, runner: &RunnerState, fetcher: &FetcherView) -> Vec<Table> {
    let mut tables = vec![stages(inner, runner), frontier(inner)];
    tables.extend(leases(inner));
    tables.extend([
        busiest_hosts(inner, fetcher),
        slowest_hosts(inner),
        recent_errors(inner),
    ]);
    tables
}

/// The queues this process holds under leases, when the frontier has leases.
fn leases(inner: &Inner) -> Option<Table> {
    let view = inner.leases.lock().ok()?.clone()?;
    let held = view.held();
    let mut table = Table::new(
        "leases",
        &format!("Leases this process holds ({})", held.len()),
        vec![
            Column::new("queue", "queue", Unit::Count),
            Column::new("expires_in_s", "expires in (unless renewed)", Unit::Seconds),
        ],
        "this process holds no queue",
    );
    for lease in held.iter().take(LEASE_ROWS) {
        table.row([
            json!(lease.key),
            json!(round(lease.remaining.as_secs_f64(), 1)),
        ]);
    }
    Some(table)
}

fn stages(inner: &Inner, runner: &RunnerState) -> Table {
    let mut table = Table::new(
        "stages",
        "Stages (latencies over the last minute)",
        vec![
            Column::new("stage", "stage", Unit::Count),
            Column::new("total", "total", Unit::Count),
            Column::new("per_second", "per second (10 s)", Unit::Rate),
            Column::new("p50_ms", "p50", Unit::Milliseconds),
            Column::new("p95_ms", "p95", Unit::Milliseconds),
            Column::new("p99_ms", "p99", Unit::Milliseconds),
        ],
        "",
    );
    let tally = &inner.tally;
    let load = |counter: &AtomicU64| json!(counter.load(Ordering::Relaxed));
    let rate = |track: fn(&Tracks) -> &RateTrack| {
        inner.tracks.lock().map_or(Value::Null, |tracks| {
            json!(track(&tracks).recent(inner.settings.steps_in(RECENT)))
        })
    };
    let none = None::<&LatencyWindow>;
    let rows: [(&str, Value, Value, Option<&LatencyWindow>); 6] = [
        (
            "emitted by the spout",
            json!(runner.emitted),
            rate(|t| &t.emitted),
            none,
        ),
        (
            "fetched",
            load(&tally.fetches),
            rate(|t| &t.fetched),
            Some(&tally.fetch_latency),
        ),
        (
            "parsed and written",
            load(&tally.written),
            rate(|t| &t.written),
            Some(&tally.process_latency),
        ),
        ("acked", json!(runner.acked), rate(|t| &t.acked), none),
        (
            "failed back to the spout",
            json!(runner.failed),
            Value::Null,
            none,
        ),
        (
            "writes failed",
            load(&tally.write_failures),
            Value::Null,
            none,
        ),
    ];
    for (stage, total, per_second, latency) in rows {
        let p = latency.and_then(LatencyWindow::percentiles);
        let pick = |f: fn(&Percentiles) -> f64| p.as_ref().map_or(Value::Null, |p| json!(f(p)));
        table.row([
            json!(stage),
            total,
            per_second,
            pick(|p| p.p50),
            pick(|p| p.p95),
            pick(|p| p.p99),
        ]);
    }
    table
}

fn frontier(inner: &Inner) -> Table {
    let mut table = Table::new(
        "frontier",
        "Frontier",
        vec![
            Column::new("what", "URLs", Unit::Count),
            Column::new("count", "count", Unit::Count),
        ],
        "not counted (a URLFrontier server's frontier is not counted here)",
    );
    let Ok(counts) = inner.frontier.lock() else {
        return table;
    };
    let Some(at) = counts.at else {
        if let Some(error) = &counts.error {
            table.empty = format!("cannot count the frontier: {error}");
        }
        return table;
    };
    for (status, count) in &counts.by_status {
        table.row([json!(status.to_string()), json!(count)]);
    }
    table.row([
        json!("scheduled (due now or later)"),
        json!(counts.scheduled),
    ]);
    table.row([json!("queues with URLs scheduled"), json!(counts.queues)]);
    table.title = format!(
        "Frontier (counted {:.0} s ago in {} ms)",
        at.elapsed().as_secs_f64(),
        counts.took.as_millis()
    );
    if let Some(error) = &counts.error {
        table
            .title
            .push_str(&format!(" — the last count failed: {error}"));
    }
    table
}

fn busiest_hosts(inner: &Inner, fetcher: &FetcherView) -> Table {
    let mut table = Table::new(
        "busiest_hosts",
        "Busiest queues in the fetcher",
        vec![
            Column::new("host", "queue", Unit::Count),
            Column::new("queued", "queued", Unit::Count),
            Column::new("in_flight", "fetching", Unit::Count),
            Column::new("next_fetch_s", "next fetch in", Unit::Seconds),
            Column::new("crawl_delay_s", "Crawl-delay", Unit::Seconds),
            Column::new("retry_after_s", "Retry-After left", Unit::Seconds),
            Column::new("fetches", "fetches", Unit::Count),
            Column::new("errors", "errors", Unit::Count),
            Column::new("last", "last answer", Unit::Count),
        ],
        "the fetcher holds no queue",
    );
    if fetcher.stale {
        table.empty =
            "the fetcher, busy, has not shown its queues: they show from the next refresh"
                .to_string();
    }
    for queue in &fetcher.busiest {
        let figures = inner.tally.hosts.get(&queue.key).unwrap_or_default();
        table.row(busiest_row(queue, &figures));
    }
    table
}

fn busiest_row(queue: &QueueView, figures: &HostFigures) -> [Value; 9] {
    let seconds = |d: std::time::Duration| json!(round(d.as_secs_f64(), 1));
    [
        json!(queue.key),
        json!(queue.queued),
        json!(queue.in_flight),
        seconds(queue.next_fetch_in),
        queue.crawl_delay.map_or(Value::Null, seconds),
        queue.held_for.map_or(Value::Null, seconds),
        json!(figures.fetches),
        json!(figures.errors),
        last_answer(figures),
    ]
}

fn slowest_hosts(inner: &Inner) -> Table {
    let mut table = Table::new(
        "slowest_hosts",
        "Slowest hosts (mean fetch time)",
        vec![
            Column::new("host", "host", Unit::Count),
            Column::new("mean_fetch_ms", "mean fetch", Unit::Milliseconds),
            Column::new("fetches", "fetches", Unit::Count),
            Column::new("errors", "errors", Unit::Count),
            Column::new("last", "last answer", Unit::Count),
        ],
        "nothing fetched yet",
    );
    for (host, figures) in inner.tally.hosts.slowest(inner.settings.rows) {
        table.row([
            json!(host),
            json!(round(figures.mean_fetch_ms(), 1)),
            json!(figures.fetches),
            json!(figures.errors),
            last_answer(&figures),
        ]);
    }
    table
}

/// The last HTTP status and URL status of a host, as text ("200, FETCHED").
fn last_answer(figures: &HostFigures) -> Value {
    let parts: Vec<String> = figures
        .last_http
        .map(|code| code.to_string())
        .into_iter()
        .chain(figures.last_status.map(|status| status.to_string()))
        .collect();
    if parts.is_empty() {
        Value::Null
    } else {
        json!(parts.join(", "))
    }
}

fn recent_errors(inner: &Inner) -> Table {
    let mut table = Table::new(
        "errors",
        "Last errors",
        vec![
            Column::new("at", "when", Unit::Count),
            Column::new("cause", "cause", Unit::Count),
            Column::new("url", "URL", Unit::Count),
            Column::new("message", "message", Unit::Count),
        ],
        "no error so far",
    );
    for error in inner.tally.recent_errors() {
        let message = if error.message.is_empty() {
            Value::Null
        } else {
            json!(error.message)
        };
        table.row([
            json!(clock_time(error.at)),
            json!(error.cause),
            json!(error.url),
            message,
        ]);
    }
    table
}

/// `at` as the time of day, `HH:MM:SS` (UTC).
fn clock_time(at: chrono::DateTime<chrono::Utc>) -> String {
    use chrono::Timelike;
    format!("{:02}:{:02}:{:02}", at.hour(), at.minute(), at.second())
}
