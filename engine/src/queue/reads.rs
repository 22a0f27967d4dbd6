//! Reading held queues' URLs: one light query per queue, whose cost follows the URLs it returns,
//! never the number of queues held or of processes.
//!
//! A queue is read when it is claimed, and again only when what was read runs low while the last
//! read came back full (more URLs may be due), or when writes made just before the claim may not
//! have shown yet. Each read is a term query on the queue's key after its cursor (the last URL this
//! lease took from it), sorted by date, as large as the hold can use (about the lease over
//! the politeness delay: one read serves many fetches). It does not stop at "due now": the first
//! URL it returns that is not due yet gives the queue's next date, which the release writes as
//! `nextDue`, so no aggregation is needed. The urls index is sorted on disk by date (then URL), so
//! each segment stops once it has its page. URLs of one date come in no set order: the cursor
//! names those taken at its date, so a later read skips them whatever order they came in (a sort
//! on the URL as well cost about a third more of the engine's time on large queues at 10 M URLs).
//!
//! The reads of one round go out together in `_msearch` requests of [`READS_PER_SEARCH`] queries,
//! a few requests at once. A query that fails fails the whole read: a queue is never taken for
//! drained on an answer that is not whole.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use squall::frontier::SpoutError;
use tracing::warn;

use super::fields::NEXT_FETCH_DATE;
use crate::client::{EsClient, Method, RequestBody, SearchHit, SearchResponse};
use crate::status_index::schema::{KeyField, StoredDocument, read_document};
use crate::status_index::{DocumentRoutes, Routing};

/// Queries of one `_msearch` at most.
const READS_PER_SEARCH: usize = 100;

/// `_msearch` requests of one round in flight at once.
const SEARCHES_AT_ONCE: usize = 4;

/// Where a queue's reads resume: the due date (epoch milliseconds) of the last URL taken from it
/// under the current lease, and the ids of the URLs taken at exactly that date. Everything sorted
/// before it was taken already. (A range on the URL itself would expand over every URL in the
/// index.)
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
    /// Due URLs wanted at most.
    pub size: usize,
    /// Where to resume, if this lease read the queue before.
    pub after: Option<Cursor>,
}

