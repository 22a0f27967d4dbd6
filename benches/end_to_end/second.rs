//! The same crawls on a second engine node of another version (`SQUALL_BENCH_ES_SECOND`), run
//! interleaved with the first node's, so that the two versions are compared within one run: what
//! an upgrade of the engine costs or gains, in pages/s and in the engine's CPU per page.

use crate::common::Spread;
use squall_bench_schema::end_to_end::{CrawlRun, SecondEngine};

/// The second node's base URL, when `SQUALL_BENCH_ES_SECOND` names one.
pub fn address() -> Option<String> {
    std::env::var("SQUALL_BENCH_ES_SECOND")
        .ok()
        .map(|url| url.trim().to_string())
        .filter(|url| !url.is_empty())
}

/// The comparison: each frontier's runs on the second node, and its medians over the first's.
pub fn compare(
    names: (Option<String>, Option<String>),
    first: (&[CrawlRun], &[CrawlRun]),
    second: (&[CrawlRun], &[CrawlRun]),
) -> SecondEngine {
    let (queue, aggregation) = (crate::summary(second.0), crate::summary(second.1));
    SecondEngine {
        first: names.0,
        second: names.1,
        ratio_queue_pages: over(second.0, first.0, pages),
        ratio_queue_engine_cpu: over(second.0, first.0, engine_cpu),
        ratio_aggregation_pages: over(second.1, first.1, pages),
        ratio_aggregation_engine_cpu: over(second.1, first.1, engine_cpu),
        queue: Some(queue),
        aggregation: Some(aggregation),
    }
}

fn pages(run: &CrawlRun) -> Option<f64> {
    Some(run.pages_per_second)
}

fn engine_cpu(run: &CrawlRun) -> Option<f64> {
    run.engine.as_ref()?.cpu_ms_per_page
}

/// The median of `figure` over `top`'s runs divided by its median over `bottom`'s; `None` when
/// either has no run with the figure.
fn over(
    top: &[CrawlRun],
    bottom: &[CrawlRun],
    figure: fn(&CrawlRun) -> Option<f64>,
) -> Option<f64> {
    let median = |runs: &[CrawlRun]| {
        let values: Vec<f64> = runs.iter().filter_map(figure).collect();
        (!values.is_empty()).then(|| Spread::of(&values).median)
    };
    let (top, bottom) = (median(top)?, median(bottom)?);
    (bottom > 0.0).then(|| top / bottom)
}
