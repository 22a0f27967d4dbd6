//! Sampling the rates, and making the [`StatusDocument`] from everything the view holds.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use chrono::Utc;

use super::{Inner, LATENCY_SLOT, RECENT, Tracks};
use crate::fetch::FetcherView;
use crate::live::document::{Chart, Figure, Series, StatusDocument, Unit};
use crate::live::series::{RateTrack, round};
use crate::spout::RunnerState;

/// Records one step of every rate, `seconds` long.
pub(super) fn sample(inner: &Inner, seconds: f64) {
    let tally = &inner.tally;
    let runner = runner_state(inner);
    let causes = tally.causes();
    let Ok(mut tracks) = inner.tracks.lock() else {
        return;
    };
    let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
    tracks.emitted.sample(runner.emitted, seconds);
    tracks.fetched.sample(load(&tally.fetches), seconds);
    tracks.written.sample(load(&tally.written), seconds);
    tracks.acked.sample(runner.acked, seconds);
    tracks.bytes.sample(load(&tally.bytes), seconds);
    tracks.errors.sample(load(&tally.errors), seconds);
    for (cause, total) in causes {
        let history = inner.settings.history;
        RateTrack::sample_named(&mut tracks.causes, cause, total, seconds, history);
    }
    tracks.steps += 1;
    if tracks
        .steps
        .is_multiple_of(inner.settings.steps_in(LATENCY_SLOT) as u64)
    {
        tally.fetch_latency.advance();
        tally.process_latency.advance();
    }
}

/// The spout runner's last state (all zero before the crawl runs).
pub(super) fn runner_state(inner: &Inner) -> RunnerState {
    match inner.runner.lock() {
        Ok(runner) => runner.as_ref().map(|rx| *rx.borrow()).unwrap_or_default(),
        Err(_) => RunnerState::default(),
    }
}

/// The document, made again when the last is older than half a second.
pub(super) fn cached_document(inner: &Inner) -> Arc<StatusDocument> {
    inner.cached.get(|sequence| document(inner, sequence))
}

/// The same document as JSON.
pub(super) fn cached_json(inner: &Inner) -> Result<bytes::Bytes, serde_json::Error> {
    inner.cached.json(|sequence| document(inner, sequence))
}

fn document(inner: &Inner, sequence: u64) -> StatusDocument {
    let runner = runner_state(inner);
    // Asked for before (`LiveCrawl::prepare`): this reads what the fetcher answered.
    let fetcher = inner.board.last();
    let (figures, charts) = match inner.tracks.lock() {
        Ok(tracks) => (
            figures(inner, &tracks, &runner, &fetcher),
            charts(inner, &tracks),
        ),
        Err(_) => (Vec::new(), Vec::new()),
    };
    StatusDocument {
        title: "squall crawl".into(),
        subtitle: inner.subtitle.lock().map(|s| s.clone()).unwrap_or_default(),
        sequence,
        generated_at: Utc::now(),
        uptime_seconds: round(inner.started.elapsed().as_secs_f64(), 1),
        activity: activity(&runner, &fetcher),
        figures,
        charts,
        tables: super::tables::tables(inner, &runner, &fetcher),
    }
}

fn figures(
    inner: &Inner,
    tracks: &Tracks,
    runner: &RunnerState,
    fetcher: &FetcherView,
) -> Vec<Figure> {
    let tally = &inner.tally;
    let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed) as f64;
    let mut figures = vec![
        Figure::new("pages", "pages fetched", load(&tally.answered), Unit::Count),
        Figure::new(
            "pages_per_second",
            "pages per second (10 s)",
            tracks.fetched.recent(inner.settings.steps_in(RECENT)),
            Unit::Rate,
        ),
        Figure::new("bytes", "bytes fetched", load(&tally.bytes), Unit::Bytes),
        Figure::new("errors", "errors", load(&tally.errors), Unit::Count),
        Figure::new(
            "in_flight",
            "URLs in flight",
            runner.in_flight as f64,
            Unit::Count,
        ),
        Figure::new(
            "fetcher_queues",
            "queues in the fetcher",
            fetcher.queues as f64,
            Unit::Count,
        ),
        Figure::new(
            "backed_off_queues",
            "queues slowed by their server",
            fetcher.backed_off as f64,
            Unit::Count,
        ),
    ];
    if let Ok(counts) = inner.frontier.lock()
        && counts.at.is_some()
    {
        let total: u64 = counts.by_status.iter().map(|(_, n)| n).sum();
        figures.push(Figure::new(
            "frontier_urls",
            "URLs in the frontier",
            total as f64,
            Unit::Count,
        ));
        figures.push(Figure::new(
            "scheduled",
            "URLs scheduled",
            counts.scheduled as f64,
            Unit::Count,
        ));
    }
    figures
}

fn charts(inner: &Inner, tracks: &Tracks) -> Vec<Chart> {
    let step_seconds = inner.settings.step.as_secs_f64();
    let chart = |id: &str, title: &str, unit: Unit, series: Vec<Series>| Chart {
        id: id.into(),
        title: title.into(),
        unit,
        step_seconds,
        series,
    };
    let errors = tracks
        .causes
        .iter()
        .map(|(cause, track)| Series::new(cause, cause, track.rates()))
        .collect();
    vec![
        chart(
            "urls",
            "URLs per second, by stage",
            Unit::Rate,
            vec![
                Series::new("emitted", "emitted by the spout", tracks.emitted.rates()),
                Series::new("fetched", "fetched", tracks.fetched.rates()),
                Series::new("written", "statuses written", tracks.written.rates()),
                Series::new("acked", "acked", tracks.acked.rates()),
            ],
        ),
        chart(
            "bytes",
            "Bytes fetched per second",
            Unit::ByteRate,
            vec![Series::new("bytes", "bytes", tracks.bytes.rates())],
        ),
        chart("errors", "Errors per second, by cause", Unit::Rate, errors),
    ]
}

/// What the crawl does, or waits on when it does nothing.
fn activity(runner: &RunnerState, fetcher: &FetcherView) -> String {
    if runner.idle {
        return "idle: nothing is due in the frontier and nothing is in flight".into();
    }
    if fetcher.stale {
        return format!(
            "{} URLs in flight; the fetcher, busy, has not shown its queues (they show from the next refresh)",
            runner.in_flight
        );
    }
    if fetcher.active > 0 {
        return format!(
            "fetching: {} fetches in progress, {} URLs waiting in {} queues",
            fetcher.active, fetcher.queued, fetcher.queues
        );
    }
    if let Some((key, wait)) = &fetcher.next_wake
        && fetcher.queued > 0
    {
        let slowed = fetcher
            .paced
            .iter()
            .find(|paced| paced.key == *key)
            .map(|paced| format!(", slowed by its server: {}", paced.cause))
            .unwrap_or_default();
        return format!(
            "waiting on politeness: {} URLs queued, the next fetch ({key}{slowed}) in {:.1} s",
            fetcher.queued,
            wait.as_secs_f64()
        );
    }
    if runner.in_flight > 0 && fetcher.queued == 0 {
        return format!(
            "waiting on parsing and status writes: {} URLs in flight",
            runner.in_flight
        );
    }
    if runner.in_flight == 0 && runner.buffered == 0 {
        return "waiting on the frontier: no URL is due yet".into();
    }
    format!(
        "{} URLs in flight, {} buffered",
        runner.in_flight, runner.buffered
    )
}
