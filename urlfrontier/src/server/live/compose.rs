//! The server's status document, from what [`FrontierLive`](super::FrontierLive) sampled.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};
use squall::live::{Chart, Column, Field, Figure, Series, StatusDocument, Table, Unit};
use squall::model::Status;

use super::{CrawlCounts, Inner};

/// The samples the "per second" figures average.
const RECENT: usize = 10;
/// A worker that called within this long counts as connected.
const CONNECTED: Duration = Duration::from_secs(60);

/// The document, made again when the last is older than half a second.
pub(super) fn cached_document(inner: &Inner) -> Arc<StatusDocument> {
    inner.cached.get(|sequence| document(inner, sequence))
}

/// The same document as JSON.
pub(super) fn cached_json(inner: &Inner) -> Result<bytes::Bytes, serde_json::Error> {
    inner.cached.json(|sequence| document(inner, sequence))
}

fn document(inner: &Inner, sequence: u64) -> StatusDocument {
    let counts = inner.counts.lock().map(|c| c.clone()).unwrap_or_default();
    let (rates, chart) = match inner.tracks.lock() {
        Ok(tracks) => {
            let rates: Vec<(String, f64)> = tracks
                .iter()
                .map(|(kind, track)| (kind.clone(), track.recent(RECENT)))
                .collect();
            let series = tracks
                .iter()
                .map(|(kind, track)| Series::new(kind, kind, track.rates()))
                .collect();
            (rates, series)
        }
        Err(_) => (Vec::new(), Vec::new()),
    };
    let connected = connected_workers(inner);
    let calls_per_second: f64 = rates.iter().map(|(_, rate)| rate).sum();
    StatusDocument {
        title: "squall-frontier".into(),
        subtitle: inner.subtitle.clone(),
        sequence,
        generated_at: Utc::now(),
        uptime_seconds: squall_round(inner.started.elapsed().as_secs_f64()),
        activity: activity(connected, calls_per_second, &counts),
        figures: figures(&counts, calls_per_second, connected),
        charts: vec![Chart {
            id: "calls".into(),
            title: "Calls per second, by kind".into(),
            unit: Unit::Rate,
            step_seconds: 1.0,
            series: chart,
        }],
        tables: vec![crawls(inner, &counts), calls(inner, &rates), workers(inner)],
    }
}

fn squall_round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn connected_workers(inner: &Inner) -> usize {
    inner
        .calls
        .peers()
        .iter()
        .filter(|(_, calls)| calls.last().elapsed() < CONNECTED)
        .count()
}

fn activity(connected: usize, calls_per_second: f64, counts: &[CrawlCounts]) -> String {
    let in_process: usize = counts.iter().map(|c| c.in_process).sum();
    if connected == 0 {
        return "waiting for workers: none called in the last minute".into();
    }
    format!(
        "serving {connected} worker(s): {calls_per_second:.1} calls/s, {in_process} URLs in process"
    )
}

fn figures(counts: &[CrawlCounts], calls_per_second: f64, connected: usize) -> Vec<Figure> {
    let sum = |f: fn(&CrawlCounts) -> u64| counts.iter().map(f).sum::<u64>() as f64;
    vec![
        Figure::new("crawls", "crawls", counts.len() as f64, Unit::Count),
        Figure::new(
            "urls",
            "URLs",
            sum(|c| c.by_status.iter().map(|(_, n)| n).sum()),
            Unit::Count,
        ),
        Figure::new(
            "scheduled",
            "URLs scheduled",
            sum(|c| c.scheduled),
            Unit::Count,
        ),
        Figure::new(
            "in_process",
            "URLs in process",
            sum(|c| c.in_process as u64),
            Unit::Count,
        ),
        Figure::new(
            "queues",
            "queues with URLs scheduled",
            sum(|c| c.queues),
            Unit::Count,
        ),
        Figure::new(
            "calls_per_second",
            "calls per second (10 s)",
            squall_round(calls_per_second),
            Unit::Rate,
        ),
        Figure::new(
            "workers",
            "workers connected (1 min)",
            connected as f64,
            Unit::Count,
        ),
    ]
}

fn crawls(inner: &Inner, counts: &[CrawlCounts]) -> Table {
    let mut columns = vec![Column::new("crawl", "crawl", Unit::Count)];
    for status in Status::ALL {
        columns.push(Column::new(status.as_str(), status.as_str(), Unit::Count));
    }
    for (id, label) in [
        ("scheduled", "scheduled"),
        ("queues", "queues"),
        ("in_process", "in process"),
        ("buffered", "buffered"),
    ] {
        columns.push(Column::new(id, label, Unit::Count));
    }
    let mut table = Table::new("crawls", "Crawls", columns, "no crawl yet");
    if let Ok(Some((at, took))) = inner.counted.lock().map(|c| *c) {
        table.title = format!(
            "Crawls (counted {:.0} s ago in {} ms)",
            at.elapsed().as_secs_f64(),
            took.as_millis()
        );
    }
    for crawl in counts {
        let by_status = Status::ALL.map(|status| {
            let count = crawl.by_status.iter().find(|(s, _)| *s == status);
            json!(count.map_or(0, |(_, n)| *n))
        });
        table.row([json!(crawl.crawl)].into_iter().chain(by_status).chain([
            json!(crawl.scheduled),
            json!(crawl.queues),
            json!(crawl.in_process),
            json!(crawl.buffered),
        ]));
    }
    table
}

fn calls(inner: &Inner, rates: &[(String, f64)]) -> Table {
    let kinds = inner.calls.kinds().into_iter().map(|(kind, total)| {
        let rate = rates
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0.0, |(_, r)| *r);
        (kind, total, rate)
    });
    Table::of(
        "calls",
        "Calls by kind",
        kinds,
        &[
            Field::new("kind", "kind", Unit::Count, |(kind, ..)| json!(kind)),
            Field::new("total", "total", Unit::Count, |(_, total, _)| json!(total)),
            Field::new(
                "per_second",
                "per second (10 s)",
                Unit::Rate,
                |(.., rate)| json!(rate),
            ),
        ],
        "no call yet",
    )
}

fn workers(inner: &Inner) -> Table {
    Table::of(
        "workers",
        "Workers (client connections, the last ten minutes)",
        inner.calls.peers(),
        &[
            Field::new("address", "address", Unit::Count, |(addr, _)| {
                json!(addr.to_string())
            }),
            Field::new("calls", "calls", Unit::Count, |(_, c)| load(&c.calls)),
            Field::new("get_urls", "GetURLs", Unit::Count, |(_, c)| {
                load(&c.get_urls)
            }),
            Field::new("put_urls", "PutURLs", Unit::Count, |(_, c)| {
                load(&c.put_urls)
            }),
            Field::new("last_call_s", "last call", Unit::Seconds, |(_, c)| {
                seconds_since(&c.last())
            }),
            Field::new("connected_s", "first call", Unit::Seconds, |(_, c)| {
                seconds_since(&c.first)
            }),
        ],
        "no worker has called",
    )
}

/// Seconds since `at`, to a tenth.
fn seconds_since(at: &Instant) -> Value {
    json!(squall_round(at.elapsed().as_secs_f64()))
}

/// A counter's value.
fn load(counter: &AtomicU64) -> Value {
    json!(counter.load(Ordering::Relaxed))
}
