//! The queue spout: claims due queues, reads their URLs with light queries (see `reads`), hands them
//! out under the queue's lease, and gives each queue back when it is drained, when it was held long
//! enough while others wait, or when this process holds more than its share.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{TimeDelta, Utc};
use serde_json::json;
use squall::frontier::{BusyUrls, DueUrl, Lease, QueueHints, Spout, SpoutError};
use squall::model::CrawlUrl;
use tracing::debug;

use super::claims::{ClaimRequest, claim_queues};
use super::edit_writes::{EditOutcome, apply_edits};
use super::edits::{KeyedEdit, QueueEdit};
use super::reads::{Cursor, QueueRead, ReadRequest, next_dates, read_queues};
use super::settings::QueueSpoutSettings;
use super::upkeep::{FrontierLoad, Held, Tenure, Upkeep, retire};
use crate::client::{EsClient, Method, RequestBody};
use crate::status_index::schema::{document_id, format_date};

/// A queue this process holds.
#[derive(Debug)]
struct Claim {
    /// The lease, shared with the upkeep (which renews it) and with every URL handed out.
    lease: Lease,
    /// What the claim wrote in `leaseOwner`, which its release or drop names ([`Tenure`]).
    holder: String,
    /// When it was claimed, for the longest hold.
    claimed_at: Instant,
    /// The claim's wall-clock time less the urls index's visibility: due dates written from then
    /// on may be missing from this process's reads, so a release folds them in (`heldDue`).
    seen_before: String,
    /// The queue's crawl delay learned from robots.txt (by any process).
    crawl_delay: Option<Duration>,
    /// URLs handed out and possibly still in the topology.
    outstanding: Vec<String>,
    /// URLs that left the topology so recently that the index may still show their old dates.
    recently_done: Vec<(String, Instant)>,
    /// Given back once its outstanding URLs are done; not read any more.
    closing: bool,
    /// Where its next read resumes (see `reads`); reset when one of its URLs fails, so that the
    /// URL, still due, is read again.
    cursor: Option<Cursor>,
    /// Until then a read that finds nothing does not give the queue back: a writer wrote to it
    /// shortly before the claim, and its URLs may not show in the urls index yet (typically a new
    /// host, claimed as soon as its queue appeared).
    written_lately_until: Option<chrono::DateTime<Utc>>,
}

impl Claim {
    /// Whether the urls index shows every write made to the queue before its claim.
    fn writes_visible(&self) -> bool {
        self.written_lately_until
            .is_none_or(|until| Utc::now() >= until)
    }

    /// Whether a drained queue may be given back: nothing of it is in the topology and the index
    /// shows the writes made to it before its claim. Unless other due queues wait, it is also kept
    /// until the writes of its URLs just done show: in a crawl those pages add links to their own
    /// host, and a queue given back now would sit out the cool-down (another process may not
    /// claim it before those writes show) while its new URLs are due. While queues wait it goes
    /// back at once, and the cool-down covers its recent writes.
    fn may_release(&self, queues_waiting: bool) -> bool {
        self.outstanding.is_empty()
            && self.writes_visible()
            && (queues_waiting || self.recently_done.is_empty())
    }
}

/// Names claims apart: `owner#prefix.count`, with a random prefix per spout.
#[derive(Debug)]
struct ClaimNames {
    prefix: u32,
    count: u64,
}

impl ClaimNames {
    fn new() -> Self {
        ClaimNames {
            prefix: fastrand::u32(..),
            count: 0,
        }
    }

    /// The `leaseOwner` of the next claim by `owner`.
    fn next(&mut self, owner: &str) -> String {
        self.count += 1;
        format!("{owner}#{:08x}.{}", self.prefix, self.count)
    }
}

/// The spout over a urls index and a queues index. See the [module docs](super) for the
/// invariants it keeps.
#[derive(Debug)]
pub struct QueueSpout {
    client: EsClient,
    settings: QueueSpoutSettings,
    claims: BTreeMap<String, Claim>,
    /// The leases of `claims`, for the upkeep.
    held: Held,
    /// Names this spout's claims: a random prefix (a process started again under the same owner
    /// names its claims apart from the last one's) and a count.
    claim_names: ClaimNames,
    load: Arc<FrontierLoad>,
    upkeep: Option<Upkeep>,
}

