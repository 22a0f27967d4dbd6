//! Reading held queues' URLs with light queries whose cost follows the URLs they return.
//!
//! One search per round covers every queue still short of URLs: a filter on their keys (each after
//! its cursor: the last URL this lease took from it) and on `nextFetchDate <= now`, sorted by date
//! then URL, one page as large as their shares together. The urls index is sorted on disk the same
//! way, so the search stops once it has its page; cursors leave out what was handed out or just
//! done without a long list of ids (which cost more than the search itself). Each
//! queue keeps at most its share of the page. If the page came back full, the queues still short
//! may have more due URLs after its last hit: the next round asks only for them, from there
//! (`search_after`). A queue with a long backlog fills its share in the first round and is not asked
//! again, so it cannot crowd the others out. Usually one round answers for all.
//!
//! Measured against one term query per queue batched in an `_msearch` (the first design): with 100
//! queues on an unrouted 8-shard urls index, the `_msearch` costs 100 × 8 shard searches, one round
//! costs 8, and took a sixth of the time at 200 k URLs (see BENCHMARKS.md and the issue-12 note).
//!
//! A drained queue's next date comes from one `min` aggregation over the drained queues only.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use squall::frontier::SpoutError;
use tracing::warn;

use crate::client::{EsClient, SearchHit};
use crate::status_index::schema::{KeyField, StoredDocument, format_date, read_document};

/// Rounds at most per read; queues still short after them are read again next time.
const MAX_ROUNDS: usize = 4;

/// Where a queue's reads resume: the due date (epoch milliseconds) of the last URL taken from it
/// under the current lease, and the ids of the URLs taken at exactly that date. Everything sorted
/// before it was handed out already, or is a URL just done whose new date the index does not show
/// yet: either way not to be read again. A URL done since comes back with its new date, which sorts
/// after the cursor. (A range on the URL itself would expand over every URL in the index.)
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cursor {
    /// The date of the last URL taken.
    pub date: i64,
    /// The ids of the URLs taken at that date.
    pub taken: Vec<String>,
}

impl Cursor {
    /// Moves the cursor past a URL taken.
    pub fn take(&mut self, url: &ReadUrl) {
        if url.date != self.date {
            self.date = url.date;
            self.taken.clear();
        }
        self.taken.push(url.id.clone());
    }
}

/// What to read of one queue.
#[derive(Debug, Clone)]
pub(crate) struct ReadRequest {
    /// The queue's key.
    pub key: String,
    /// URLs to read at most.
    pub size: usize,
    /// Where to resume, if this lease read the queue before.
    pub after: Option<Cursor>,
}

impl ReadRequest {
    /// The filter for this queue's URLs after its cursor.
    fn filter(&self, field: &str) -> Value {
        let key = json!({ "term": { field: self.key } });
        let Some(after) = &self.after else {
            return key;
        };
        json!({ "bool": {
            "filter": [
                key,
                { "range": { "nextFetchDate": { "gte": after.date, "format": "epoch_millis" } } }
            ],
            "must_not": [ { "ids": { "values": after.taken } } ]
        } })
    }
}

/// A due URL read, with what moves its queue's cursor once it is taken.
#[derive(Debug, Clone)]
pub(crate) struct ReadUrl {
    /// The document.
    pub doc: StoredDocument,
    /// Its id.
    pub id: String,
    /// Its due date, in epoch milliseconds.
    pub date: i64,
}

/// One queue's answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueueRead {
    /// Its URLs due now (after its cursor), earliest first.
    pub due: Vec<ReadUrl>,
    /// Whether it may have more due URLs than read (it got its whole share, or the rounds ran out).
    pub more: bool,
}

impl QueueRead {
    /// Whether the queue has nothing due beyond what was left out.
    pub fn drained(&self) -> bool {
        self.due.is_empty() && !self.more
    }
}

