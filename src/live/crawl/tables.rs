//! The page's tables: the stages, the frontier, the busiest queues, the queues slowed by their
//! server, the slowest hosts, the last errors.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::hosts::HostFigures;
use super::{Inner, RECENT, Tracks};
use crate::fetch::{FetcherView, PacedView};
use crate::live::document::{Column, Field, Table, Unit};
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
        paced_queues(fetcher),
        slowest_hosts(inner),
        recent_errors(inner),
    ]);
    tables
}

/// The queues this process holds under leases, when the frontier has leases.
fn leases(inner: &Inner) -> Option<Table> {
    let view = inner.leases.lock().ok()?.clone()?;
    let held = view.held();
    Some(Table::of(
        "leases",
        &format!("Leases this process holds ({})", held.len()),
        held.iter().take(LEASE_ROWS),
        &[
            Field::new("queue", "queue", Unit::Count, |lease| json!(lease.key)),
            Field::new(
                "expires_in_s",
                "expires in (unless renewed)",
                Unit::Seconds,
                |lease| seconds(&lease.remaining),
            ),
        ],
        "this process holds no queue",
    ))
}

/// A stage's row: its name, its total, its recent rate and its latency percentiles.
type Stage = (&'static str, Value, Value, Option<Percentiles>);

fn stages(inner: &Inner, runner: &RunnerState) -> Table {
    Table::of(
        "stages",
        "Stages (latencies over the last minute)",
        stage_rows(inner, runner),
        &[
            Field::new("stage", "stage", Unit::Count, |s: &Stage| json!(s.0)),
            Field::new("total", "total", Unit::Count, |s| s.1.clone()),
            Field::new("per_second", "per second (10 s)", Unit::Rate, |s| {
                s.2.clone()
            }),
            Field::new("p50_ms", "p50", Unit::Milliseconds, |s| pick(s, |p| p.p50)),
            Field::new("p95_ms", "p95", Unit::Milliseconds, |s| pick(s, |p| p.p95)),
            Field::new("p99_ms", "p99", Unit::Milliseconds, |s| pick(s, |p| p.p99)),
        ],
        "",
    )
}

fn stage_rows(inner: &Inner, runner: &RunnerState) -> [Stage; 6] {
    let tally = &inner.tally;
    let load = |counter: &AtomicU64| json!(counter.load(Ordering::Relaxed));
    let rate = |track: fn(&Tracks) -> &RateTrack| {
        inner.tracks.lock().map_or(Value::Null, |tracks| {
            json!(track(&tracks).recent(inner.settings.steps_in(RECENT)))
        })
    };
    let none = None::<&LatencyWindow>;
    let rows: [(&'static str, Value, Value, Option<&LatencyWindow>); 6] = [
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
    rows.map(|(stage, total, per_second, latency)| {
        let percentiles = latency.and_then(LatencyWindow::percentiles);
        (stage, total, per_second, percentiles)
    })
}

/// One percentile of a stage, null when it has none.
fn pick(stage: &Stage, percentile: fn(&Percentiles) -> f64) -> Value {
    stage
        .3
        .as_ref()
        .map_or(Value::Null, |p| json!(percentile(p)))
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
    let queues = fetcher.busiest.iter().map(|queue| {
        let figures = inner.tally.hosts.get(&queue.key).unwrap_or_default();
        (queue, figures)
    });
    let mut table = Table::of(
        "busiest_hosts",
        "Busiest queues in the fetcher",
        queues,
        &[
            Field::new("host", "queue", Unit::Count, |(q, _)| json!(q.key)),
            Field::new("queued", "queued", Unit::Count, |(q, _)| json!(q.queued)),
            Field::new("in_flight", "fetching", Unit::Count, |(q, _)| {
                json!(q.in_flight)
            }),
            Field::new("next_fetch_s", "next fetch in", Unit::Seconds, |(q, _)| {
                seconds(&q.next_fetch_in)
            }),
            Field::new("crawl_delay_s", "Crawl-delay", Unit::Seconds, |(q, _)| {
                q.crawl_delay.as_ref().map_or(Value::Null, seconds)
            }),
            Field::new(
                "retry_after_s",
                "Retry-After left",
                Unit::Seconds,
                |(q, _)| q.held_for.as_ref().map_or(Value::Null, seconds),
            ),
            Field::new("pace_s", "pace", Unit::Seconds, |(q, _)| {
                q.pace
                    .as_ref()
                    .map_or(Value::Null, |(pace, _)| seconds(pace))
            }),
            Field::new("pace_cause", "set by", Unit::Count, |(q, _)| {
                q.pace
                    .as_ref()
                    .map_or(Value::Null, |(_, cause)| json!(cause.to_string()))
            }),
            Field::new("fetches", "fetches", Unit::Count, |(_, f)| json!(f.fetches)),
            Field::new("errors", "errors", Unit::Count, |(_, f)| json!(f.errors)),
            Field::new("last", "last answer", Unit::Count, |(_, f)| last_answer(f)),
        ],
        "the fetcher holds no queue",
    );
    if fetcher.stale {
        table.empty =
            "the fetcher, busy, has not shown its queues: they show from the next refresh"
                .to_string();
    }
    table
}

/// The queues kept above their configured delay by what their server answered.
fn paced_queues(fetcher: &FetcherView) -> Table {
    Table::of(
        "paced_queues",
        &format!("Queues slowed by their server ({})", fetcher.backed_off),
        fetcher.paced.iter(),
        &[
            Field::new("queue", "queue", Unit::Count, |p: &&PacedView| json!(p.key)),
            Field::new("pace_s", "pace", Unit::Seconds, |p| seconds(&p.pace)),
            Field::new("pace_cause", "set by", Unit::Count, |p| {
                json!(p.cause.to_string())
            }),
            Field::new("configured_s", "configured", Unit::Seconds, |p| {
                seconds(&p.configured)
            }),
            Field::new("strikes", "strikes", Unit::Count, |p| json!(p.strikes)),
            Field::new("held", "in the fetcher", Unit::Count, |p| json!(p.held)),
        ],
        "every queue at its configured delay",
    )
}

fn slowest_hosts(inner: &Inner) -> Table {
    Table::of(
        "slowest_hosts",
        "Slowest hosts (mean fetch time)",
        inner.tally.hosts.slowest(inner.settings.rows),
        &[
            Field::new("host", "host", Unit::Count, |(host, _)| json!(host)),
            Field::new(
                "mean_fetch_ms",
                "mean fetch",
                Unit::Milliseconds,
                |(_, f)| json!(round(f.mean_fetch_ms(), 1)),
            ),
            Field::new("fetches", "fetches", Unit::Count, |(_, f)| json!(f.fetches)),
            Field::new("errors", "errors", Unit::Count, |(_, f)| json!(f.errors)),
            Field::new("last", "last answer", Unit::Count, |(_, f)| last_answer(f)),
        ],
        "nothing fetched yet",
    )
}

/// A duration in seconds, to a tenth.
fn seconds(duration: &std::time::Duration) -> Value {
    json!(round(duration.as_secs_f64(), 1))
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
    Table::of(
        "errors",
        "Last errors",
        inner.tally.recent_errors(),
        &[
            Field::new("at", "when", Unit::Count, |e| json!(clock_time(e.at))),
            Field::new("cause", "cause", Unit::Count, |e| json!(e.cause)),
            Field::new("url", "URL", Unit::Count, |e| json!(e.url)),
            Field::new("message", "message", Unit::Count, |e| {
                if e.message.is_empty() {
                    Value::Null
                } else {
                    json!(e.message)
                }
            }),
        ],
        "no error so far",
    )
}

/// `at` as the time of day, `HH:MM:SS` (UTC).
fn clock_time(at: chrono::DateTime<chrono::Utc>) -> String {
    use chrono::Timelike;
    format!("{:02}:{:02}:{:02}", at.hour(), at.minute(), at.second())
}
