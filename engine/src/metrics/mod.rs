//! The metrics index, as StormCrawler's `MetricsConsumer` writes it: every interval, one document
//! per data point (`name`, `value`, `timestamp`, and where it comes from), in an index with
//! StormCrawler's `metrics.mapping`, so that the dashboards made for it chart a squall crawl.
//!
//! It is on when a StormCrawler `MetricsConsumer` is registered in
//! `topology.metrics.consumer.register` (as the archetype's `opensearch-conf.yaml` does), or with
//! `es.metrics.enabled: true`; see [`MetricsIndexConfig`] for its keys and [`points`] for the names.

mod keys;
mod points;
pub mod schema;
mod writer;

pub use keys::{CONSUMERS_KEY, MetricsIndexConfig, MetricsIndexSettings, PREFIXES};
pub use points::{NAMES, Point, points};
pub use writer::MetricsReporter;

use squall::config::CrawlConfig;
use squall::live::LiveCrawl;

use crate::client::indices::OpenIndexError;

/// Why the metrics index could not be started: an `es.metrics.*` key, or the engine.
pub type MetricsError = OpenIndexError;

/// Starts writing `live`'s metrics when the configuration turns the metrics index on (`None`
/// otherwise). The topology is named `topology` in the documents (`stormId`).
pub async fn start(
    config: &CrawlConfig,
    live: &LiveCrawl,
    topology: &str,
) -> Result<Option<MetricsReporter>, MetricsError> {
    let Some(settings) = MetricsIndexConfig::from_config(config)? else {
        return Ok(None);
    };
    let source = schema::MetricsSource {
        topology: topology.to_string(),
        host: host_name(),
        port: std::process::id(),
    };
    Ok(Some(
        MetricsReporter::start(settings, live.clone(), source)
            .await
            .map_err(OpenIndexError::engine("metrics index"))?,
    ))
}

/// This machine's name (`srcWorkerHost`), from the kernel; `localhost` when it cannot be read.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}
