//! The queue spout: lists due, unleased queues; claims them with conditional updates; reads each
//! claimed queue's due URLs; renews leases while it works; releases a drained queue, raising its
//! `nextDue` conditionally so that a concurrent lowering by a writer is never lost.
//!
//! Every step costs in proportion to the queues listed and the URLs emitted, not to the size of the
//! urls index. Only a queue's lease owner fetches from it, so per-host politeness holds across
//! processes; a process that dies loses nothing, as its leases expire and others take its queues.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::model::{PartitionMode, keys, partition_key};
use squall::spout::{BusyUrls, DueUrl, Spout, SpoutError};
use tracing::{debug, info};

use super::batched::{ConditionalUpdate, conditional_updates, earliest_dues};
use super::schema::queue_id;
use crate::client::{EsClient, EsError, RequestBody};
use crate::schema::{KeyField, format_date, read_document};

/// Settings of a queue spout.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSpoutSettings {
    /// The urls index.
    pub urls_index: String,
    /// The queues index.
    pub queues_index: String,
    /// Where the key is in URL documents.
    pub key_field: KeyField,
    /// This process, as written in `leaseOwner` (host name and PID by default).
    pub owner: String,
    /// How long a lease lasts without renewal; another process takes the queue after it.
    pub lease_ttl: Duration,
    /// Queues held at once.
    pub max_queues: usize,
    /// Due URLs read per queue per query.
    pub max_urls_per_queue: usize,
    /// How long a write takes to show in queries (the indices' refresh interval).
    pub refresh_interval: Duration,
    /// Used when a document has no key.
    pub partition_mode: PartitionMode,
}

impl QueueSpoutSettings {
    /// Defaults for the two indices: 60 s leases, 100 queues of 10 URLs, owner from host and PID.
    pub fn new(urls_index: &str, queues_index: &str) -> Self {
        QueueSpoutSettings {
            urls_index: urls_index.to_string(),
            queues_index: queues_index.to_string(),
            key_field: KeyField::default(),
            owner: default_owner(),
            lease_ttl: Duration::from_secs(60),
            max_queues: 100,
            max_urls_per_queue: 10,
            refresh_interval: Duration::from_secs(1),
            partition_mode: PartitionMode::ByHost,
        }
    }
}

/// `host-pid`, the default lease owner.
pub fn default_owner() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}-{}", std::process::id())
}

/// A queue this process holds.
#[derive(Debug, Clone)]
struct Claim {
    seq_no: i64,
    primary_term: i64,
    lease_until: DateTime<Utc>,
    /// When a writer last changed the queue, as of the claim.
    last_updated: Option<DateTime<Utc>>,
    /// The queue's crawl delay learned from robots.txt (by any process), in seconds.
    crawl_delay: Option<f64>,
    /// URLs returned and possibly still in the topology.
    outstanding: Vec<String>,
}

/// A due queue listed, to be claimed.
struct Candidate {
    key: String,
    seq_no: i64,
    primary_term: i64,
    /// Its search hit.
    hit: Value,
}

/// The spout over a urls index and a queues index.
#[derive(Debug, Clone)]
pub struct QueueSpout {
    client: EsClient,
    settings: QueueSpoutSettings,
    claims: BTreeMap<String, Claim>,
}

impl QueueSpout {
    /// A spout for `settings`.
    pub fn new(client: EsClient, settings: QueueSpoutSettings) -> Self {
        QueueSpout {
            client,
            settings,
            claims: BTreeMap::new(),
        }
    }

    /// The keys this process holds now.
    pub fn held_keys(&self) -> Vec<String> {
        self.claims.keys().cloned().collect()
    }

    fn lease_until(&self) -> DateTime<Utc> {
        Utc::now() + TimeDelta::from_std(self.settings.lease_ttl).unwrap_or(TimeDelta::seconds(60))
    }

