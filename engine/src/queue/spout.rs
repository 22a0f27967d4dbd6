//! The queue spout: claims due queues, reads each one's URLs with a light query when it is claimed
//! (and again only when that runs low; see `reads`), hands them out under the queue's lease along
//! with the URLs this process's writer created for it meanwhile (see `shared_holds`), and gives each queue
//! back when it is drained, when it was held long enough while others wait, or when this process
//! holds more than its share.
//!
//! Each round sends what it can at once: the leases given back and the claims of new queues go
//! together, then one read for each queue that needs one (at most `READS_PER_ROUND`, those with
//! the fewest URLs in hand first, so that a round's latency does not follow how many queues came
//! low at once), then the releases of drained queues.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use chrono::{TimeDelta, Utc};
use serde_json::json;
use squall::frontier::{BusyUrls, DueUrl, Lease, Spout, SpoutError};
use squall::model::CrawlUrl;
use tracing::debug;

use super::claiming::{ClaimRequest, Claimed, RecentQueues, claim_queues};
use super::edit_apply::{EditOutcome, apply_edits};
use super::edit_rules::{KeyedEdit, QueueEdit};
use super::fields::{LEASE_UNTIL, NEXT_DUE};
use super::hold::{Hold, ReadKind};
use super::reads::{ReadRequest, read_queues};
use super::settings::QueueSpoutConfig;
use super::shared_holds::{SharedHold, SharedHolds};
use super::timings::{Stage, StageTimes};
use super::upkeep::{FrontierLoad, Upkeep, retire};
use super::writer::QueueStatusStore;
use crate::client::{EsClient, Method, RequestBody};
use crate::status_index::schema::format_date;

/// Names claims apart: `owner#prefix.count`, with a random prefix per spout.
#[derive(Debug)]
struct HolderNames {
    prefix: u32,
    count: u64,
}

