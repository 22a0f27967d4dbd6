//! The queue spout's upkeep, run in the background so that neither a slow runner nor a full buffer
//! lets a lease lapse: renews the leases of the held queues, announces this process as live in the
//! workers index, and measures the frontier's load (queues with work, due queues nobody holds, live
//! processes) from which the spout takes its fair share.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use super::edit_apply::{EditOutcome, apply_edits};
use super::edit_rules::{KeyedEdit, QueueEdit};
use super::fields::{BLOCKED_UNTIL, LEASE_UNTIL, NEXT_DUE};
use super::settings::QueueSpoutConfig;
use super::shared_holds::{SharedHold, SharedHolds};
use crate::client::indices::ensure_index;
use crate::client::{EsClient, Method, RequestBody};
use crate::status_index::schema::{document_id, format_date};

/// What the upkeep last measured of the frontier.
#[derive(Debug)]
pub(crate) struct FrontierLoad {
    /// Queues this process may hold: the queues with work (due, or held by anyone) divided by the
    /// live processes, rounded up; `usize::MAX` until first measured.
    share: AtomicUsize,
    /// Due queues that nobody holds.
    waiting: AtomicUsize,
}

impl Default for FrontierLoad {
    fn default() -> Self {
        FrontierLoad {
            share: AtomicUsize::new(usize::MAX),
            waiting: AtomicUsize::new(0),
        }
    }
}

impl FrontierLoad {
    /// The most queues this process should hold.
    pub fn share(&self) -> usize {
        self.share.load(Ordering::Relaxed)
    }

    /// Whether due queues wait for a process (then a hold is limited).
    pub fn queues_waiting(&self) -> bool {
        self.waiting.load(Ordering::Relaxed) > 0
    }
}

/// The background task; stopped when dropped (a process that dies stops renewing, and so does a
/// spout dropped without closing).
#[derive(Debug)]
pub(crate) struct Upkeep {
    task: JoinHandle<()>,
}

impl Drop for Upkeep {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Upkeep {
    /// Starts the upkeep of `holds` for a spout with `settings`.
    pub fn start(
        client: EsClient,
        settings: QueueSpoutConfig,
        holds: SharedHolds,
        load: Arc<FrontierLoad>,
    ) -> Self {
        let task = tokio::spawn(async move {
            let mut worker = Worker {
                client,
                settings,
                holds,
                load,
            };
            worker.run().await
        });
        Upkeep { task }
    }
}

struct Worker {
    client: EsClient,
    settings: QueueSpoutConfig,
    holds: SharedHolds,
    load: Arc<FrontierLoad>,
}

impl Worker {
    async fn run(&mut self) {
        if let Err(error) = ensure_workers_index(&self.client, &self.settings).await {
            warn!(%error, "the workers index is missing; fair shares are not computed");
        }
        let renew_every = (self.settings.lease_ttl / 4).max(Duration::from_millis(100));
        let tick = renew_every.min(Duration::from_secs(1));
        let mut last_renewal = Instant::now();
        let mut interval = tokio::time::interval(tick);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            if last_renewal.elapsed() + tick / 2 >= renew_every {
                last_renewal = Instant::now();
                self.renew().await;
            }
            if let Err(error) = self.announce().await {
                debug!(%error, "could not announce this process");
            }
            if let Err(error) = self.measure().await {
                debug!(%error, "could not measure the frontier's load");
            }
        }
    }

    /// Renews every held lease in one bulk; a lease found taken (or its queue gone) is revoked.
    async fn renew(&self) {
        let leases: Vec<(String, SharedHold)> = self
            .holds
            .map()
            .iter()
            .map(|entry| (entry.key().clone(), entry.value().clone()))
            .collect();
        if leases.is_empty() {
            return;
        }
        let sent = Instant::now();
        let until = format_date(
            Utc::now() + TimeDelta::from_std(self.settings.lease_ttl).unwrap_or(TimeDelta::MAX),
        );
        let edits: Vec<KeyedEdit> = leases
            .iter()
            .map(|(key, hold)| KeyedEdit {
                key: key.clone(),
                edit: QueueEdit::Renew {
                    owner: hold.holder.clone(),
                    until: until.clone(),
                },
                upsert: None,
            })
            .collect();
        let outcomes = match apply_edits(&self.client, &self.settings.queues_index, &edits).await {
            Ok(outcomes) => outcomes,
            Err(error) => {
                // The leases run out locally in time: fetching stops before anyone else may claim.
                warn!(%error, "renewing leases failed");
                return;
            }
        };
        let trusted_until = sent + self.settings.trusted_lease();
        for ((key, hold), outcome) in leases.into_iter().zip(outcomes) {
            match outcome {
                EditOutcome::Changed | EditOutcome::Created => hold.lease.extend_to(trusted_until),
                EditOutcome::Failed { message, .. } => {
                    // Not extended: it runs out locally unless a later renewal succeeds.
                    warn!(%key, %message, "renewing a lease failed");
                }
                EditOutcome::Unchanged | EditOutcome::Missing => {
                    info!(%key, "lease lost to another process");
                    hold.lease.revoke();
                    self.holds.map().remove_if(&key, |_, held| *held == hold);
                }
            }
        }
    }