impl ReadRequest {
    /// The query: this queue's URLs after its cursor, earliest first, one more than wanted
    /// (which, if not due, dates the queue's next URL). URLs never due again (no `nextFetchDate`)
    /// sort last, so the first of them ends the read as a URL not due yet would; the query leaves
    /// no filter to them (an `exists` filter cost 10 to 15 % of a read).
    fn body(&self, field: &str) -> Value {
        let mut filter = vec![json!({ "term": { field: self.key } })];
        let mut must_not = Vec::new();
        if let Some(after) = &self.after {
            filter.push(json!({ "range": { NEXT_FETCH_DATE: {
                "gte": after.date, "format": "epoch_millis" } } }));
            must_not.push(json!({ "ids": { "values": after.taken } }));
        }
        json!({
            "size": self.size.max(1) + 1,
            "track_total_hits": false,
            "query": { "bool": { "filter": filter, "must_not": must_not } },
            "sort": [ { NEXT_FETCH_DATE: { "order": "asc", "missing": "_last" } } ]
        })
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
    /// The date of its first URL after those that is not due yet; `None` with `more`, or when it
    /// has no other dated URL.
    pub next: Option<DateTime<Utc>>,
    /// The page held nothing but due URLs: more may be due after them.
    pub more: bool,
}

/// Reads the queues of `requests`, each with its own query; the answers by key.
pub(crate) async fn read_queues(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<HashMap<String, QueueRead>, SpoutError> {
    let field = key_field.query_field();
    let field = field.as_str();
    let chunks: Vec<Vec<ReadRequest>> = requests
        .chunks(READS_PER_SEARCH)
        .map(<[ReadRequest]>::to_vec)
        .collect();
    let reads: Vec<Vec<(String, QueueRead)>> =
        futures::stream::iter(chunks)
            .map(|chunk| async move {
                read_chunk(client, urls_index, key_field, field, &chunk, now).await
            })
            .buffer_unordered(SEARCHES_AT_ONCE)
            .try_collect()
            .await?;
    Ok(reads.into_iter().flatten().collect())
}

/// One `_msearch` of up to [`READS_PER_SEARCH`] queues.
async fn read_chunk(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    field: &str,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<Vec<(String, QueueRead)>, SpoutError> {
    let mut lines = Vec::with_capacity(requests.len() * 2);
    for request in requests {
        lines.push(json!({ "index": urls_index }));
        lines.push(request.body(field));
    }
    let failed = |message: String| {
        SpoutError::unavailable(format!("reading queues' URLs failed: {message}"))
    };
    let answer = client
        .request(
            Method::Post,
            "/_msearch",
            &[],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .map_err(|e| e.for_spout("reading queues' URLs failed"))?;
    let responses = answer["responses"].as_array().cloned().unwrap_or_default();
    if responses.len() != requests.len() {
        return Err(failed(format!(
            "{} answers to {} queries",
            responses.len(),
            requests.len()
        )));
    }
    let mut reads = Vec::with_capacity(requests.len());
    for (request, response) in requests.iter().zip(responses) {
        if !response["error"].is_null() {
            return Err(failed(format!("{}: {}", request.key, response["error"])));
        }
        let response =
            SearchResponse::parse(response, "/_msearch").map_err(|e| failed(e.to_string()))?;
        if response.is_partial() {
            return Err(failed(format!("{}: a partial answer", request.key)));
        }
        let read = queue_read(request, &response.hits.hits, key_field, now);
        reads.push((request.key.clone(), read));
    }
    Ok(reads)
}

/// A queue's answer from its hits: the due ones, then the date of the first that is not.
fn queue_read(
    request: &ReadRequest,
    hits: &[SearchHit],
    key_field: &KeyField,
    now: DateTime<Utc>,
) -> QueueRead {
    let now_millis = now.timestamp_millis();
    let mut read = QueueRead::default();
    for hit in hits {
        let date = hit
            .sort
            .as_ref()
            .and_then(|sort| sort.first())
            .and_then(Value::as_i64)
            .unwrap_or(i64::MAX);
        if date > now_millis {
            // A URL never due again sorts as the largest date, which names no date: `None`.
            read.next = DateTime::<Utc>::from_timestamp_millis(date);
            return read;
        }
        match read_document(hit.source_or_null(), key_field) {
            Ok(doc) => read.due.push(ReadUrl {
                doc,
                id: hit.id.clone(),
                date,
            }),
            Err(error) => warn!(%error, id = %hit.id, "unreadable URL document left out"),
        }
    }
    read.more = hits.len() > request.size.max(1);
    read
}

impl QueueRead {
    /// Records the creation date of each due URL read, which its writer's replacement carries
    /// over (the queue frontier's URL documents are written unrouted).
    pub(crate) fn record_dates(&self, routes: &DocumentRoutes) {
        for url in &self.due {
            let text = url.doc.url.url.as_str();
            routes.record_read(text, Routing::Unrouted, url.doc.created);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(id: &str, date: i64) -> SearchHit {
        serde_json::from_value(json!({
            "_id": id,
            "_source": { "url": format!("http://a.test/{id}"), "key": "a.test",
                         "status": "DISCOVERED", "nextFetchDate": "2024-01-01T00:00:00.000Z" },
            "sort": [date, format!("http://a.test/{id}")]
        }))
        .expect("a hit")
    }

    fn request(size: usize) -> ReadRequest {
        ReadRequest {
            key: "a.test".into(),
            size,
            after: None,
        }
    }

    #[test]
    fn the_first_url_not_due_dates_the_queue_and_ends_the_read() {
        let now = DateTime::<Utc>::from_timestamp_millis(1_000).expect("now");
        let read = queue_read(
            &request(5),
            &[
                hit("a", 10),
                hit("b", 1_000),
                hit("c", 5_000),
                hit("d", 6_000),
            ],
            &KeyField::default(),
            now,
        );
        let ids: Vec<&str> = read.due.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(read.next.map(|d| d.timestamp_millis()), Some(5_000));
        assert!(!read.more);
    }

    #[test]
    fn a_url_never_due_again_ends_the_read_without_dating_the_queue() {
        let now = DateTime::<Utc>::from_timestamp_millis(1_000).expect("now");
        let read = queue_read(
            &request(2),
            &[hit("a", 10), hit("never", i64::MAX), hit("x", 20)],
            &KeyField::default(),
            now,
        );
        let ids: Vec<&str> = read.due.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["a"]);
        assert_eq!(read.next, None);
        assert!(!read.more, "nothing dated after a URL sorted last");
    }

    #[test]
    fn a_page_of_due_urls_only_means_more_may_be_due() {
        let now = DateTime::<Utc>::from_timestamp_millis(1_000).expect("now");
        let full = queue_read(
            &request(2),
            &[hit("a", 1), hit("b", 2), hit("c", 3)],
            &KeyField::default(),
            now,
        );
        assert!(full.more);
        assert_eq!(full.next, None);
        let short = queue_read(&request(5), &[hit("a", 1)], &KeyField::default(), now);
        assert!(
            !short.more,
            "fewer hits than asked: the queue has nothing else dated"
        );
        assert_eq!(short.next, None);
    }

    #[test]
    fn a_query_asks_for_one_more_than_wanted_and_resumes_after_its_cursor() {
        let mut request = request(10);
        assert_eq!(request.body("key")["size"], json!(11));
        request.after = Some(Cursor {
            date: 7,
            taken: vec!["x".into()],
        });
        let body = request.body("key");
        assert_eq!(
            body["query"]["bool"]["filter"][1]["range"]["nextFetchDate"]["gte"],
            json!(7)
        );
        assert_eq!(
            body["query"]["bool"]["must_not"][0]["ids"]["values"],
            json!(["x"])
        );
    }
}
