//! The benchmark's frontier: its indices, each spout on them with the writer of its process, the
//! spout timed, and the frontier's state set between runs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{TimeDelta, Utc};
use serde_json::json;
use squall::frontier::{BusyUrls, DueUrl, Spout, SpoutError, StatusStore};
use squall::model::CrawlUrl;
use squall_engine::client::{EsClient, Method, RequestBody};
use squall_engine::queue::timings::StageTimes;
use squall_engine::queue::{QueueSpout, QueueSpoutConfig};
use squall_engine::status_index::schema::{KeyField, format_date};
use squall_engine::status_index::spouts::{
    AggregationSpout, CollapsingSpout, HybridSpout, StatusSpoutConfig,
};
use squall_engine::{EsStatusStore, WriterConfig};

use crate::common::frontier_data::{Targets, update_by_query};
use crate::kind::{HOSTS_PER_QUERY, Kind, URLS_PER_HOST};

/// Refresh interval of both frontiers during the benchmark.
pub const REFRESH: Duration = Duration::from_secs(1);

/// A spout, the writer of its process, and for the queue spout its stage timings.
pub type Frontier = (
    Box<dyn Spout>,
    Arc<dyn StatusStore>,
    Option<Arc<StageTimes>>,
);

/// The indices of the benchmark's frontier.
pub struct Indices {
    /// The status index (the status-index spouts').
    pub status: String,
    /// The queue frontier's urls index.
    pub urls: String,
    /// The queue frontier's queues index.
    pub queues: String,
}

impl Indices {
    /// The indices of a phase (`prefix`-status-`run`, ...).
    pub fn named(prefix: &str, run: u32) -> Indices {
        Indices {
            status: format!("{prefix}-status-{run}"),
            urls: format!("{prefix}-urls-{run}"),
            queues: format!("{prefix}-queues-{run}"),
        }
    }

    /// The same indices as targets of a copy of a kept frontier.
    pub fn targets(&self) -> Targets {
        Targets {
            status: Some(self.status.clone()),
            queue_frontier: Some((self.urls.clone(), self.queues.clone())),
        }
    }

    /// The spout of `kind` and the writer of its process (for the queue spout, the one that notes
    /// its writes for the queues it holds).
    pub fn frontier(&self, kind: Kind, client: &EsClient, owner: &str) -> Frontier {
        let settings = StatusSpoutConfig {
            index: self.status.clone(),
            max_buckets: HOSTS_PER_QUERY,
            max_urls_per_bucket: URLS_PER_HOST,
            max_urls_per_reload: URLS_PER_HOST,
            refresh_interval: REFRESH,
            ..StatusSpoutConfig::default()
        };
        let spout: Box<dyn Spout> = match kind {
            Kind::Aggregation => Box::new(AggregationSpout::new(client.clone(), settings)),
            Kind::Collapsing => Box::new(CollapsingSpout::new(client.clone(), settings)),
            Kind::Hybrid => Box::new(HybridSpout::new(client.clone(), settings)),
            Kind::Queue | Kind::QueueHeld => {
                let spout = QueueSpout::new(
                    client.clone(),
                    QueueSpoutConfig {
                        owner: owner.to_string(),
                        max_queues: kind.queues().unwrap_or(HOSTS_PER_QUERY),
                        max_claims_per_query: HOSTS_PER_QUERY,
                        max_urls_per_queue: URLS_PER_HOST,
                        urls_per_read: kind.urls_per_read(),
                        refresh_interval: REFRESH,
                        ..QueueSpoutConfig::new(&self.urls, &self.queues)
                    },
                );
                let store = Arc::new(spout.status_store());
                let times = spout.timings();
                return (Box::new(spout), store, Some(times));
            }
        };
        (spout, self.store(client), None)
    }

    /// The index where queue spouts announce themselves.
    pub fn workers(&self) -> String {
        QueueSpoutConfig::new(&self.urls, &self.queues).workers_index()
    }

    /// The writer of the status index.
    pub fn store(&self, client: &EsClient) -> Arc<dyn StatusStore> {
        Arc::new(EsStatusStore::new(
            client.clone(),
            WriterConfig {
                index: self.status.clone(),
                key_field: KeyField::default(),
                routing: true,
            },
        ))
    }
}

/// A spout that records how long each of its queries took; it forwards every other method of
/// [`Spout`], so that the runner treats it as the spout it wraps.
pub struct Timed {
    /// The spout timed.
    pub inner: Box<dyn Spout>,
    /// Each query's milliseconds, in order.
    pub latencies_ms: Arc<Mutex<Vec<f64>>>,
}

#[async_trait]
impl Spout for Timed {
    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let started = Instant::now();
        let batch = self.inner.next_batch(busy).await;
        if let Ok(mut latencies) = self.latencies_ms.lock() {
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        batch
    }

    async fn ack(&mut self, url: &CrawlUrl) {
        self.inner.ack(url).await;
    }

    async fn fail(&mut self, url: &CrawlUrl) {
        self.inner.fail(url).await;
    }

    fn visibility_delay(&self) -> Duration {
        self.inner.visibility_delay()
    }

    fn reads_past_busy(&self) -> bool {
        self.inner.reads_past_busy()
    }

    fn write_visibility(&self) -> Duration {
        self.inner.write_visibility()
    }

    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        self.inner.frontier_idle().await
    }

    async fn close(&mut self) {
        self.inner.close().await;
    }
}

/// Pushes everything due into the future, so that the frontier keeps up (for the new-host delay).
pub async fn nothing_due(client: &EsClient, indices: &Indices) {
    let later = format_date(Utc::now() + TimeDelta::days(2));
    for index in [&indices.status, &indices.urls] {
        update_by_query(
            client,
            index,
            json!({ "query": { "range": { "nextFetchDate": { "lte": "now+10m" } } },
                "script": { "source": "ctx._source.nextFetchDate = params.later", "params": { "later": later } } }),
        )
        .await;
    }
    update_by_query(
        client,
        &indices.queues,
        json!({ "query": { "match_all": {} },
            "script": { "source": "ctx._source.nextDue = params.later; ctx._source.remove('leaseOwner'); ctx._source.remove('leaseUntil'); ctx._source.remove('heldDue')",
                "params": { "later": later } } }),
    )
    .await;
}

/// Gives back queues that a run left leased (as the spout's own drop of a lease does: no owner,
/// `leaseUntil` now) and forgets the queue spouts' heartbeats, so that every run starts from the same
/// state. A spout closed by its runner has given its queues back already.
pub async fn release_leases(client: &EsClient, indices: &Indices) {
    update_by_query(
        client,
        &indices.queues,
        json!({ "query": { "exists": { "field": "leaseOwner" } },
            "script": { "source": "ctx._source.leaseOwner = null; ctx._source.leaseUntil = params.now",
                "params": { "now": format_date(Utc::now()) } } }),
    )
    .await;
    // The workers index exists once a queue spout ran; until then there is nothing to forget.
    let _ = client
        .request(
            Method::Post,
            &format!("/{}/_delete_by_query", indices.workers()),
            &[("conflicts", "proceed"), ("refresh", "true")],
            Some(RequestBody::Json(json!({ "query": { "match_all": {} } }))),
        )
        .await;
}