    /// Writes this process's heartbeat: live until one lease TTL from now.
    async fn announce(&self) -> Result<(), crate::client::EsError> {
        let until = Utc::now() + TimeDelta::from_std(self.settings.lease_ttl).unwrap_or_default();
        let path = format!(
            "/{}/_doc/{}",
            self.settings.workers_index(),
            document_id(&self.settings.owner)
        );
        let doc = json!({ "owner": self.settings.owner, "until": format_date(until) });
        self.client
            .request(Method::Put, &path, &[], Some(RequestBody::Json(doc)))
            .await
            .map(|_| ())
    }

    /// Counts live processes, queues with work and queues waiting, in one `_msearch`.
    async fn measure(&self) -> Result<(), crate::client::EsError> {
        let now = Utc::now();
        // A queue given back within the visibility delay cannot be claimed yet: it does not wait
        // (the claim's `seen_before`).
        let seen_before = format_date(now - self.settings.visibility_span());
        let now = format_date(now);
        let lines = vec![
            json!({ "index": self.settings.workers_index() }),
            json!({ "size": 0, "track_total_hits": true,
                    "query": { "range": { "until": { "gt": now } } } }),
            json!({ "index": self.settings.queues_index }),
            json!({ "size": 0, "track_total_hits": false, "aggs": {
                "active": { "filter": { "bool": { "minimum_should_match": 1, "should": [
                    { "range": { NEXT_DUE: { "lte": now } } },
                    { "range": { LEASE_UNTIL: { "gt": now } } }
                ] } } },
                "waiting": { "filter": { "bool": {
                    "filter": [ { "range": { NEXT_DUE: { "lte": now } } } ],
                    "must_not": [
                        { "range": { LEASE_UNTIL: { "gt": seen_before } } },
                        { "range": { BLOCKED_UNTIL: { "gt": now } } }
                    ]
                } } }
            } }),
        ];
        let answer = self.client.multi_search(lines).await?;
        let count = |value: &Value| value.as_u64().map(|n| n as usize);
        let workers = answer
            .responses
            .first()
            .and_then(|r| r.hits.total.as_ref())
            .and_then(|total| count(&total["value"]))
            .unwrap_or(1)
            .max(1);
        let Some(queues) = answer.responses.get(1) else {
            return Ok(());
        };
        let (Some(active), Some(waiting)) = (
            count(&queues.aggregations["active"]["doc_count"]),
            count(&queues.aggregations["waiting"]["doc_count"]),
        ) else {
            return Ok(());
        };
        let share = active.div_ceil(workers).max(1);
        self.load.share.store(share, Ordering::Relaxed);
        self.load.waiting.store(waiting, Ordering::Relaxed);
        Ok(())
    }
}

/// Creates the workers index unless it exists.
async fn ensure_workers_index(
    client: &EsClient,
    settings: &QueueSpoutConfig,
) -> Result<(), crate::client::EsError> {
    let body = json!({
        "settings": { "index": { "number_of_shards": 1, "refresh_interval": "1s" } },
        "mappings": { "dynamic": "strict", "properties": {
            "owner": { "type": "keyword" },
            "until": { "type": "date", "format": "date_optional_time" }
        } }
    });
    ensure_index(client, &settings.workers_index(), body)
        .await
        .map(|_| ())
}

/// Removes this process's heartbeat (a clean stop).
pub(crate) async fn retire(client: &EsClient, settings: &QueueSpoutConfig) {
    let path = format!(
        "/{}/_doc/{}",
        settings.workers_index(),
        document_id(&settings.owner)
    );
    if let Err(error) = client.request(Method::Delete, &path, &[], None).await {
        debug!(%error, "could not remove this process's heartbeat");
    }
}
