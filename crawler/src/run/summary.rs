//! The crawl's summary: printed on standard output, and as JSON to `--summary-json`'s file.

use std::path::Path;

use anyhow::Context;
use serde_json::json;
use squall::topology::CrawlSummary;

/// Prints `summary` and, when `json_path` is given, writes it there as JSON.
pub(crate) fn report(summary: &CrawlSummary, json_path: Option<&Path>) -> anyhow::Result<()> {
    println!("{summary}");
    if let Some(path) = json_path {
        std::fs::write(path, summary_json(summary).to_string())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// The summary as `--summary-json` writes it.
fn summary_json(summary: &CrawlSummary) -> serde_json::Value {
    let statuses: serde_json::Map<String, serde_json::Value> = summary
        .statuses
        .iter()
        .map(|(status, n)| (status.to_string(), json!(n)))
        .collect();
    json!({
        "stop_reason": format!("{:?}", summary.stop_reason),
        "statuses": statuses,
        "pages": summary.pages,
        "bytes": summary.bytes,
        "hosts": summary.hosts,
        "write_failures": summary.write_failures,
        "elapsed_seconds": summary.elapsed_seconds,
        "clean_shutdown": summary.clean_shutdown,
    })
}
