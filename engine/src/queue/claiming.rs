//! Claiming queues: list due queues nobody holds, those that waited longest first, and take up to a
//! given number with conditional updates in one `_bulk` (one round trip whatever the number), so
//! that of several processes racing for one queue exactly one wins; and the queues this process
//! claimed or gave back lately ([`RecentQueues`]), which a listing may show as they were before.
//! (Edits that depend on what a queue holds are in `edit_apply`.)

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use squall::frontier::{LearnedPace, SpoutError};
use tracing::warn;

use super::fields::{
    BLOCKED_UNTIL, CRAWL_DELAY_SECONDS, HELD_DUE, KEY, LAST_UPDATED, LEASE_OWNER, LEASE_UNTIL,
    NEXT_DUE,
};
use super::pace::stored_pace;
use super::schema::queue_id;
use super::timings::{Stage, StageTimes};
use crate::client::{BulkItem, BulkOperation, BulkRequest, EsClient, SearchHit};
use crate::status_index::schema::format_date;

/// A queue just claimed.
#[derive(Debug, Clone)]
pub(crate) struct Claimed {
    /// Its key.
    pub key: String,
    /// The crawl delay recorded on it (learned from robots.txt by any process), in seconds.
    pub crawl_delay: Option<f64>,
    /// When a writer last wrote a due date for it, as of the claim.
    pub last_written: Option<DateTime<Utc>>,
    /// The pace its last holder learned, as of the claim.
    pub pace: Option<LearnedPace>,
}

/// How to claim.
pub(crate) struct ClaimRequest<'a> {
    /// The claim's name, written in `leaseOwner`: the process claiming and the claim.
    pub owner: &'a str,
    /// The time the listing compares with: every queue claimed has `nextDue` no later than it.
    pub now: DateTime<Utc>,
    /// Until when.
    pub lease_until: DateTime<Utc>,
    /// The claim's time less the urls index's visibility delay, for two rules of one cause (a
    /// write shows in reads only that long after it): a queue given back (or whose lease ran out)
    /// after it is not claimed yet, since its reads might not show the last holder's writes and
    /// would hand out URLs already done; and a queue last written before it has every write
    /// visible to the reads to come, so the dates recorded in `heldDue` are dropped.
    pub seen_before: &'a str,
    /// Queues to claim at most.
    pub room: usize,
    /// Queues the listing may show out of date: those this process claimed or gave back within the
    /// visibility delay (a search shows the queues index as of its last refresh). They are listed
    /// past and skipped, so that a fast-turning process still finds `room` queues it can take.
    pub stale: usize,
}

/// Lists due queues that nobody holds (nor held within the visibility delay) and that are not
/// blocked — queues never held first, then those given back longest ago (`leaseUntil`), then by
/// `nextDue` — and claims up to `room` of them, skipping those for which `skip` is true (held, or
/// given back within the visibility delay).
pub(crate) async fn claim_queues(
    client: &EsClient,
    queues_index: &str,
    request: ClaimRequest<'_>,
    times: &StageTimes,
    skip: impl Fn(&str) -> bool,
) -> Result<Vec<Claimed>, SpoutError> {
    if request.room == 0 {
        return Ok(Vec::new());
    }
    let hits = list_due(client, queues_index, &request, times).await?;
    let candidates = candidates(hits, request.room, skip);
    let updates: Vec<ConditionalUpdate> = candidates
        .iter()
        .map(|candidate| candidate.claim(&request))
        .collect();
    let claiming = Instant::now();
    let outcomes = conditional_updates(client, queues_index, &updates).await?;
    times.record(Stage::Claiming, claiming, outcomes.iter().flatten().count());
    Ok(candidates
        .into_iter()
        .zip(outcomes)
        .filter(|(_, outcome)| outcome.is_some())
        .map(|(candidate, _)| candidate.claimed(request.now))
        .collect())
}

/// The listing of due queues that may be claimed, in the order they are claimed: twice as many as
/// there is room for, and the stale ones on top.
fn listing_query(request: &ClaimRequest<'_>) -> Value {
    let now = format_date(request.now);
    json!({
        "size": request.room * 2 + request.stale,
        "seq_no_primary_term": true,
        "track_total_hits": false,
        "query": { "bool": {
            "filter": [ { "range": { NEXT_DUE: { "lte": now } } } ],
            "must_not": [
                { "range": { LEASE_UNTIL: { "gt": request.seen_before } } },
                { "range": { BLOCKED_UNTIL: { "gt": now } } }
            ]
        } },
        "sort": [
            { LEASE_UNTIL: { "order": "asc", "missing": "_first" } },
            { NEXT_DUE: "asc" },
            { KEY: "asc" }
        ]
    })
}