    /// A conditional partial update of a queue document; `Ok(None)` when someone changed it first.
    async fn update_queue(
        &self,
        key: &str,
        seq_no: i64,
        primary_term: i64,
        doc: Value,
    ) -> Result<Option<(i64, i64)>, SpoutError> {
        let path = format!("/{}/_update/{}", self.settings.queues_index, queue_id(key));
        let seq = seq_no.to_string();
        let term = primary_term.to_string();
        let query = [
            ("if_seq_no", seq.as_str()),
            ("if_primary_term", term.as_str()),
        ];
        match self
            .client
            .request(
                Method::Post,
                &path,
                &query,
                Some(RequestBody::Json(json!({ "doc": doc }))),
            )
            .await
        {
            Ok(answer) => Ok(Some((
                answer["_seq_no"].as_i64().unwrap_or(seq_no),
                answer["_primary_term"].as_i64().unwrap_or(primary_term),
            ))),
            Err(EsError::Status { status: 409, .. }) => Ok(None),
            Err(error) => Err(SpoutError::with_source("queue update failed", error)),
        }
    }

    /// Lists due queues nobody holds, and claims them until `max_queues` are held.
    async fn claim_queues(&mut self) -> Result<(), SpoutError> {
        let room = self.settings.max_queues.saturating_sub(self.claims.len());
        if room == 0 {
            return Ok(());
        }
        let now = format_date(Utc::now());
        let body = json!({
            "size": room * 2,
            "seq_no_primary_term": true,
            "track_total_hits": false,
            "query": { "bool": {
                "filter": [ { "range": { "nextDue": { "lte": now } } } ],
                "must_not": [
                    { "range": { "leaseUntil": { "gt": now } } },
                    { "range": { "blockedUntil": { "gt": now } } }
                ]
            } },
            "sort": [ { "nextDue": "asc" }, { "key": "asc" } ]
        });
        let path = format!("/{}/_search", self.settings.queues_index);
        let answer = self
            .client
            .request(Method::Post, &path, &[], Some(RequestBody::Json(body)))
            .await
            .map_err(|e| SpoutError::with_source("listing due queues failed", e))?;
        let hits = answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // Up to `room` unheld queues, claimed together in one conditional bulk.
        let mut candidates = Vec::new();
        for hit in hits {
            if candidates.len() >= room {
                break;
            }
            let Some(key) = hit["_source"]["key"].as_str().map(str::to_string) else {
                continue;
            };
            if self.claims.contains_key(&key) || candidates.iter().any(|c: &Candidate| c.key == key)
            {
                continue;
            }
            let (Some(seq_no), Some(primary_term)) =
                (hit["_seq_no"].as_i64(), hit["_primary_term"].as_i64())
            else {
                continue;
            };
            candidates.push(Candidate {
                key,
                seq_no,
                primary_term,
                hit,
            });
        }
        let lease_until = self.lease_until();
        let lease =
            json!({ "leaseOwner": self.settings.owner, "leaseUntil": format_date(lease_until) });
        let updates: Vec<ConditionalUpdate> = candidates
            .iter()
            .map(|c| ConditionalUpdate {
                key: c.key.clone(),
                seq_no: c.seq_no,
                primary_term: c.primary_term,
                doc: lease.clone(),
            })
            .collect();
        let outcomes =
            conditional_updates(&self.client, &self.settings.queues_index, &updates).await?;
        let mut claimed = 0;
        for (Candidate { key, hit, .. }, outcome) in candidates.into_iter().zip(outcomes) {
            let Some((seq_no, primary_term)) = outcome else {
                continue;
            };
            let last_updated = hit["_source"]["lastUpdated"]
                .as_str()
                .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
                .map(|d| d.with_timezone(&Utc));
            self.claims.insert(
                key,
                Claim {
                    seq_no,
                    primary_term,
                    lease_until,
                    last_updated,
                    crawl_delay: hit["_source"]["crawlDelaySeconds"].as_f64(),
                    outstanding: Vec::new(),
                },
            );
            claimed += 1;
        }
        if claimed > 0 {
            debug!(claimed, held = self.claims.len(), "queues claimed");
            metrics::counter!("squall_queue_claims_total").increment(claimed);
        }
        Ok(())
    }