impl QueueSpout {
    /// A spout for `settings`. Its upkeep (lease renewals, heartbeat) starts with its first query,
    /// on the Tokio runtime, and stops when it is dropped.
    pub fn new(client: EsClient, settings: QueueSpoutSettings) -> Self {
        QueueSpout {
            client,
            settings,
            claims: BTreeMap::new(),
            held: Held::default(),
            claim_names: ClaimNames::new(),
            load: Arc::new(FrontierLoad::default()),
            upkeep: None,
        }
    }

    /// The keys this process holds now.
    pub fn held_keys(&self) -> Vec<String> {
        self.claims.keys().cloned().collect()
    }

    /// Stops the background upkeep (lease renewals, heartbeat) as a paused process's would stop,
    /// until the next query starts it again: for tests that pause one spout past its lease while
    /// the rest of the test runs on.
    pub fn suspend_upkeep(&mut self) {
        self.upkeep = None;
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &QueueSpoutSettings {
        &self.settings
    }

    fn start_upkeep(&mut self) {
        if self.upkeep.is_none() {
            self.upkeep = Some(Upkeep::start(
                self.client.clone(),
                self.settings.clone(),
                Arc::clone(&self.held),
                Arc::clone(&self.load),
            ));
        }
    }

    /// Forgets queues whose lease ran out or was taken: nothing more is read or handed out from
    /// them (what is in the topology is fenced by its lease). A lease that merely ran out here is
    /// dropped in the index too, in case it is still ours there.
    async fn forget_lost(&mut self) -> Result<(), SpoutError> {
        let lost: Vec<String> = self
            .claims
            .iter()
            .filter(|(_, claim)| !claim.lease.is_valid())
            .map(|(key, _)| key.clone())
            .collect();
        if !lost.is_empty() {
            debug!(lost = lost.len(), "leases lost or run out");
            metrics::counter!("squall_queue_leases_lost_total").increment(lost.len() as u64);
        }
        self.drop_leases(lost).await
    }

    /// Marks for giving back the queues held past the longest hold while others wait, and the
    /// queues beyond this process's fair share (held longest first).
    fn mark_closing(&mut self) {
        if self.load.queues_waiting() {
            for claim in self.claims.values_mut() {
                if claim.claimed_at.elapsed() >= self.settings.max_hold {
                    claim.closing = true;
                }
            }
        }
        let cap = self.settings.max_queues.min(self.load.share());
        let open = self.claims.values().filter(|c| !c.closing).count();
        if open > cap {
            let mut by_age: Vec<(&String, Instant)> = self
                .claims
                .iter()
                .filter(|(_, c)| !c.closing)
                .map(|(key, c)| (key, c.claimed_at))
                .collect();
            by_age.sort_by_key(|(_, at)| *at);
            let extra: Vec<String> = by_age
                .into_iter()
                .take(open - cap)
                .map(|(key, _)| key.clone())
                .collect();
            for key in extra {
                if let Some(claim) = self.claims.get_mut(&key) {
                    claim.closing = true;
                }
            }
        }
    }

    /// Claims due queues up to this process's share.
    async fn claim(&mut self) -> Result<(), SpoutError> {
        let cap = self.settings.max_queues.min(self.load.share());
        let room = cap
            .saturating_sub(self.claims.len())
            .min(self.settings.max_claims_per_query.max(1));
        if room == 0 {
            return Ok(());
        }
        let sent = Instant::now();
        let claimed_wall = Utc::now();
        let ttl = TimeDelta::from_std(self.settings.lease_ttl).unwrap_or(TimeDelta::seconds(60));
        let visibility = self.settings.visibility_span();
        let seen_before = format_date(claimed_wall - visibility);
        let claims = &self.claims;
        let holder = self.claim_names.next(&self.settings.owner);
        let request = ClaimRequest {
            cooled_before: &seen_before,
            owner: &holder,
            lease_until: claimed_wall + ttl,
            seen_before: &seen_before,
            room,
        };
        let claimed = claim_queues(&self.client, &self.settings.queues_index, request, |key| {
            claims.contains_key(key)
        })
        .await?;
        let count = claimed.len();
        for queue in claimed {
            let lease = Lease::until(sent + self.settings.trusted_lease());
            let tenure = Tenure {
                lease: lease.clone(),
                holder: holder.clone(),
            };
            self.held.insert(queue.key.clone(), tenure);
            self.claims.insert(
                queue.key,
                Claim {
                    lease,
                    holder: holder.clone(),
                    claimed_at: sent,
                    seen_before: seen_before.clone(),
                    crawl_delay: queue
                        .crawl_delay
                        .and_then(|d| Duration::try_from_secs_f64(d).ok()),
                    outstanding: Vec::new(),
                    recently_done: Vec::new(),
                    closing: false,
                    cursor: None,
                    written_lately_until: queue.last_written.map(|at| at + visibility),
                },
            );
        }
        if count > 0 {
            debug!(claimed = count, held = self.claims.len(), "queues claimed");
            metrics::counter!("squall_queue_claims_total").increment(count as u64);
        }
        Ok(())
    }

    /// Moves each claim's URLs that left the topology to its recently done list, forgetting those
    /// done longer ago than the index's visibility delay.
    fn settle_outstanding(&mut self, busy: &BusyUrls) {
        let visibility = self.settings.visibility();
        let seen = Instant::now();
        for claim in self.claims.values_mut() {
            let (in_topology, done): (Vec<String>, Vec<String>) = claim
                .outstanding
                .drain(..)
                .partition(|url| busy.in_topology(url));
            claim.outstanding = in_topology;
            claim
                .recently_done
                .extend(done.into_iter().map(|url| (url, seen)));
            claim
                .recently_done
                .retain(|(_, at)| at.elapsed() < visibility);
        }
    }

    /// What to read of each open queue: as many URLs as its share of the fetcher has room for.
    fn read_requests(&self, busy: &BusyUrls) -> Vec<ReadRequest> {
        self.claims
            .iter()
            .filter(|(_, claim)| !claim.closing)
            .filter_map(|(key, claim)| {
                let size = self
                    .settings
                    .max_urls_per_queue
                    .saturating_sub(busy.waiting_in(key));
                (size > 0).then(|| ReadRequest {
                    key: key.clone(),
                    size,
                    after: claim.cursor.clone(),
                })
            })
            .collect()
    }

    /// Hands out a queue's due URLs under its lease.
    fn hand_out(&mut self, key: &str, read: &QueueRead, busy: &BusyUrls, batch: &mut Vec<DueUrl>) {
        let Some(claim) = self.claims.get_mut(key) else {
            return;
        };
        let hints = QueueHints {
            crawl_delay: claim.crawl_delay,
            lease: Some(claim.lease.clone()),
        };
        for read in &read.due {
            claim.cursor.get_or_insert_with(Cursor::default).take(read);
            let url = &read.doc.url;
            // In the topology, or done and waiting for the refresh to show its new date.
            if busy.contains(url.url.as_str()) {
                continue;
            }
            claim.outstanding.push(url.url.to_string());
            batch.push(DueUrl {
                url: url.clone(),
                key: key.to_string(),
                hints: hints.clone(),
            });
        }
    }

    /// Gives drained queues back: `nextDue` becomes the earliest date among their URLs not just
    /// done, or an earlier date written since their claim (see [`RELEASE_QUEUE`](super::edits::RELEASE_QUEUE)).
    async fn release(&mut self, drained: Vec<String>) -> Result<(), SpoutError> {
        if drained.is_empty() {
            return Ok(());
        }
        let skip: Vec<String> = drained
            .iter()
            .filter_map(|key| self.claims.get(key))
            .flat_map(|claim| claim.recently_done.iter().map(|(url, _)| document_id(url)))
            .collect();
        let next = next_dates(
            &self.client,
            &self.settings.urls_index,
            &self.settings.key_field,
            &drained,
            &skip,
        )
        .await?;
        let now = format_date(Utc::now());
        let mut updates = Vec::new();
        for key in drained {
            let next = next.get(&key);
            let Some(claim) = self.claims.remove(&key) else {
                continue;
            };
            self.held.remove(&key);
            claim.lease.revoke();
            updates.push(KeyedEdit {
                edit: QueueEdit::Release {
                    owner: claim.holder.clone(),
                    next: next.cloned(),
                    seen_before: claim.seen_before.clone(),
                    now: now.clone(),
                },
                key,
                upsert: None,
            });
        }
        self.edit_queues(&updates).await
    }

    /// Gives back queues that may still have due URLs, without touching their `nextDue`.
    async fn drop_leases(&mut self, keys: Vec<String>) -> Result<(), SpoutError> {
        let now = format_date(Utc::now());
        let mut updates = Vec::new();
        for key in keys {
            let claim = self.claims.remove(&key);
            let tenure = self.held.remove(&key).map(|(_, tenure)| tenure);
            let Some(holder) = claim
                .map(|claim| {
                    claim.lease.revoke();
                    claim.holder
                })
                .or(tenure.map(|tenure| tenure.holder))
            else {
                continue;
            };
            updates.push(KeyedEdit {
                edit: QueueEdit::DropLease {
                    owner: holder,
                    now: now.clone(),
                },
                key,
                upsert: None,
            });
        }
        self.edit_queues(&updates).await
    }

    /// Applies edits to the queues this process gives back; the first that failed is the error.
    async fn edit_queues(&self, edits: &[KeyedEdit]) -> Result<(), SpoutError> {
        let outcomes = apply_edits(&self.client, &self.settings.queues_index, edits)
            .await
            .map_err(|e| e.for_spout("queue updates failed"))?;
        match outcomes.into_iter().find(|o| !o.is_done()) {
            Some(EditOutcome::Failed { kind, message }) => Err(SpoutError::of_kind(kind, message)),
            _ => Ok(()),
        }
    }

    /// Closing queues whose URLs are all done: given back now.
    fn closed(&self) -> Vec<String> {
        self.claims
            .iter()
            .filter(|(_, claim)| claim.closing && claim.outstanding.is_empty())
            .map(|(key, _)| key.clone())
            .collect()
    }
}

#[async_trait]
impl Spout for QueueSpout {
    /// A write shows after a refresh (with a margin for replicas); whether another process still
    /// holds work is asked of the queues index ([`frontier_idle`](Spout::frontier_idle)).
    fn visibility_delay(&self) -> Duration {
        self.settings.visibility()
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
            if claim
                .outstanding
                .iter()
                .any(|outstanding| outstanding == url)
            {
                claim.cursor = None;
            }
            claim.outstanding.retain(|outstanding| outstanding != url);
            claim.recently_done.retain(|(done, _)| done != url);
        }
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        self.start_upkeep();
        self.forget_lost().await?;
        self.settle_outstanding(busy);
        self.mark_closing();
        let closed = self.closed();
        self.drop_leases(closed).await?;
        self.claim().await?;
        let requests = self.read_requests(busy);
        let reads = read_queues(
            &self.client,
            &self.settings.urls_index,
            &self.settings.key_field,
            &requests,
            Utc::now(),
        )
        .await?;
        let mut batch = Vec::new();
        let mut drained = Vec::new();
        let queues_waiting = self.load.queues_waiting();
        for (key, read) in reads {
            self.hand_out(&key, &read, busy, &mut batch);
            let idle = self
                .claims
                .get(&key)
                .is_some_and(|claim| claim.may_release(queues_waiting));
            if read.drained() && idle {
                drained.push(key);
            }
        }
        self.release(drained).await?;
        metrics::counter!("squall_queue_urls_total").increment(batch.len() as u64);
        Ok(batch)
    }

    /// Idle when this process holds nothing and the queues index shows no due queue and no lease.
    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        if !self.claims.is_empty() {
            return Ok(false);
        }
        let now = format_date(Utc::now());
        let body = json!({ "query": { "bool": { "minimum_should_match": 1, "should": [
            { "range": { "nextDue": { "lte": now } } },
            { "range": { "leaseUntil": { "gt": now } } }
        ] } } });
        let answer = self
            .client
            .request(
                Method::Post,
                &format!("/{}/_count", self.settings.queues_index),
                &[],
                Some(RequestBody::Json(body)),
            )
            .await
            .map_err(|e| e.for_spout("counting queues with work failed"))?;
        Ok(answer["count"].as_u64() == Some(0))
    }

    /// Gives back every queue held (others take them over at once) and retires the heartbeat.
    async fn close(&mut self) {
        let keys = self.held_keys();
        if let Err(error) = self.drop_leases(keys).await {
            debug!(%error, "could not give the queues back; their leases run out instead");
        }
        self.upkeep = None;
        retire(&self.client, &self.settings).await;
    }
}