/// Lists the due queues ([`listing_query`]).
async fn list_due(
    client: &EsClient,
    queues_index: &str,
    request: &ClaimRequest<'_>,
    times: &StageTimes,
) -> Result<Vec<SearchHit>, SpoutError> {
    let listing = Instant::now();
    let hits = client
        .search(
            &format!("/{queues_index}/_search"),
            &[],
            listing_query(request),
        )
        .await
        .map_err(|e| e.for_spout("listing due queues failed"))?
        .hits
        .hits;
    times.record(Stage::Listing, listing, hits.len());
    Ok(hits)
}

/// A due queue listed, to be claimed.
struct Candidate {
    key: String,
    seq_no: i64,
    primary_term: i64,
    hit: SearchHit,
}

/// The first `room` queues listed that can be claimed: each once, not skipped, with a version.
fn candidates(hits: Vec<SearchHit>, room: usize, skip: impl Fn(&str) -> bool) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = Vec::new();
    for hit in hits {
        if candidates.len() >= room {
            break;
        }
        let Some(key) = hit.field(KEY).as_str().map(str::to_string) else {
            continue;
        };
        if skip(&key) || candidates.iter().any(|c| c.key == key) {
            continue;
        }
        let (Some(seq_no), Some(primary_term)) = (hit.seq_no, hit.primary_term) else {
            continue;
        };
        candidates.push(Candidate {
            key,
            seq_no,
            primary_term,
            hit,
        });
    }
    candidates
}

impl Candidate {
    /// The conditional update that claims it: the lease, and `heldDue` dropped when every write
    /// of the queue shows in the reads to come.
    fn claim(&self, request: &ClaimRequest<'_>) -> ConditionalUpdate {
        let mut doc = json!({
            LEASE_OWNER: request.owner,
            LEASE_UNTIL: format_date(request.lease_until)
        });
        let written = self.hit.field(LAST_UPDATED).as_str();
        if written.is_none_or(|written| written < request.seen_before) {
            doc[HELD_DUE] = Value::Null;
        }
        ConditionalUpdate {
            key: self.key.clone(),
            seq_no: self.seq_no,
            primary_term: self.primary_term,
            doc,
        }
    }

    /// The queue, claimed at `now`.
    fn claimed(self, now: DateTime<Utc>) -> Claimed {
        Claimed {
            crawl_delay: self.hit.field(CRAWL_DELAY_SECONDS).as_f64(),
            last_written: self
                .hit
                .field(LAST_UPDATED)
                .as_str()
                .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
                .map(|d| d.with_timezone(&Utc)),
            pace: stored_pace(self.hit.source_or_null(), now),
            key: self.key,
        }
    }
}

/// The queues this process claimed or gave back lately, kept for the visibility delay: a listing
/// may show them as they were before (see [`ClaimRequest::stale`]).
#[derive(Debug, Default)]
pub(crate) struct RecentQueues {
    order: std::collections::VecDeque<(Instant, String)>,
    keys: std::collections::HashMap<String, usize>,
}

impl RecentQueues {
    /// Notes that `key` was claimed or given back now.
    pub fn touch(&mut self, key: &str) {
        self.order.push_back((Instant::now(), key.to_string()));
        *self.keys.entry(key.to_string()).or_default() += 1;
    }

    /// Forgets what was touched longer ago than `span`.
    pub fn forget_older_than(&mut self, span: std::time::Duration) {
        while let Some((at, _)) = self.order.front() {
            if at.elapsed() < span {
                break;
            }
            let Some((_, key)) = self.order.pop_front() else {
                break;
            };
            if let Some(count) = self.keys.get_mut(&key) {
                *count -= 1;
                if *count == 0 {
                    self.keys.remove(&key);
                }
            }
        }
    }

    /// Whether `key` was touched within the span.
    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    /// How many queues were touched within the span.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
}

