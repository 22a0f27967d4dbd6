//! Topping up held queues in one query: the queues whose last read came back full (more may be
//! due) are read together, one search for up to [`QUEUES_PER_SEARCH`] of them rather than one
//! query each, since a query costs the engine a lookup in every segment of every shard whatever
//! it returns (at 10 M URLs, 46 queues read together cost about a third of what 46 reads do).
//!
//! The search asks for the due URLs of those queues after each one's cursor, earliest first, as
//! many as their reads would ask for together, plus one. What a queue gets is cut to its own read
//! size; a queue whose share was cut, or any queue when the page came back full, may have more due.
//! A queue the page shows with nothing more due after its URLs is not taken for drained: the
//! search does not look past "due now", so it does not date the queue's next URL; its next read is
//! a read of its own ([`super::reads`]), which does. So a queue is given back only on what a read
//! of its own said, as before. A queue given nothing by a page the others filled (their URLs came
//! earlier) is read on its own next, so that none waits behind larger queues' older URLs.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use squall::frontier::SpoutError;
use tracing::warn;

use super::reads::{QueueRead, ReadRequest, ReadUrl};
use crate::client::{EsClient, SearchHit};
use crate::status_index::schema::{KeyField, read_document};

/// Queues of one search at most (the page is also kept under the engine's result window).
const QUEUES_PER_SEARCH: usize = 100;

/// Hits of one search at most (the engine's default `index.max_result_window` is 10,000).
const MAX_PAGE: usize = 9_999;

/// Searches of one round in flight at once.
const SEARCHES_AT_ONCE: usize = 4;

