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
//! A search covers at most [`MAX_QUEUES_PER_SEARCH`] queues and [`MAX_PAGE`] URLs: a queue
//! after its cursor counts twice against the engine's 1,024 nested clauses, so one search over more
//! than 512 such queues is refused (`too_many_nested_clauses`, measured on OpenSearch 2.19), as is
//! a page beyond the result window. A spout holding more queues reads them in groups, a few
//! searches at once.
//!
//! A drained queue's next date comes from one `min` aggregation over the drained queues only.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use squall::frontier::SpoutError;
use tracing::warn;

use crate::client::{EsClient, SearchHit};
use crate::status_index::schema::{KeyField, StoredDocument, format_date, read_document};

/// Rounds at most per read; queues still short after them are read again next time.
const MAX_ROUNDS: usize = 4;

/// Queues one search covers at most: well below the 512 the engine's clause limit allows.
pub(crate) const MAX_QUEUES_PER_SEARCH: usize = 200;

/// URLs one search asks for at most: half the engine's default result window (10,000).
pub(crate) const MAX_PAGE: usize = 5_000;

/// Searches of one read in flight at once.
const SEARCHES_AT_ONCE: usize = 4;

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

/// Reads the due URLs of the queues in `requests` (keyed by queue), in groups small enough for one
/// search each, a few groups at once.
pub(crate) async fn read_queues(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<HashMap<String, QueueRead>, SpoutError> {
    let groups = search_groups(requests);
    let reads: Vec<HashMap<String, QueueRead>> = futures::stream::iter(groups)
        .map(|group| read_group(client, urls_index, key_field, group, now))
        .buffer_unordered(SEARCHES_AT_ONCE)
        .try_collect()
        .await?;
    Ok(reads.into_iter().flatten().collect())
}

/// `requests` in order, split into groups of at most [`MAX_QUEUES_PER_SEARCH`] queues whose
/// sizes add up to at most [`MAX_PAGE`] (a queue asking for more is asked for [`MAX_PAGE`]).
pub(crate) fn search_groups(requests: &[ReadRequest]) -> Vec<Vec<ReadRequest>> {
    let mut groups: Vec<Vec<ReadRequest>> = Vec::new();
    let mut page = 0;
    for request in requests {
        let mut request = request.clone();
        request.size = request.size.clamp(1, MAX_PAGE);
        let fits = groups.last().is_some_and(|group| {
            group.len() < MAX_QUEUES_PER_SEARCH && page + request.size <= MAX_PAGE
        });
        if !fits {
            groups.push(Vec::new());
            page = 0;
        }
        page += request.size;
        if let Some(group) = groups.last_mut() {
            group.push(request);
        }
    }
    groups
}

/// Reads the due URLs of one group of queues, in rounds.
async fn read_group(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: Vec<ReadRequest>,
    now: DateTime<Utc>,
) -> Result<HashMap<String, QueueRead>, SpoutError> {
    let requests = &requests;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(i: usize, size: usize) -> ReadRequest {
        ReadRequest {
            key: format!("host-{i}.test"),
            size,
            after: None,
        }
    }

    #[test]
    fn groups_hold_at_most_so_many_queues_and_urls_and_keep_every_queue_once_in_order() {
        let requests: Vec<ReadRequest> = (0..2_000).map(|i| request(i, 1 + i % 40)).collect();
        let groups = search_groups(&requests);
        for group in &groups {
            assert!(!group.is_empty());
            assert!(group.len() <= MAX_QUEUES_PER_SEARCH, "{}", group.len());
            assert!(group.iter().map(|r| r.size).sum::<usize>() <= MAX_PAGE);
        }
        let keys: Vec<&str> = groups.iter().flatten().map(|r| r.key.as_str()).collect();
        let expected: Vec<&str> = requests.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, expected);
        assert_eq!(
            groups.len(),
            10,
            "2,000 queues of at most 40 URLs: ten groups of 200"
        );
    }

    #[test]
    fn a_queue_asking_for_more_than_a_page_gets_a_page_of_its_own() {
        let groups = search_groups(&[request(0, 3), request(1, 50_000), request(2, 0)]);
        let sizes: Vec<Vec<usize>> = groups
            .iter()
            .map(|g| g.iter().map(|r| r.size).collect())
            .collect();
        assert_eq!(sizes, vec![vec![3], vec![MAX_PAGE], vec![1]]);
    }
}