    /// Renews leases that are past half their life.
    async fn renew_leases(&mut self) -> Result<(), SpoutError> {
        let half =
            TimeDelta::from_std(self.settings.lease_ttl / 2).unwrap_or(TimeDelta::seconds(30));
        let due: Vec<String> = self
            .claims
            .iter()
            .filter(|(_, c)| c.lease_until - Utc::now() < half)
            .map(|(k, _)| k.clone())
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        let lease_until = self.lease_until();
        let lease = json!({ "leaseUntil": format_date(lease_until) });
        let updates: Vec<ConditionalUpdate> = due
            .iter()
            .filter_map(|key| {
                self.claims.get(key).map(|claim| ConditionalUpdate {
                    key: key.clone(),
                    seq_no: claim.seq_no,
                    primary_term: claim.primary_term,
                    doc: lease.clone(),
                })
            })
            .collect();
        let outcomes =
            conditional_updates(&self.client, &self.settings.queues_index, &updates).await?;
        for (update, outcome) in updates.into_iter().zip(outcomes) {
            let key = update.key;
            if let Some((seq_no, primary_term)) = outcome {
                if let Some(c) = self.claims.get_mut(&key) {
                    c.seq_no = seq_no;
                    c.primary_term = primary_term;
                    c.lease_until = lease_until;
                }
                continue;
            }
            // A writer lowered nextDue meanwhile (or the lease was lost): re-read and retry once.
            match self.reread(&key).await? {
                Some((owner, seq_no, primary_term))
                    if owner.as_deref() == Some(self.settings.owner.as_str()) =>
                {
                    if let Some((s, t)) = self
                        .update_queue(&key, seq_no, primary_term, lease.clone())
                        .await?
                        && let Some(c) = self.claims.get_mut(&key)
                    {
                        c.seq_no = s;
                        c.primary_term = t;
                        c.lease_until = lease_until;
                    }
                }
                _ => {
                    info!(%key, "lease lost to another process");
                    self.claims.remove(&key);
                }
            }
        }
        Ok(())
    }

    /// The queue document's owner and version.
    async fn reread(&self, key: &str) -> Result<Option<(Option<String>, i64, i64)>, SpoutError> {
        let path = format!("/{}/_doc/{}", self.settings.queues_index, queue_id(key));
        match self.client.request(Method::Get, &path, &[], None).await {
            Ok(doc) => Ok(Some((
                doc["_source"]["leaseOwner"].as_str().map(str::to_string),
                doc["_seq_no"].as_i64().unwrap_or(0),
                doc["_primary_term"].as_i64().unwrap_or(1),
            ))),
            Err(EsError::Status { status: 404, .. }) => Ok(None),
            Err(error) => Err(SpoutError::with_source("reading a queue failed", error)),
        }
    }

    /// How long a write may take to show in the urls index, with a margin.
    fn visibility(&self) -> TimeDelta {
        TimeDelta::from_std(self.settings.refresh_interval + Duration::from_secs(1))
            .unwrap_or(TimeDelta::seconds(2))
    }

    /// Whether a writer changed the queue so recently that its URLs may not show yet.
    fn recently_written(&self, claim: &Claim) -> bool {
        claim
            .last_updated
            .is_some_and(|t| Utc::now() - t < self.visibility())
    }

    /// Gives drained queues back: `nextDue` raised to each one's earliest URL, lease cleared; if a
    /// writer changed a document meanwhile, only its lease is cleared (its lower `nextDue` stays).
    async fn release_all(&mut self, keys: Vec<String>) -> Result<(), SpoutError> {
        let claims: Vec<(String, Claim)> = keys
            .into_iter()
            .filter_map(|key| self.claims.remove(&key).map(|claim| (key, claim)))
            .collect();
        if claims.is_empty() {
            return Ok(());
        }
        // A writer that changed the queue moments ago may have URLs the urls index does not show
        // yet: then look again soon rather than trust the stale view (which could raise nextDue past
        // them and starve them).
        let soon = format_date(Utc::now() + self.visibility());
        let recently_written = |claim: &Claim| self.recently_written(claim);
        let to_read: Vec<String> = claims
            .iter()
            .filter(|(_, claim)| !recently_written(claim))
            .map(|(key, _)| key.clone())
            .collect();
        let read = earliest_dues(
            &self.client,
            &self.settings.urls_index,
            &self.settings.key_field,
            &to_read,
        )
        .await?;
        let mut earliest: BTreeMap<String, Option<String>> =
            to_read.into_iter().zip(read).collect();
        let now = format_date(Utc::now());
        let updates: Vec<ConditionalUpdate> = claims
            .iter()
            .map(|(key, claim)| {
                let next_due = if recently_written(claim) {
                    Some(soon.clone())
                } else {
                    earliest.remove(key).flatten()
                };
                ConditionalUpdate {
                    key: key.clone(),
                    seq_no: claim.seq_no,
                    primary_term: claim.primary_term,
                    doc: json!({ "nextDue": next_due, "leaseOwner": Value::Null, "leaseUntil": now, "lastUpdated": now }),
                }
            })
            .collect();
        let outcomes =
            conditional_updates(&self.client, &self.settings.queues_index, &updates).await?;
        for (update, outcome) in updates.into_iter().zip(outcomes) {
            if outcome.is_some() {
                continue;
            }
            let key = update.key;
            if let Some((owner, seq_no, primary_term)) = self.reread(&key).await?
                && owner.as_deref() == Some(self.settings.owner.as_str())
            {
                let lease_only = json!({ "leaseOwner": Value::Null, "leaseUntil": now });
                self.update_queue(&key, seq_no, primary_term, lease_only)
                    .await?;
            }
        }
        Ok(())
    }