/// Tops up the queues of `requests` (each with a cursor), several to a search; the answers by key.
pub(crate) async fn top_up_queues(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<HashMap<String, QueueRead>, SpoutError> {
    let per_search = requests
        .iter()
        .map(|r| r.size.max(1))
        .max()
        .map_or(1, |size| (MAX_PAGE / size).clamp(1, QUEUES_PER_SEARCH));
    let chunks: Vec<Vec<ReadRequest>> = requests
        .chunks(per_search)
        .map(<[ReadRequest]>::to_vec)
        .collect();
    let answers: Vec<Vec<(String, QueueRead)>> = futures::stream::iter(chunks)
        .map(|chunk| async move { top_up_chunk(client, urls_index, key_field, &chunk, now).await })
        .buffer_unordered(SEARCHES_AT_ONCE)
        .try_collect()
        .await?;
    Ok(answers.into_iter().flatten().collect())
}

/// One search over the queues of `requests`.
async fn top_up_chunk(
    client: &EsClient,
    urls_index: &str,
    key_field: &KeyField,
    requests: &[ReadRequest],
    now: DateTime<Utc>,
) -> Result<Vec<(String, QueueRead)>, SpoutError> {
    let wanted: usize = requests.iter().map(|r| r.size.max(1)).sum();
    let body = search_body(&key_field.query_field(), requests, wanted, now);
    let answer = client
        .search(&format!("/{urls_index}/_search"), &[], body)
        .await
        .map_err(|e| e.for_spout("topping up held queues failed"))?;
    if answer.is_partial() {
        return Err(SpoutError::unavailable(
            "topping up held queues failed: a partial answer",
        ));
    }
    Ok(share_out(requests, &answer.hits.hits, wanted, key_field))
}

/// The search: due URLs of the queues' keys, each queue's after its cursor (its earlier dates and
/// the URLs taken at the cursor's date left out), earliest first, `wanted` and one more.
fn search_body(field: &str, requests: &[ReadRequest], wanted: usize, now: DateTime<Utc>) -> Value {
    let keys: Vec<&str> = requests.iter().map(|r| r.key.as_str()).collect();
    let mut must_not = Vec::new();
    let mut taken: Vec<&str> = Vec::new();
    for request in requests {
        if let Some(after) = &request.after {
            must_not.push(json!({ "bool": { "filter": [
                { "term": { field: request.key } },
                { "range": { "nextFetchDate": { "lt": after.date, "format": "epoch_millis" } } }
            ] } }));
            taken.extend(after.taken.iter().map(String::as_str));
        }
    }
    if !taken.is_empty() {
        must_not.push(json!({ "ids": { "values": taken } }));
    }
    json!({
        "size": wanted + 1,
        "track_total_hits": false,
        "query": { "bool": {
            "filter": [
                { "terms": { field: keys } },
                { "range": { "nextFetchDate": {
                    "lte": now.timestamp_millis(), "format": "epoch_millis" } } }
            ],
            "must_not": must_not
        } },
        "sort": [ { "nextFetchDate": "asc" } ]
    })
}

/// Each queue's share of the page: its URLs in date order, cut to its read size. It may have more
/// due when its share was cut or the page came back full; otherwise its next read is its own.
fn share_out(
    requests: &[ReadRequest],
    hits: &[SearchHit],
    wanted: usize,
    key_field: &KeyField,
) -> Vec<(String, QueueRead)> {
    let page_full = hits.len() > wanted;
    let mut found: HashMap<&str, (Vec<ReadUrl>, usize)> = requests
        .iter()
        .map(|r| (r.key.as_str(), (Vec::new(), 0)))
        .collect();
    let sizes: HashMap<&str, usize> = requests
        .iter()
        .map(|r| (r.key.as_str(), r.size.max(1)))
        .collect();
    for hit in hits {
        let doc = match read_document(hit.source_or_null(), key_field) {
            Ok(doc) => doc,
            Err(error) => {
                warn!(%error, id = %hit.id, "unreadable URL document left out");
                continue;
            }
        };
        let Some((urls, seen)) = doc.key.as_deref().and_then(|key| found.get_mut(key)) else {
            continue;
        };
        *seen += 1;
        let size = doc.key.as_deref().and_then(|k| sizes.get(k)).copied();
        if size.is_some_and(|size| urls.len() < size) {
            let date = hit
                .sort
                .as_ref()
                .and_then(|sort| sort.first())
                .and_then(Value::as_i64)
                .unwrap_or(0);
            urls.push(ReadUrl {
                doc,
                id: hit.id.clone(),
                date,
            });
        }
    }
    requests
        .iter()
        .map(|request| {
            let (due, seen) = found.remove(request.key.as_str()).unwrap_or_default();
            let cut = seen > due.len();
            // Read whole, or given nothing by a page others filled: its next read is its own.
            let own_read_next = due.is_empty() || !(cut || page_full);
            let read = QueueRead {
                due,
                next: None,
                more: true,
                own_read_next,
            };
            (request.key.clone(), read)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::reads::Cursor;

    fn hit(key: &str, id: &str, date: i64) -> SearchHit {
        serde_json::from_value(json!({
            "_id": id,
            "_source": { "url": format!("http://{key}/{id}"), "key": key,
                         "status": "DISCOVERED", "nextFetchDate": "2024-01-01T00:00:00.000Z" },
            "sort": [date]
        }))
        .expect("a hit")
    }

    fn request(key: &str, size: usize) -> ReadRequest {
        ReadRequest {
            key: key.into(),
            size,
            after: Some(Cursor {
                date: 5,
                taken: vec![format!("{key}-taken")],
            }),
            together: true,
        }
    }

    #[test]
    fn each_queue_gets_its_share_and_only_a_queue_read_whole_goes_to_its_own_read() {
        let requests = [request("a.test", 2), request("b.test", 2)];
        let hits = [
            hit("a.test", "a1", 6),
            hit("a.test", "a2", 7),
            hit("a.test", "a3", 8),
            hit("b.test", "b1", 9),
        ];
        let reads: HashMap<String, QueueRead> =
            share_out(&requests, &hits, 4, &KeyField::default())
                .into_iter()
                .collect();
        let a = &reads["a.test"];
        assert_eq!(
            a.due.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(),
            ["a1", "a2"]
        );
        assert!(a.more && !a.own_read_next, "cut: more may be due");
        let b = &reads["b.test"];
        assert_eq!(b.due.len(), 1);
        assert!(
            b.more && b.own_read_next,
            "read whole: its own read dates it"
        );
        assert_eq!(b.next, None);
    }

    #[test]
    fn a_full_page_leaves_every_queue_with_more_to_read_together() {
        let requests = [request("a.test", 1), request("b.test", 1)];
        let hits = [
            hit("a.test", "a1", 6),
            hit("a.test", "a2", 7),
            hit("a.test", "a3", 8),
        ];
        let reads: HashMap<String, QueueRead> =
            share_out(&requests, &hits, 2, &KeyField::default())
                .into_iter()
                .collect();
        assert!(!reads["a.test"].own_read_next, "the page was full");
        assert!(
            reads["b.test"].own_read_next,
            "given nothing by a full page: read alone next"
        );
    }

    #[test]
    fn the_search_leaves_out_each_queue_before_its_cursor_and_what_it_took() {
        let body = search_body("key", &[request("a.test", 3)], 3, Utc::now());
        assert_eq!(body["size"], json!(4));
        assert_eq!(
            body["query"]["bool"]["filter"][0]["terms"]["key"],
            json!(["a.test"])
        );
        let must_not = &body["query"]["bool"]["must_not"];
        assert_eq!(
            must_not[0]["bool"]["filter"][1]["range"]["nextFetchDate"]["lt"],
            json!(5)
        );
        assert_eq!(must_not[1]["ids"]["values"], json!(["a.test-taken"]));
    }
}