/// A partial update of a queue document that applies only if nobody changed it since `seq_no`.
#[derive(Debug, Clone)]
pub(crate) struct ConditionalUpdate {
    /// The queue's key.
    pub key: String,
    /// The document's version as last seen.
    pub seq_no: i64,
    /// The document's primary term as last seen.
    pub primary_term: i64,
    /// The fields to set.
    pub doc: Value,
}

/// Applies `updates` in one `_bulk`: per update, the new version, or `None` when someone changed the
/// document first (or it is gone).
pub(crate) async fn conditional_updates(
    client: &EsClient,
    queues_index: &str,
    updates: &[ConditionalUpdate],
) -> Result<Vec<Option<(i64, i64)>>, SpoutError> {
    let request = updates
        .iter()
        .map(|update| {
            BulkOperation::update(queue_id(&update.key), json!({ "doc": update.doc }))
                .if_version(update.seq_no, update.primary_term)
        })
        .collect();
    let items = bulk_items(client, queues_index, request).await?;
    Ok(updates
        .iter()
        .zip(items)
        .map(|(update, item)| {
            if item.is_success() {
                Some(item.version.unwrap_or((update.seq_no, update.primary_term)))
            } else {
                if !item.is_conflict() {
                    warn!(key = %update.key, error = ?item.error, status = item.status,
                        "queue update refused");
                }
                None
            }
        })
        .collect())
}

/// Sends queue updates in one `_bulk` and returns its items, one per update.
async fn bulk_items(
    client: &EsClient,
    queues_index: &str,
    request: BulkRequest,
) -> Result<Vec<BulkItem>, SpoutError> {
    if request.is_empty() {
        return Ok(Vec::new());
    }
    client
        .bulk(Some(queues_index), &request, None)
        .await
        .map(|answer| answer.items)
        .map_err(|e| e.for_spout("queue updates failed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(key: &str, seq_no: Option<i64>, last_updated: &str) -> SearchHit {
        serde_json::from_value(json!({
            "_id": key,
            "_seq_no": seq_no,
            "_primary_term": seq_no.map(|_| 1),
            "_source": { KEY: key, LAST_UPDATED: last_updated, CRAWL_DELAY_SECONDS: 2.5 }
        }))
        .expect("a hit")
    }

    fn request(room: usize) -> ClaimRequest<'static> {
        let now = DateTime::<Utc>::from_timestamp_millis(1_000_000).expect("now");
        ClaimRequest {
            owner: "me#1.1",
            now,
            lease_until: now,
            seen_before: "2024-01-01T00:00:10.000Z",
            room,
            stale: 3,
        }
    }

    #[test]
    fn candidates_are_the_first_listed_once_each_with_a_version_and_not_skipped() {
        let hits = vec![
            hit("a", Some(1), ""),
            hit("held", Some(2), ""),
            hit("a", Some(3), ""),
            hit("unversioned", None, ""),
            hit("b", Some(4), ""),
            hit("c", Some(5), ""),
        ];
        let keys: Vec<String> = candidates(hits, 2, |key| key == "held")
            .into_iter()
            .map(|c| c.key)
            .collect();
        assert_eq!(keys, ["a", "b"]);
    }

    #[test]
    fn a_claim_drops_held_due_only_when_every_write_shows_in_its_reads() {
        let request = request(1);
        let old = candidates(
            vec![hit("a", Some(1), "2024-01-01T00:00:09.000Z")],
            1,
            |_| false,
        );
        let update = old[0].claim(&request);
        assert_eq!(update.doc[LEASE_OWNER], "me#1.1");
        assert_eq!(update.doc[HELD_DUE], Value::Null);
        let recent = candidates(
            vec![hit("a", Some(1), "2024-01-01T00:00:10.000Z")],
            1,
            |_| false,
        );
        let update = recent[0].claim(&request);
        assert!(update.doc.get(HELD_DUE).is_none(), "written since: kept");
        assert_eq!((update.seq_no, update.primary_term), (1, 1));
    }

    #[test]
    fn the_listing_asks_for_twice_the_room_and_the_stale_ones_never_held_first() {
        let query = listing_query(&request(5));
        assert_eq!(query["size"], 13);
        assert_eq!(query["sort"][0]["leaseUntil"]["missing"], "_first");
        assert_eq!(
            query["query"]["bool"]["must_not"][0]["range"]["leaseUntil"]["gt"],
            "2024-01-01T00:00:10.000Z"
        );
    }
}