/// Reads the due URLs of the queues in `requests` (keyed by queue).
pub(crate) async fn read_queues(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<HashMap<String, QueueRead>, SpoutError> {
    let mut reads: HashMap<String, QueueRead> = HashMap::new();
    let mut short: BTreeMap<&str, usize> = BTreeMap::new();
    for request in requests {
        reads.insert(request.key.clone(), QueueRead::default());
        short.insert(request.key.as_str(), request.size.max(1));
    }
    let field = key_field.query_field();
    let mut after: Option<Value> = None;
    for _ in 0..MAX_ROUNDS {
        if short.is_empty() {
            return Ok(reads);
        }
        let page: usize = short.values().sum();
        let queues: Vec<Value> = requests
            .iter()
            .filter(|r| short.contains_key(r.key.as_str()))
            .map(|r| r.filter(&field))
            .collect();
        let round = Round {
            queues: &queues,
            page,
            after: after.as_ref(),
            now,
        };
        let hits = round.run(client, urls_index).await?;
        let full = hits.len() >= page;
        for hit in &hits {
            let Some((key, doc)) = hit_document(hit, key_field) else {
                continue;
            };
            let doc = ReadUrl {
                doc,
                id: hit.id.clone(),
                date: hit
                    .sort
                    .as_ref()
                    .and_then(|sort| sort.first())
                    .and_then(Value::as_i64)
                    .unwrap_or_default(),
            };
            let (Some(room), Some(read)) = (short.get_mut(key.as_str()), reads.get_mut(&key))
            else {
                continue;
            };
            if *room == 0 {
                read.more = true;
                continue;
            }
            read.due.push(doc);
            *room -= 1;
            if *room == 0 {
                read.more = true;
            }
        }
        if !full {
            return Ok(reads);
        }
        short.retain(|_, room| *room > 0);
        after = hits.last().map(|hit| json!(hit.sort));
    }
    for key in short.keys() {
        if let Some(read) = reads.get_mut(*key) {
            read.more = true;
        }
    }
    Ok(reads)
}

/// One round: the earliest due URLs of some queues (each after its cursor), after `after` in
/// date and URL order.
struct Round<'a> {
    queues: &'a [Value],
    page: usize,
    after: Option<&'a Value>,
    now: DateTime<Utc>,
}

impl Round<'_> {
    async fn run(&self, client: &EsClient, urls_index: &str) -> Result<Vec<SearchHit>, SpoutError> {
        let (page, now) = (self.page, self.now);
        let mut body = json!({
            "size": page,
            "track_total_hits": false,
            "query": { "bool": {
                "filter": [
                    { "range": { "nextFetchDate": { "lte": format_date(now) } } },
                    { "bool": { "should": self.queues, "minimum_should_match": 1 } }
                ]
            } },
            "sort": [ { "nextFetchDate": "asc" }, { "url": "asc" } ]
        });
        if let Some(after) = self.after {
            body["search_after"] = after.clone();
        }
        client
            .search(&format!("/{urls_index}/_search"), &[], body)
            .await
            .map(|answer| answer.hits.hits)
            .map_err(|e| e.for_spout("reading queues' URLs failed"))
    }
}

/// A hit's queue key and document; `None` (logged) for a document that cannot be read.
fn hit_document(hit: &SearchHit, key_field: &KeyField) -> Option<(String, StoredDocument)> {
    match read_document(hit.source_or_null(), key_field) {
        Ok(doc) => Some((doc.key.clone()?, doc)),
        Err(error) => {
            warn!(%error, id = %hit.id, "unreadable URL document left out");
            None
        }
    }
}

/// The earliest `nextFetchDate` of each of `keys`' URLs, leaving out the documents `skip`, in one
/// aggregation over those keys only. Keys with no dated URL are absent.
pub(crate) async fn next_dates(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    keys: &[String],
    skip: &[String],
) -> Result<BTreeMap<String, String>, SpoutError> {
    if keys.is_empty() {
        return Ok(BTreeMap::new());
    }
    let field = key_field.query_field();
    let body = json!({
        "size": 0,
        "track_total_hits": false,
        "query": { "bool": {
            "filter": [ { "terms": { field.clone(): keys } } ],
            "must_not": [ { "ids": { "values": skip } } ]
        } },
        "aggs": { "keys": {
            "terms": { "field": field, "size": keys.len() },
            "aggs": { "next": { "min": { "field": "nextFetchDate" } } }
        } }
    });
    let answer = client
        .search(&format!("/{urls_index}/_search"), &[], body)
        .await
        .map_err(|e| e.for_spout("reading queues' next dates failed"))?;
    let buckets = answer.aggregations["keys"]["buckets"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(buckets
        .iter()
        .filter_map(|bucket| {
            let key = bucket["key"].as_str()?.to_string();
            let millis = bucket["next"]["value"].as_f64()?;
            let date = DateTime::<Utc>::from_timestamp_millis(millis as i64)?;
            Some((key, format_date(date)))
        })
        .collect())
}