impl HolderNames {
    fn new() -> Self {
        HolderNames {
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
    settings: QueueSpoutConfig,
    holds: BTreeMap<String, Hold>,
    /// The shared part of `holds`, with the upkeep (which renews their leases) and the writer (which
    /// notes its writes in them).
    shared: SharedHolds,
    /// Names this spout's claims: a random prefix (a process started again under the same owner
    /// names its claims apart from the last one's) and a count.
    holder_names: HolderNames,
    load: Arc<FrontierLoad>,
    upkeep: Option<Upkeep>,
    /// When the last claim found no queue to take: the next waits half a second, unless queues are
    /// known to wait.
    claimed_nothing_at: Option<Instant>,
    /// The queues claimed or given back within the visibility delay, which a listing may show as
    /// they were before.
    recent: RecentQueues,
    /// Where its rounds' time goes.
    times: Arc<StageTimes>,
}

/// The queues a [`QueueSpout`] holds and how long their leases have left, shared with the spout.
#[derive(Debug, Clone)]
pub struct QueueLeases(SharedHolds);

impl squall::frontier::LeaseView for QueueLeases {
    fn held(&self) -> Vec<squall::frontier::HeldLease> {
        let mut held: Vec<squall::frontier::HeldLease> = self
            .0
            .map()
            .iter()
            .map(|entry| squall::frontier::HeldLease {
                key: entry.key().clone(),
                remaining: entry.value().lease.remaining(),
            })
            .collect();
        held.sort_by(|a, b| a.key.cmp(&b.key));
        held
    }
}

/// Queues read in one round at most, those with the fewest URLs in hand first (the rest wait for
/// the next round). Measured at 10 M URLs, uncapped rounds' p99 was 1.4 times that at 1 M (156
/// against 114 ms) as more queues ran low together; capped, the same (about 105 ms at both sizes)
/// at the same URLs a second.
const READS_PER_ROUND: usize = 50;

/// Idle looks sent in one round at most, besides the reads above: a look is for a queue read
/// through, so its answer is almost always empty, and at the end of a crawl every held queue owes
/// two of them at once (capped with the reads, 1,000 held queues ended 30 to 60 s later).
const IDLE_LOOKS_PER_ROUND: usize = 500;

/// Read rounds in one query at most while they hand out nothing and reads are left for the next
/// round. At the end of a crawl the runner asks only every `spout.min.delay.queries` once its
/// answers come back empty, while the queues claimed a round before still wait for their first read
/// (one round each for 50 of them stretched the as-given crawls' end by 40 s).
const READ_ROUNDS_WHEN_EMPTY: usize = 4;

/// How long after a claim that found nothing the next one waits, unless queues are known to wait.
const CLAIM_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// A claim about to be sent: what it writes, and when.
struct ClaimPlan {
    holder: String,
    now: chrono::DateTime<Utc>,
    seen_before: String,
    lease_until: chrono::DateTime<Utc>,
    room: usize,
    sent: Instant,
}

impl QueueSpout {
    /// A spout for `settings`. Its upkeep (lease renewals, heartbeat) starts with its first query,
    /// on the Tokio runtime, and stops when it is dropped.
    pub fn new(client: EsClient, settings: QueueSpoutConfig) -> Self {
        QueueSpout {
            client,
            settings,
            holds: BTreeMap::new(),
            shared: SharedHolds::default(),
            holder_names: HolderNames::new(),
            load: Arc::new(FrontierLoad::default()),
            upkeep: None,
            claimed_nothing_at: None,
            recent: RecentQueues::default(),
            times: Arc::default(),
        }
    }

    /// Where its rounds' time went so far, by stage (shared: it keeps counting).
    pub fn timings(&self) -> Arc<StageTimes> {
        Arc::clone(&self.times)
    }

    /// The writer of this spout's process: it writes as [`QueueStatusStore::new`]'s does, but notes
    /// the writes for the queues this spout holds in their holds instead of editing the queues, so
    /// that new URLs are handed out without waiting for a refresh.
    pub fn status_store(&self) -> QueueStatusStore {
        QueueStatusStore::new(
            self.client.clone(),
            &self.settings.urls_index,
            &self.settings.queues_index,
            self.settings.key_field.clone(),
        )
        .with_holds(self.shared.clone())
    }

    /// What this spout holds, readable from elsewhere while it runs (a live view's leases).
    pub fn leases(&self) -> QueueLeases {
        QueueLeases(self.shared.clone())
    }

    /// The keys this process holds now.
    pub fn held_keys(&self) -> Vec<String> {
        self.holds.keys().cloned().collect()
    }

    /// Stops the background upkeep (lease renewals, heartbeat) as a paused process's would stop,
    /// until the next query starts it again: for tests that pause one spout past its lease while
    /// the rest of the test runs on.
    pub fn suspend_upkeep(&mut self) {
        self.upkeep = None;
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &QueueSpoutConfig {
        &self.settings
    }

    fn start_upkeep(&mut self) {
        if self.upkeep.is_none() {
            self.upkeep = Some(Upkeep::start(
                self.client.clone(),
                self.settings.clone(),
                self.shared.clone(),
                Arc::clone(&self.load),
            ));
        }
    }

    /// Takes the hold of `key` out, its lease revoked: at once when `force`, else only when no
    /// write is in flight on it (`None`: it stays for now).
    fn take_hold(&mut self, key: &str, force: bool) -> Option<Hold> {
        if self.shared.map().contains_key(key) {
            if force {
                self.shared.take(key)?;
            } else {
                self.shared.take_idle(key)?;
            }
        }
        let hold = self.holds.remove(key)?;
        hold.shared.lease.revoke();
        self.recent.touch(key);
        Some(hold)
    }

    /// The leases to drop now, without touching `nextDue`: those lost or run out (nothing more is
    /// read or handed out from them; what is in the topology is fenced by its lease), and those
    /// closing with nothing left in the topology.
    fn leases_to_drop(&mut self) -> Vec<KeyedEdit> {
        let lost: Vec<String> = self
            .holds
            .iter()
            .filter(|(_, hold)| !hold.shared.lease.is_valid())
            .map(|(key, _)| key.clone())
            .collect();
        if !lost.is_empty() {
            debug!(lost = lost.len(), "leases lost or run out");
            metrics::counter!("squall_queue_leases_lost_total").increment(lost.len() as u64);
        }
        let closed: Vec<String> = self
            .holds
            .iter()
            .filter(|(_, hold)| hold.closing && hold.outstanding.is_empty())
            .map(|(key, _)| key.clone())
            .collect();
        let mut edits = self.drops(lost, true);
        edits.extend(self.drops(closed, false));
        edits
    }

    /// Takes the holds of `keys` out ([`take_hold`](Self::take_hold)) and gives the edits that
    /// drop their leases without touching `nextDue`.
    fn drops(&mut self, keys: Vec<String>, force: bool) -> Vec<KeyedEdit> {
        let now = Utc::now();
        keys.into_iter()
            .filter_map(|key| {
                let hold = self.take_hold(&key, force)?;
                let delay = self.settings.gap_between_holders(hold.latest_pace(), now);
                Some(KeyedEdit {
                    edit: QueueEdit::DropLease {
                        owner: hold.shared.holder.clone(),
                        now: format_date(hold.given_back_at(now, delay)),
                    },
                    key,
                    upsert: None,
                })
            })
            .collect()
    }

    /// Marks for giving back the queues held past the longest hold while others wait, and the
    /// queues beyond this process's fair share (held longest first).
    fn mark_closing(&mut self) {
        if self.load.queues_waiting() {
            for hold in self.holds.values_mut() {
                if hold.claimed_at.elapsed() >= self.settings.max_hold {
                    hold.closing = true;
                }
            }
        }
        let cap = self.settings.max_queues.min(self.load.share());
        let mut open: Vec<(Instant, String)> = self
            .holds
            .iter()
            .filter(|(_, hold)| !hold.closing)
            .map(|(key, c)| (c.claimed_at, key.clone()))
            .collect();
        if open.len() > cap {
            open.sort();
            let extra = open.len() - cap;
            for (_, key) in open.into_iter().take(extra) {
                if let Some(hold) = self.holds.get_mut(&key) {
                    hold.closing = true;
                }
            }
        }
    }

    /// The claim to send now, if this process has room for more queues.
    fn claim_plan(&mut self) -> Option<ClaimPlan> {
        let cap = self.settings.max_queues.min(self.load.share());
        let room = cap
            .saturating_sub(self.holds.len())
            .min(self.settings.max_claims_per_query.max(1));
        let paused = self
            .claimed_nothing_at
            .is_some_and(|at| at.elapsed() < CLAIM_PAUSE);
        if room == 0 || (paused && !self.load.queues_waiting()) {
            return None;
        }
        let now = Utc::now();
        let ttl = TimeDelta::from_std(self.settings.lease_ttl).unwrap_or(TimeDelta::seconds(60));
        Some(ClaimPlan {
            holder: self.holder_names.next(&self.settings.owner),
            now,
            seen_before: format_date(now - self.settings.visibility_span()),
            lease_until: now + ttl,
            room,
            sent: Instant::now(),
        })
    }

    /// Drops the leases to drop and sends the claim planned, at once.
    async fn drop_and_claim(&mut self) -> Result<(), SpoutError> {
        let drops = self.leases_to_drop();
        self.recent.forget_older_than(self.settings.visibility());
        let plan = self.claim_plan();
        let (holds, recent) = (&self.holds, &self.recent);
        let claiming = async {
            let Some(plan) = &plan else {
                return Ok(Vec::new());
            };
            let request = ClaimRequest {
                owner: &plan.holder,
                now: plan.now,
                lease_until: plan.lease_until,
                seen_before: &plan.seen_before,
                room: plan.room,
                stale: recent.len(),
            };
            let skip = |key: &str| holds.contains_key(key) || recent.contains(key);
            claim_queues(
                &self.client,
                &self.settings.queues_index,
                request,
                &self.times,
                skip,
            )
            .await
        };
        let (dropped, claimed) = futures::join!(self.edit_queues(&drops), claiming);
        let claimed = claimed?;
        if let Some(plan) = plan {
            self.hold_claimed(plan, claimed);
        }
        dropped
    }

    /// Holds the queues just claimed.
    fn hold_claimed(&mut self, plan: ClaimPlan, claimed: Vec<Claimed>) {
        let count = claimed.len();
        self.claimed_nothing_at = (count == 0).then(Instant::now);
        let visibility = self.settings.visibility_span();
        let early = self.settings.early_look_span();
        for queue in claimed {
            let lease = Lease::until(plan.sent + self.settings.trusted_lease());
            let shared = SharedHold::new(lease, plan.holder.clone(), plan.now);
            self.shared.map().insert(queue.key.clone(), shared.clone());
            self.recent.touch(&queue.key);
            let mut hold = Hold::new(shared, plan.sent, plan.seen_before.clone());
            hold.crawl_delay = queue
                .crawl_delay
                .and_then(|d| std::time::Duration::try_from_secs_f64(d).ok());
            hold.pace = queue.pace;
            if let Some(at) = queue.last_written {
                hold.reread_after(at + visibility);
                hold.look_early(at + early);
            }
            self.holds.insert(queue.key, hold);
        }
        if count > 0 {
            debug!(claimed = count, held = self.holds.len(), "queues claimed");
            metrics::counter!("squall_queue_claims_total").increment(count as u64);
        }
    }

    /// Reads the queues that need it, in one round: how many reads (idle looks aside) it left for
    /// the next.
    async fn read(&mut self, busy: &BusyUrls) -> Result<usize, SpoutError> {
        let now = Utc::now();
        let (size, low) = (
            self.settings.urls_per_read,
            self.settings.max_urls_per_queue,
        );
        let mut wanted: Vec<(usize, ReadKind, ReadRequest)> = Vec::new();
        let mut looks: Vec<ReadRequest> = Vec::new();
        for (key, hold) in &self.holds {
            let Some(kind) = hold.read_kind(low, now) else {
                continue;
            };
            let request = hold.next_read(key, size, kind);
            match kind {
                ReadKind::IdleLook => looks.push(request),
                kind => wanted.push((hold.ready_len(), kind, request)),
            }
        }
        wanted.sort_by_key(|(ready, kind, _)| (*ready, *kind));
        let left = wanted.len().saturating_sub(READS_PER_ROUND);
        let requests: Vec<ReadRequest> = wanted
            .into_iter()
            .take(READS_PER_ROUND)
            .map(|(_, _, request)| request)
            .chain(looks.into_iter().take(IDLE_LOOKS_PER_ROUND))
            .collect();
        if requests.is_empty() {
            return Ok(left);
        }
        metrics::counter!("squall_queue_reads_total").increment(requests.len() as u64);
        let started = Instant::now();
        let reads = read_queues(
            &self.client,
            &self.settings.urls_index,
            &self.settings.key_field,
            &requests,
            now,
        )
        .await?;
        self.times.record(Stage::Reading, started, requests.len());
        for (key, read) in reads {
            read.record_dates(self.shared.dates());
            if let Some(hold) = self.holds.get_mut(&key) {
                hold.take_read(read, busy, now);
            }
        }
        Ok(left)
    }

    /// [`hand_out`](Self::hand_out), its time recorded.
    fn timed_hand_out(&mut self, busy: &BusyUrls) -> Vec<DueUrl> {
        let started = Instant::now();
        let batch = self.hand_out(busy);
        self.times.record(Stage::HandingOut, started, batch.len());
        batch
    }

    /// Hands out what each open queue has ready, as much as its share of the fetcher has room for.
    fn hand_out(&mut self, busy: &BusyUrls) -> Vec<DueUrl> {
        let visibility = self.settings.visibility_span();
        let mut batch = Vec::new();
        for (key, hold) in self.holds.iter_mut().filter(|(_, hold)| !hold.closing) {
            hold.take_arrivals(busy, Utc::now(), visibility);
            let room = self
                .settings
                .waiting_per_queue
                .min(self.settings.max_urls_per_queue)
                .saturating_sub(busy.waiting_in(key));
            hold.hand_out(key, room, busy, Utc::now(), &mut batch);
        }
        batch
    }

    /// Gives drained queues back: `nextDue` becomes the earliest date they are known to hold, or
    /// an earlier date another process wrote since their claim (see
    /// [`RELEASE_QUEUE`](super::edit_rules::RELEASE_QUEUE)).
    async fn release_drained(&mut self) -> Result<(), SpoutError> {
        let now = Utc::now();
        let (visibility, waiting) = (self.settings.visibility_span(), self.load.queues_waiting());
        for hold in self.holds.values_mut() {
            hold.note_idle(now, visibility, waiting);
        }
        let drained: Vec<String> = self
            .holds
            .iter()
            .filter(|(_, hold)| hold.drained(now))
            .map(|(key, _)| key.clone())
            .collect();
        let mut edits = Vec::new();
        for key in drained {
            let Some(hold) = self.take_hold(&key, false) else {
                continue;
            };
            let delay = self.settings.gap_between_holders(hold.latest_pace(), now);
            edits.push(KeyedEdit {
                edit: QueueEdit::Release {
                    owner: hold.shared.holder.clone(),
                    next: hold.next_due().map(format_date),
                    seen_before: hold.seen_before.clone(),
                    now: format_date(hold.given_back_at(now, delay)),
                },
                key,
                upsert: None,
            });
        }
        if edits.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let edited = self.edit_queues(&edits).await;
        self.times.record(Stage::Releasing, started, edits.len());
        edited
    }

    /// Applies edits to the queues this process gives back; the first that failed is the error.
    async fn edit_queues(&self, edits: &[KeyedEdit]) -> Result<(), SpoutError> {
        if edits.is_empty() {
            return Ok(());
        }
        let outcomes = apply_edits(&self.client, &self.settings.queues_index, edits)
            .await
            .map_err(|e| e.for_spout("queue updates failed"))?;
        match outcomes.into_iter().find(|o| !o.is_done()) {
            Some(EditOutcome::Failed { kind, message }) => Err(SpoutError::of_kind(kind, message)),
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl Spout for QueueSpout {
    /// A write shows after a refresh (with a margin for replicas); whether another process still
    /// holds work is asked of the queues index ([`frontier_idle`](Spout::frontier_idle)).
    fn visibility_delay(&self) -> std::time::Duration {
        self.settings.visibility()
    }

    /// Its reads leave out the URLs in the topology.
    fn reads_past_busy(&self) -> bool {
        true
    }

    /// This process's own writes for the queues it holds show in its answers at once: the URLs
    /// they create are handed out from the hold, not read back from the index.
    fn write_visibility(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// A URL that failed stays due: the queue's release must keep it due.
    async fn fail(&mut self, url: &CrawlUrl) {
        let url = url.url.as_str();
        for hold in self.holds.values_mut() {
            if hold.failed(url, Utc::now()) {
                break;
            }
        }
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        self.start_upkeep();
        let visibility = self.settings.visibility();
        for hold in self.holds.values_mut() {
            hold.settle(busy, visibility, Instant::now(), Utc::now());
        }
        self.mark_closing();
        let started = Instant::now();
        self.drop_and_claim().await?;
        self.times
            .record(Stage::ClaimRound, started, self.holds.len());
        let mut rounds = 1;
        let mut left = self.read(busy).await?;
        let mut batch = self.timed_hand_out(busy);
        while batch.is_empty() && left > 0 && rounds < READ_ROUNDS_WHEN_EMPTY {
            rounds += 1;
            left = self.read(busy).await?;
            batch = self.timed_hand_out(busy);
        }
        self.release_drained().await?;
        metrics::counter!("squall_queue_urls_total").increment(batch.len() as u64);
        Ok(batch)
    }

    /// Idle when this process holds nothing and the queues index shows no due queue and no lease.
    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        if !self.holds.is_empty() {
            return Ok(false);
        }
        let now = format_date(Utc::now());
        let body = json!({ "query": { "bool": { "minimum_should_match": 1, "should": [
            { "range": { NEXT_DUE: { "lte": now } } },
            { "range": { LEASE_UNTIL: { "gt": now } } }
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
        let edits = self.drops(self.held_keys(), true);
        if let Err(error) = self.edit_queues(&edits).await {
            debug!(%error, "could not give the queues back; their leases run out instead");
        }
        self.upkeep = None;
        retire(&self.client, &self.settings).await;
    }
}
