//! Writing a crawl's data points to the metrics index every interval, on a task of its own. A
//! write that fails loses that interval's points (metrics, never crawl data) and says so once in
//! the log; the crawl goes on.

use std::sync::Arc;
use std::time::Instant;

use squall::live::{LiveCrawl, Totals};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::keys::MetricsIndexConfig;
use super::points::points;
use super::schema::{MetricsSource, metric_document, metrics_index_body};
use crate::client::indices::ensure_index;
use crate::client::{BulkOperation, BulkRequest};
use crate::client::{EsClient, EsError};

/// Writes a crawl's metrics until [`finish`](Self::finish).
#[derive(Debug)]
pub struct MetricsReporter {
    stop: CancellationToken,
    task: JoinHandle<()>,
    index: String,
}

impl MetricsReporter {
    /// Creates the metrics index when missing (with StormCrawler's mapping) and starts writing
    /// `live`'s points every `config.interval`.
    pub async fn start(
        config: MetricsIndexConfig,
        live: LiveCrawl,
        source: MetricsSource,
    ) -> Result<Self, EsError> {
        let client = EsClient::new(config.connection.clone())?;
        let first = config.index_at(&chrono::Utc::now());
        ensure_index(&client, &first, metrics_index_body()).await?;
        let stop = CancellationToken::new();
        let writer = Writer {
            client,
            config: Arc::new(config),
            source,
            created: first.clone(),
        };
        let task = tokio::spawn(writer.run(live, stop.clone()));
        Ok(MetricsReporter {
            stop,
            task,
            index: first,
        })
    }

    /// The index written first (the day's, with a date format).
    pub fn index(&self) -> &str {
        &self.index
    }

    /// Writes the points of the interval in progress, then stops.
    pub async fn finish(self) {
        self.stop.cancel();
        if let Err(error) = self.task.await {
            warn!(%error, "the metrics writer failed");
        }
    }
}

struct Writer {
    client: EsClient,
    config: Arc<MetricsIndexConfig>,
    source: MetricsSource,
    /// The last index made sure of (a date format names a new one each day).
    created: String,
}

impl Writer {
    async fn run(mut self, live: LiveCrawl, stop: CancellationToken) {
        let mut before = live.totals();
        let mut since = Instant::now();
        let mut ticks = tokio::time::interval(self.config.interval);
        ticks.tick().await;
        loop {
            let stopping = tokio::select! {
                _ = ticks.tick() => false,
                _ = stop.cancelled() => true,
            };
            let now = live.totals();
            let seconds = since.elapsed().as_secs_f64();
            since = Instant::now();
            if let Err(error) = self.write(&before, &now, seconds).await {
                warn!(%error, "metrics index: this interval's points were not written");
            }
            before = now;
            if stopping {
                return;
            }
        }
    }

    async fn write(&mut self, before: &Totals, now: &Totals, seconds: f64) -> Result<(), EsError> {
        let time = chrono::Utc::now();
        let index = self.config.index_at(&time);
        if index != self.created {
            ensure_index(&self.client, &index, metrics_index_body()).await?;
            self.created = index.clone();
        }
        let stamp = time.timestamp_millis();
        let request: BulkRequest = points(before, now, seconds)
            .into_iter()
            .filter(|point| self.config.wants(&point.name))
            .map(|point| {
                let id = format!(
                    "{}-{}-{stamp}-{}-{}",
                    self.source.host, self.source.port, point.component, point.name
                );
                let document = metric_document(
                    &self.source,
                    point.component,
                    &point.name,
                    point.value,
                    &time,
                );
                BulkOperation::index(id, document)
            })
            .collect();
        if request.is_empty() {
            return Ok(());
        }
        let response = self.client.bulk(Some(&index), &request, None).await?;
        let failed = response
            .items
            .iter()
            .filter(|item| item.error.is_some())
            .count();
        if failed > 0 {
            warn!(failed, index = %index, "metrics index: points refused");
        }
        debug!(points = request.len(), index = %index, "metrics written");
        Ok(())
    }
}