    /// Due URLs of the keys whose earlier URLs have all left the topology, in one `_msearch`.
    async fn read_urls(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let mut ready = Vec::new();
        for (key, claim) in self.claims.iter_mut() {
            claim.outstanding.retain(|url| busy.in_topology(url));
            if claim.outstanding.is_empty() {
                ready.push(key.clone());
            }
        }
        if ready.is_empty() {
            return Ok(Vec::new());
        }
        let now = format_date(Utc::now());
        let mut lines = Vec::with_capacity(ready.len() * 2);
        for key in &ready {
            lines.push(json!({ "index": self.settings.urls_index }));
            lines.push(json!({
                "size": self.settings.max_urls_per_queue * 2,
                "track_total_hits": false,
                "query": { "bool": { "filter": [
                    { "term": { self.settings.key_field.query_field(): key } },
                    { "range": { "nextFetchDate": { "lte": now } } }
                ] } },
                "sort": [ { "nextFetchDate": "asc" }, { "url": "asc" } ]
            }));
        }
        let answer = self
            .client
            .request(
                Method::Post,
                "/_msearch",
                &[],
                Some(RequestBody::NdJson(lines)),
            )
            .await
            .map_err(|e| SpoutError::with_source("reading queues' URLs failed", e))?;
        let responses = answer["responses"].as_array().cloned().unwrap_or_default();
        let mut batch = Vec::new();
        let mut drained = Vec::new();
        for (key, response) in ready.iter().zip(responses.iter()) {
            let hits = response["hits"]["hits"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut taken = 0;
            for hit in &hits {
                if taken >= self.settings.max_urls_per_queue {
                    break;
                }
                let Ok(doc) = read_document(&hit["_source"], &self.settings.key_field) else {
                    continue;
                };
                if busy.contains(doc.url.url.as_str()) {
                    continue;
                }
                let key = doc.key.clone().unwrap_or_else(|| {
                    partition_key(
                        &doc.url.url,
                        &doc.url.metadata,
                        self.settings.partition_mode,
                    )
                });
                let mut url = doc.url;
                if let Some(claim) = self.claims.get_mut(&key) {
                    claim.outstanding.push(url.url.to_string());
                    // Every process keeps the delay one of them learned from robots.txt.
                    if let Some(delay) = claim.crawl_delay {
                        url.metadata
                            .set(keys::QUEUE_CRAWL_DELAY, format!("{delay:.3}"));
                    }
                }
                batch.push(DueUrl { url, key });
                taken += 1;
            }
            // Nothing due that is not already done (waiting for the refresh): give the queue back,
            // unless a writer changed it moments ago and its URLs may not show yet: then keep it and
            // read it again with the next query.
            let fresh = self
                .claims
                .get(key)
                .is_some_and(|claim| self.recently_written(claim));
            if taken == 0 && !fresh {
                drained.push(key.clone());
            }
        }
        self.release_all(drained).await?;
        metrics::counter!("squall_queue_urls_total").increment(batch.len() as u64);
        Ok(batch)
    }
}

#[async_trait]
impl Spout for QueueSpout {
    /// A refresh, and a lease: a queue held by a process that died comes back only when its lease
    /// runs out, so "nothing left" is concluded only after that long.
    fn visibility_delay(&self) -> Duration {
        self.settings.refresh_interval + self.settings.lease_ttl + Duration::from_millis(500)
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        self.renew_leases().await?;
        self.claim_queues().await?;
        self.read_urls(busy).await
    }
}
