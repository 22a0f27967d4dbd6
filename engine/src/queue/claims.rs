//! Claiming queues: list due queues nobody holds, those that waited longest first, and take up to a
//! given number with conditional updates, so that of several processes racing for one queue exactly
//! one wins.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use squall::frontier::SpoutError;

use super::batched::{ConditionalUpdate, conditional_updates};
use super::timings::{Stage, StageTimes};
use crate::client::{EsClient, SearchHit};
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
}

/// A due queue listed, to be claimed.
struct Candidate {
    key: String,
    seq_no: i64,
    primary_term: i64,
    hit: SearchHit,
}

/// How to claim.
pub(crate) struct ClaimRequest<'a> {
    /// The process claiming.
    pub owner: &'a str,
    /// The time the listing compares with: every queue claimed has `nextDue` no later than it.
    pub now: DateTime<Utc>,
    /// Until when.
    pub lease_until: DateTime<Utc>,
    /// The claim's time less the urls index's visibility delay: a queue last written before it has
    /// every write visible to the reads to come, so the dates recorded in `heldDue` are dropped.
    pub seen_before: &'a str,
    /// Queues to claim at most.
    pub room: usize,
    /// Queues the listing may show out of date: those this process claimed or gave back within the
    /// visibility delay (a search shows the queues index as of its last refresh). They are listed
    /// past and skipped, so that a fast-turning process still finds `room` queues it can take.
    pub stale: usize,
    /// A queue given back (or whose lease ran out) after this is not claimed yet: the urls index
    /// may not show the last holder's writes, and a read would hand out URLs already done.
    pub cooled_before: &'a str,
}

/// Lists due queues that nobody holds (nor held within the visibility delay) and that are not
/// blocked — queues never held first, then
/// those given back longest ago (`leaseUntil`), then by `nextDue` — and claims up to `room` of them,
/// skipping those for which `skip` is true (held, or given back within the visibility delay).
pub(crate) async fn claim_queues(
    client: &EsClient,
    queues_index: &str,
    request: ClaimRequest<'_>,
    times: &StageTimes,
    skip: impl Fn(&str) -> bool,
) -> Result<Vec<Claimed>, SpoutError> {
    let room = request.room;
    if room == 0 {
        return Ok(Vec::new());
    }
    let now = format_date(request.now);
    let body = json!({
        "size": room * 2 + request.stale,
        "seq_no_primary_term": true,
        "track_total_hits": false,
        "query": { "bool": {
            "filter": [ { "range": { "nextDue": { "lte": now } } } ],
            "must_not": [
                { "range": { "leaseUntil": { "gt": request.cooled_before } } },
                { "range": { "blockedUntil": { "gt": now } } }
            ]
        } },
        "sort": [
            { "leaseUntil": { "order": "asc", "missing": "_first" } },
            { "nextDue": "asc" },
            { "key": "asc" }
        ]
    });
    let listing = std::time::Instant::now();
    let hits = client
        .search(&format!("/{queues_index}/_search"), &[], body)
        .await
        .map_err(|e| e.for_spout("listing due queues failed"))?
        .hits
        .hits;
    times.record(Stage::Listing, listing, hits.len());
    let mut candidates: Vec<Candidate> = Vec::new();
    for hit in hits {
        if candidates.len() >= room {
            break;
        }
        let Some(key) = hit.field("key").as_str().map(str::to_string) else {
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
    let lease_until = format_date(request.lease_until);
    let updates: Vec<ConditionalUpdate> = candidates
        .iter()
        .map(|c| {
            let mut doc = json!({ "leaseOwner": request.owner, "leaseUntil": lease_until });
            let written = c.hit.field("lastUpdated").as_str();
            if written.is_none_or(|written| written < request.seen_before) {
                doc["heldDue"] = Value::Null;
            }
            ConditionalUpdate {
                key: c.key.clone(),
                seq_no: c.seq_no,
                primary_term: c.primary_term,
                doc,
            }
        })
        .collect();
    let claiming = std::time::Instant::now();
    let outcomes = conditional_updates(client, queues_index, &updates).await?;
    times.record(Stage::Claiming, claiming, outcomes.iter().flatten().count());
    Ok(candidates
        .into_iter()
        .zip(outcomes)
        .filter(|(_, outcome)| outcome.is_some())
        .map(|(candidate, _)| Claimed {
            crawl_delay: candidate.hit.field("crawlDelaySeconds").as_f64(),
            last_written: candidate
                .hit
                .field("lastUpdated")
                .as_str()
                .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
                .map(|d| d.with_timezone(&Utc)),
            key: candidate.key,
        })
        .collect())
}

/// The queues this process claimed or gave back lately, kept for the visibility delay: a listing
/// may show them as they were before (see [`ClaimRequest::stale`]).
#[derive(Debug, Default)]
pub(crate) struct RecentQueues {
    order: std::collections::VecDeque<(std::time::Instant, String)>,
    keys: std::collections::HashMap<String, usize>,
}

impl RecentQueues {
    /// Notes that `key` was claimed or given back now.
    pub fn touch(&mut self, key: &str) {
        self.order
            .push_back((std::time::Instant::now(), key.to_string()));
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
