//! The queue spout: lists due, unleased queues; claims them with conditional updates (so two
//! processes never both win one); reads the claimed queues' due URLs in one search; renews leases
//! while it works; releases a drained queue with an owner-checked script that sets `nextDue` to the
//! earlier of what it saw in the urls index and what writers recorded while it held the queue
//! (`heldDue`), so that no write made during the lease is lost.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::model::{CrawlUrl, keys};
use squall::spout::{BusyUrls, DueUrl, Spout, SpoutError};
use tracing::{debug, info};

use super::batched::{
    ConditionalUpdate, ScriptedUpdate, conditional_updates, next_dues, scripted_updates,
};
use super::schema::{RELEASE_QUEUE, RENEW_LEASE};
use crate::client::{EsClient, RequestBody};
use crate::schema::{KeyField, document_id, format_date, read_document};

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
    /// Queues claimed by one query at most: a spout holding many queues fills up over a few
    /// queries, and its first URLs come after a small claim rather than a large one.
    pub max_claims_per_query: usize,
    /// Due URLs read per queue per query.
    pub max_urls_per_queue: usize,
    /// How long a write takes to show in queries (the indices' refresh interval).
    pub refresh_interval: Duration,
}

impl QueueSpoutSettings {
    /// Defaults for the two indices: 60 s leases, 100 queues of 10 URLs (claimed up to 100 per
    /// query), owner from host and PID.
    pub fn new(urls_index: &str, queues_index: &str) -> Self {
        QueueSpoutSettings {
            urls_index: urls_index.to_string(),
            queues_index: queues_index.to_string(),
            key_field: KeyField::default(),
            owner: default_owner(),
            lease_ttl: Duration::from_secs(60),
            max_queues: 100,
            max_claims_per_query: 100,
            max_urls_per_queue: 10,
            refresh_interval: Duration::from_secs(1),
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
    lease_until: DateTime<Utc>,
    /// When a writer last changed the queue, as of the claim.
    last_updated: Option<DateTime<Utc>>,
    /// The queue's crawl delay learned from robots.txt (by any process), in seconds.
    crawl_delay: Option<f64>,
    /// URLs returned and possibly still in the topology.
    outstanding: Vec<String>,
    /// URLs that left the topology (processed, not failed) so recently that the index may still
    /// show their old dates, with when that was seen; their new dates went into `heldDue`.
    recently_done: Vec<(String, Instant)>,
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

    /// Lists due queues nobody holds, and claims them until `max_queues` are held.
    async fn claim_queues(&mut self) -> Result<(), SpoutError> {
        let room = self
            .settings
            .max_queues
            .saturating_sub(self.claims.len())
            .min(self.settings.max_claims_per_query.max(1));
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
            if outcome.is_none() {
                continue;
            }
            let last_updated = hit["_source"]["lastUpdated"]
                .as_str()
                .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
                .map(|d| d.with_timezone(&Utc));
            self.claims.insert(
                key,
                Claim {
                    lease_until,
                    last_updated,
                    crawl_delay: hit["_source"]["crawlDelaySeconds"].as_f64(),
                    outstanding: Vec::new(),
                    recently_done: Vec::new(),
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

    /// Renews leases that are past half their life, in one bulk; a lease found taken is dropped.
    async fn renew_leases(&mut self) -> Result<(), SpoutError> {
        let half =
            TimeDelta::from_std(self.settings.lease_ttl / 2).unwrap_or(TimeDelta::seconds(30));
        let lease_until = self.lease_until();
        let until = format_date(lease_until);
        let updates: Vec<ScriptedUpdate> = self
            .claims
            .iter()
            .filter(|(_, c)| c.lease_until - Utc::now() < half)
            .map(|(key, _)| ScriptedUpdate {
                key: key.clone(),
                params: json!({ "owner": self.settings.owner, "until": until }),
            })
            .collect();
        let renewed = scripted_updates(
            &self.client,
            &self.settings.queues_index,
            RENEW_LEASE,
            &updates,
        )
        .await?;
        for (update, renewed) in updates.into_iter().zip(renewed) {
            if renewed {
                if let Some(claim) = self.claims.get_mut(&update.key) {
                    claim.lease_until = lease_until;
                }
            } else {
                info!(key = %update.key, "lease lost to another process");
                self.claims.remove(&update.key);
            }
        }
        Ok(())
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

    /// Gives drained queues back in one bulk: `nextDue` becomes the earliest date among the URLs
    /// this process did not just process (one aggregation for all of them), or the earliest date
    /// written while it held the queue, whichever comes first.
    async fn release_all(&mut self, keys: Vec<String>) -> Result<(), SpoutError> {
        let claims: Vec<(String, Claim)> = keys
            .into_iter()
            .filter_map(|key| self.claims.remove(&key).map(|claim| (key, claim)))
            .collect();
        if claims.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = claims.iter().map(|(key, _)| key.clone()).collect();
        let processed: Vec<String> = claims
            .iter()
            .flat_map(|(_, claim)| claim.recently_done.iter().map(|(url, _)| document_id(url)))
            .collect();
        let next = next_dues(
            &self.client,
            &self.settings.urls_index,
            &self.settings.key_field,
            &keys,
            processed,
        )
        .await?;
        let now = format_date(Utc::now());
        let updates: Vec<ScriptedUpdate> = keys
            .into_iter()
            .map(|key| ScriptedUpdate {
                params: json!({ "owner": self.settings.owner, "next": next.get(&key), "now": now }),
                key,
            })
            .collect();
        scripted_updates(
            &self.client,
            &self.settings.queues_index,
            RELEASE_QUEUE,
            &updates,
        )
        .await?;
        Ok(())
    }

    /// Due URLs of the held queues that are not already in the topology, in one search: a queue is
    /// read again as soon as the runner asks (the fetcher has taken what it had), while its earlier
    /// URLs are still being fetched, so one busy host is never limited to one read per round trip.
    async fn read_urls(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let visibility = self.settings.refresh_interval + Duration::from_secs(1);
        let mut ready = Vec::new();
        // URLs of the held queues that must not come back: in the topology, or done so recently
        // that the index may still show their old dates.
        let mut skip = Vec::new();
        for (key, claim) in self.claims.iter_mut() {
            let (in_topology, done): (Vec<String>, Vec<String>) = claim
                .outstanding
                .drain(..)
                .partition(|url| busy.in_topology(url));
            claim.outstanding = in_topology;
            let seen = Instant::now();
            claim
                .recently_done
                .extend(done.into_iter().map(|url| (url, seen)));
            claim
                .recently_done
                .retain(|(_, at)| at.elapsed() < visibility);
            skip.extend(claim.outstanding.iter().map(|url| document_id(url)));
            skip.extend(claim.recently_done.iter().map(|(url, _)| document_id(url)));
            ready.push(key.clone());
        }
        if ready.is_empty() {
            return Ok(Vec::new());
        }
        // One aggregation over the ready queues only: each one's earliest due URLs, at most
        // `max_urls_per_queue` of them, whatever the other queues hold.
        let field = self.settings.key_field.query_field();
        let body = json!({
            "size": 0,
            "track_total_hits": false,
            "query": { "bool": {
                "filter": [
                    { "terms": { field.clone(): ready } },
                    { "range": { "nextFetchDate": { "lte": format_date(Utc::now()) } } }
                ],
                "must_not": [ { "ids": { "values": skip } } ]
            } },
            "aggs": { "queues": {
                "terms": { "field": field, "size": ready.len(), "shard_size": ready.len() },
                "aggs": { "due": { "top_hits": {
                    "size": self.settings.max_urls_per_queue,
                    "sort": [ { "nextFetchDate": "asc" }, { "url": "asc" } ]
                } } }
            } }
        });
        let answer = self
            .client
            .request(
                Method::Post,
                &format!("/{}/_search", self.settings.urls_index),
                &[],
                Some(RequestBody::Json(body)),
            )
            .await
            .map_err(|e| SpoutError::with_source("reading queues' URLs failed", e))?;
        let no_buckets = Vec::new();
        let buckets = answer["aggregations"]["queues"]["buckets"]
            .as_array()
            .unwrap_or(&no_buckets);
        let mut with_due = std::collections::BTreeSet::new();
        let mut batch = Vec::new();
        for bucket in buckets {
            let Some(key) = bucket["key"].as_str() else {
                continue;
            };
            with_due.insert(key.to_string());
            let Some(claim) = self.claims.get_mut(key) else {
                continue;
            };
            let no_hits = Vec::new();
            let hits = bucket["due"]["hits"]["hits"].as_array().unwrap_or(&no_hits);
            // The queue's share: URLs still waiting for the fetcher count against it.
            let room = self
                .settings
                .max_urls_per_queue
                .saturating_sub(busy.waiting_in(key));
            for hit in hits.iter().take(room) {
                let Ok(doc) = read_document(&hit["_source"], &self.settings.key_field) else {
                    continue;
                };
                // Done and waiting for the refresh to show its new date: not due again.
                if busy.contains(doc.url.url.as_str()) {
                    continue;
                }
                let mut url = doc.url;
                claim.outstanding.push(url.url.to_string());
                // Every process keeps the delay one of them learned from robots.txt.
                if let Some(delay) = claim.crawl_delay {
                    url.metadata
                        .set(keys::QUEUE_CRAWL_DELAY, format!("{delay:.3}"));
                }
                batch.push(DueUrl {
                    url,
                    key: key.to_string(),
                });
            }
        }
        // A queue with no due URL left and none in the topology is given back, unless a writer
        // changed it moments ago (its URLs may not show yet).
        let drained: Vec<String> = ready
            .into_iter()
            .filter(|key| {
                !with_due.contains(key)
                    && self.claims.get(key).is_some_and(|claim| {
                        claim.outstanding.is_empty() && !self.recently_written(claim)
                    })
            })
            .collect();
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

    /// Its reads leave out the URLs in the topology.
    fn reads_past_busy(&self) -> bool {
        true
    }

    /// A write shows in the urls index after a refresh.
    fn write_visibility(&self) -> Duration {
        self.settings.refresh_interval
    }

    /// A URL that failed stays due: the release must see its date in the index.
    async fn fail(&mut self, url: &CrawlUrl) {
        let url = url.url.as_str();
        for claim in self.claims.values_mut() {
            claim.outstanding.retain(|outstanding| outstanding != url);
            claim.recently_done.retain(|(done, _)| done != url);
        }
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        self.renew_leases().await?;
        self.claim_queues().await?;
        self.read_urls(busy).await
    }
}
