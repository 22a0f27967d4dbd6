//! Proof, against the real OpenSearch node, that the engine does everything squall's spouts rely on.
//!
//! Each test builds its own index with a StormCrawler-style status mapping and asserts on the engine's
//! actual answers. Start the node first: `scripts/opensearch start`.

use crate::support;
use elasticsearch::http::Method;
use elasticsearch::http::headers::HeaderMap;
use elasticsearch::indices::{IndicesCreateParts, IndicesRefreshParts};
use elasticsearch::params::Refresh;
use elasticsearch::{
    BulkOperation, BulkParts, CountParts, Elasticsearch, GetParts, IndexParts, SearchParts,
    UpdateParts,
};
use serde_json::{Value, json};
use support::opensearch;

/// One status document in StormCrawler's shape.
fn status_doc(url: &str, key: &str, next_fetch_date: &str) -> Value {
    json!({
        "url": url,
        "status": "DISCOVERED",
        "key": key,
        "nextFetchDate": next_fetch_date,
        "metadata": { "url%2Epath": ["https://seed.test/"], "depth": ["1"] }
    })
}

/// The fixture crawl: four hosts with due URLs at known dates, one host whose only URL is not due.
const FIXTURE: &[(&str, &str, &str)] = &[
    ("https://a.test/1", "a.test", "2020-01-03T00:00:00.000Z"),
    ("https://a.test/2", "a.test", "2020-01-05T00:00:00.000Z"),
    ("https://a.test/3", "a.test", "2020-01-07T00:00:00.000Z"),
    ("https://b.test/1", "b.test", "2020-01-01T00:00:00.000Z"),
    ("https://b.test/2", "b.test", "2020-01-08T00:00:00.000Z"),
    ("https://c.test/1", "c.test", "2020-01-02T00:00:00.000Z"),
    ("https://e.test/1", "e.test", "2020-01-04T00:00:00.000Z"),
    (
        "https://later.test/1",
        "later.test",
        "2099-01-01T00:00:00.000Z",
    ),
];

/// Due now: everything but `later.test`.
const DUE: usize = 7;

/// Creates `index` with StormCrawler's status mapping as StormCrawler publishes it, with test-sized
/// settings: two shards so that shard-level behaviour is exercised, no replicas on a single node.
async fn create_status_index(client: &Elasticsearch, index: &str, refresh_interval: &str) {
    let response = client
        .indices()
        .create(IndicesCreateParts::Index(index))
        .body(support::stormcrawler::status_index(2, 0, refresh_interval))
        .send()
        .await
        .expect("create index request");
    let status = response.status_code();
    let body: Value = response.json().await.expect("create index answer");
    assert!(status.is_success(), "creating {index} failed: {body}");
    assert_eq!(body["acknowledged"], json!(true));
}

/// Creates the status index and loads [`FIXTURE`] with routing by key, visible to search on return.
async fn fixture_index(client: &Elasticsearch, prefix: &str) -> String {
    let index = opensearch::unique_index(prefix);
    create_status_index(client, &index, "1s").await;
    let operations: Vec<BulkOperation<Value>> = FIXTURE
        .iter()
        .map(|(url, key, date)| {
            BulkOperation::index(status_doc(url, key, date))
                .id(*url)
                .routing(*key)
                .into()
        })
        .collect();
    let body = bulk(client, &index, operations).await;
    assert_eq!(body["errors"], json!(false), "fixture load failed: {body}");
    index
}

async fn bulk(client: &Elasticsearch, index: &str, operations: Vec<BulkOperation<Value>>) -> Value {
    let response = client
        .bulk(BulkParts::Index(index))
        .body(operations)
        .refresh(Refresh::WaitFor)
        .send()
        .await
        .expect("bulk request");
    assert!(response.status_code().is_success());
    response.json().await.expect("bulk answer")
}

async fn search(client: &Elasticsearch, index: &str, body: Value) -> Value {
    let response = client
        .search(SearchParts::Index(&[index]))
        .body(body)
        .send()
        .await
        .expect("search request");
    let status = response.status_code();
    let answer: Value = response.json().await.expect("search answer");
    assert!(status.is_success(), "search on {index} failed: {answer}");
    answer
}

/// A fresh fixture index (see [`fixture_index`]) and the answer of a search with `body` on it.
async fn search_fixture(prefix: &str, body: Value) -> (Elasticsearch, String, Value) {
    let client = opensearch::client().await;
    let index = fixture_index(&client, prefix).await;
    let answer = search(&client, &index, body).await;
    (client, index, answer)
}

/// The document `id` of `index` as the get API returns it, routed by `routing` when given.
async fn get_doc(client: &Elasticsearch, index: &str, id: &str, routing: Option<&str>) -> Value {
    let mut get = client.get(GetParts::IndexId(index, id));
    if let Some(routing) = routing {
        get = get.routing(routing);
    }
    get.send()
        .await
        .expect("get")
        .json()
        .await
        .expect("get answer")
}

fn hit_urls(hits: &Value) -> Vec<String> {
    hits.as_array()
        .expect("hits array")
        .iter()
        .map(|hit| hit["_source"]["url"].as_str().expect("url").to_string())
        .collect()
}

#[tokio::test]
async fn bulk_reports_per_item_results_and_a_create_conflict_on_that_item_only() {
    let client = opensearch::client().await;
    let index = opensearch::unique_index("caps-bulk");
    create_status_index(&client, &index, "1s").await;

    let first = bulk(
        &client,
        &index,
        vec![
            BulkOperation::create(status_doc(
                "https://a.test/",
                "a.test",
                "2020-01-01T00:00:00Z",
            ))
            .id("a")
            .into(),
        ],
    )
    .await;
    assert_eq!(first["errors"], json!(false));

    // DISCOVERED is written create-only: the second create of "a" must conflict, and only it.
    let second = bulk(
        &client,
        &index,
        vec![
            BulkOperation::create(status_doc(
                "https://a.test/",
                "a.test",
                "2021-01-01T00:00:00Z",
            ))
            .id("a")
            .into(),
            BulkOperation::create(status_doc(
                "https://b.test/",
                "b.test",
                "2020-01-01T00:00:00Z",
            ))
            .id("b")
            .into(),
            BulkOperation::index(status_doc(
                "https://c.test/",
                "c.test",
                "2020-01-01T00:00:00Z",
            ))
            .id("c")
            .into(),
        ],
    )
    .await;
    assert_eq!(second["errors"], json!(true), "{second}");
    let items = second["items"].as_array().expect("items");
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["create"]["status"], json!(409));
    assert_eq!(
        items[0]["create"]["error"]["type"],
        json!("version_conflict_engine_exception")
    );
    assert_eq!(items[1]["create"]["status"], json!(201));
    assert_eq!(items[2]["index"]["status"], json!(201));

    // The conflicting create left the original document untouched.
    let doc = get_doc(&client, &index, "a", None).await;
    assert_eq!(
        doc["_source"]["nextFetchDate"],
        json!("2020-01-01T00:00:00Z")
    );
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn terms_aggregation_ordered_by_earliest_date_returns_top_hits_per_host() {
    let (client, index, answer) = search_fixture(
        "caps-agg",
        json!({
            "size": 0,
            "track_total_hits": false,
            "query": { "bool": { "filter": [
                { "range": { "nextFetchDate": { "lte": "now" } } }
            ] } },
            "aggs": { "partition": {
                "terms": { "field": "key", "size": 10, "order": { "top_hit": "asc" } },
                "aggs": {
                    "docs": { "top_hits": {
                        "size": 2,
                        "sort": [ { "nextFetchDate": "asc" }, { "url": "asc" } ]
                    } },
                    "top_hit": { "min": { "field": "nextFetchDate" } }
                }
            } }
        }),
    )
    .await;

    let buckets = answer["aggregations"]["partition"]["buckets"]
        .as_array()
        .expect("buckets");
    let keys: Vec<&str> = buckets
        .iter()
        .map(|b| b["key"].as_str().expect("key"))
        .collect();
    // Ordered by each host's earliest due date; the host with nothing due is absent.
    assert_eq!(keys, ["b.test", "c.test", "a.test", "e.test"]);
    let a_bucket = &buckets[2];
    assert_eq!(a_bucket["doc_count"], json!(3));
    assert_eq!(
        hit_urls(&a_bucket["docs"]["hits"]["hits"]),
        ["https://a.test/1", "https://a.test/2"]
    );
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn diversified_sampler_caps_documents_per_host() {
    let (client, index, answer) = search_fixture(
        "caps-sampler",
        json!({
            "size": 0,
            "query": { "range": { "nextFetchDate": { "lte": "now" } } },
            "aggs": { "sample": {
                "diversified_sampler": { "field": "key", "max_docs_per_value": 1, "shard_size": 100 },
                "aggs": { "partition": {
                    "terms": { "field": "key", "size": 10 },
                    "aggs": { "docs": { "top_hits": { "size": 5 } } }
                } }
            } }
        }),
    )
    .await;

    let sample = &answer["aggregations"]["sample"];
    let buckets = sample["partition"]["buckets"].as_array().expect("buckets");
    // Four hosts have due URLs; the sampler keeps at most one document for each of them per shard.
    assert_eq!(buckets.len(), 4, "{answer}");
    for bucket in buckets {
        assert_eq!(
            bucket["doc_count"],
            json!(1),
            "sampler let through {bucket}"
        );
    }
    assert_eq!(sample["doc_count"], json!(4));
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn collapse_on_host_with_inner_hits() {
    let (client, index, answer) = search_fixture(
        "caps-collapse",
        json!({
            "size": 10,
            "track_total_hits": false,
            "query": { "range": { "nextFetchDate": { "lte": "now" } } },
            "sort": [ { "nextFetchDate": "asc" } ],
            "collapse": {
                "field": "key",
                "inner_hits": {
                    "name": "urls_per_bucket",
                    "size": 2,
                    "sort": [ { "nextFetchDate": "asc" }, { "url": "asc" } ]
                }
            }
        }),
    )
    .await;

    let hits = answer["hits"]["hits"].as_array().expect("hits");
    let keys: Vec<&str> = hits
        .iter()
        .map(|h| h["fields"]["key"][0].as_str().expect("collapse key"))
        .collect();
    assert_eq!(keys, ["b.test", "c.test", "a.test", "e.test"]);
    let a_inner = &hits[2]["inner_hits"]["urls_per_bucket"]["hits"];
    assert_eq!(a_inner["total"]["value"], json!(3));
    assert_eq!(
        hit_urls(&a_inner["hits"]),
        ["https://a.test/1", "https://a.test/2"]
    );
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn search_after_pages_through_due_urls_without_overlap() {
    let client = opensearch::client().await;
    let index = fixture_index(&client, "caps-after").await;

    let mut seen = Vec::new();
    let mut after: Option<Value> = None;
    for _page in 0..10 {
        let mut body = json!({
            "size": 3,
            "query": { "range": { "nextFetchDate": { "lte": "now" } } },
            "sort": [ { "nextFetchDate": "asc" }, { "url": "asc" } ]
        });
        if let Some(sort_values) = &after {
            body["search_after"] = sort_values.clone();
        }
        let answer = search(&client, &index, body).await;
        let hits = answer["hits"]["hits"].as_array().expect("hits").clone();
        if hits.is_empty() {
            break;
        }
        after = hits.last().map(|h| h["sort"].clone());
        seen.extend(hit_urls(&Value::Array(hits)));
    }
    assert_eq!(
        seen,
        [
            "https://b.test/1",
            "https://c.test/1",
            "https://a.test/1",
            "https://e.test/1",
            "https://a.test/2",
            "https://a.test/3",
            "https://b.test/2",
        ]
    );
    assert_eq!(seen.len(), DUE);
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn point_in_time_keeps_a_stable_view_while_the_index_changes() {
    let client = opensearch::client().await;
    let index = fixture_index(&client, "caps-pit").await;

    // OpenSearch's endpoint: POST /<index>/_search/point_in_time?keep_alive=...
    let opened: Value = client
        .send(
            Method::Post,
            &format!("/{index}/_search/point_in_time"),
            HeaderMap::new(),
            Some(&[("keep_alive", "1m")]),
            None::<()>,
            None,
        )
        .await
        .expect("open point in time")
        .json()
        .await
        .expect("point in time answer");
    let pit_id = opened["pit_id"].as_str().expect("pit_id").to_string();

    // A document written after the PIT opened is visible to a plain search but not through the PIT.
    let response = client
        .index(IndexParts::IndexId(&index, "new"))
        .body(status_doc(
            "https://new.test/1",
            "new.test",
            "2020-01-01T00:00:00Z",
        ))
        .refresh(Refresh::True)
        .send()
        .await
        .expect("index after pit");
    assert!(response.status_code().is_success());

    let through_pit = client
        .search(SearchParts::None)
        .body(json!({
            "size": 100,
            "pit": { "id": pit_id, "keep_alive": "1m" },
            "sort": [ { "url": "asc" } ]
        }))
        .send()
        .await
        .expect("pit search");
    assert!(through_pit.status_code().is_success());
    let through_pit: Value = through_pit.json().await.expect("pit search answer");
    assert_eq!(hit_urls(&through_pit["hits"]["hits"]).len(), FIXTURE.len());
    let plain = search(&client, &index, json!({ "size": 100 })).await;
    assert_eq!(hit_urls(&plain["hits"]["hits"]).len(), FIXTURE.len() + 1);

    let closed: Value = client
        .send(
            Method::Delete,
            "/_search/point_in_time",
            HeaderMap::new(),
            None::<&()>,
            Some(elasticsearch::http::request::JsonBody::new(
                json!({ "pit_id": [pit_id] }),
            )),
            None,
        )
        .await
        .expect("close point in time")
        .json()
        .await
        .expect("close answer");
    assert_eq!(closed["pits"][0]["successful"], json!(true), "{closed}");
    opensearch::delete_index(&client, &index).await;
}

/// Sets the status of document `id` (routed by `a.test`) if it is still at `version` (its sequence
/// number and primary term).
async fn set_status_if(
    client: &Elasticsearch,
    index: &str,
    id: &str,
    version: (i64, i64),
    status: &str,
) -> elasticsearch::http::response::Response {
    client
        .update(UpdateParts::IndexId(index, id))
        .routing("a.test")
        .if_seq_no(version.0)
        .if_primary_term(version.1)
        .body(json!({ "doc": { "status": status } }))
        .send()
        .await
        .expect("conditional update")
}

#[tokio::test]
async fn conditional_update_detects_a_concurrent_change() {
    let client = opensearch::client().await;
    let index = fixture_index(&client, "caps-cas").await;
    let id = "https://a.test/1";

    let current = get_doc(&client, &index, id, Some("a.test")).await;
    let seq_no = current["_seq_no"].as_i64().expect("_seq_no");
    let primary_term = current["_primary_term"].as_i64().expect("_primary_term");

    // The first writer holding (seq_no, primary_term) wins...
    let first = set_status_if(&client, &index, id, (seq_no, primary_term), "FETCHED").await;
    assert_eq!(first.status_code().as_u16(), 200);

    // ...and a second writer holding the same, now stale, pair is refused.
    let second = set_status_if(&client, &index, id, (seq_no, primary_term), "ERROR").await;
    assert_eq!(second.status_code().as_u16(), 409);
    let refusal: Value = second.json().await.expect("refusal");
    assert_eq!(
        refusal["error"]["type"],
        json!("version_conflict_engine_exception")
    );

    let after = get_doc(&client, &index, id, Some("a.test")).await;
    assert_eq!(after["_source"]["status"], json!("FETCHED"));
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn scripted_upsert_creates_then_keeps_the_earliest_due_date() {
    let client = opensearch::client().await;
    let index = opensearch::unique_index("caps-upsert");
    create_status_index(&client, &index, "1s").await;

    // The queue-frontier invariant in miniature: a queue's nextDue is the minimum of what was written.
    let script = "if (ctx._source.nextDue == null || params.due.compareTo(ctx._source.nextDue) < 0) \
                  { ctx._source.nextDue = params.due } ctx._source.writes = (ctx._source.writes ?: 0) + 1";
    let mut results = Vec::new();
    for due in [
        "2020-01-05T00:00:00Z",
        "2020-01-02T00:00:00Z",
        "2020-01-09T00:00:00Z",
    ] {
        let response = client
            .update(UpdateParts::IndexId(&index, "queue-a.test"))
            .refresh(Refresh::True)
            .body(json!({
                "scripted_upsert": true,
                "script": { "source": script, "lang": "painless", "params": { "due": due } },
                "upsert": {}
            }))
            .send()
            .await
            .expect("scripted upsert");
        let status = response.status_code().as_u16();
        let body: Value = response.json().await.expect("upsert answer");
        results.push((status, body["result"].clone()));
    }
    assert_eq!(
        results,
        [
            (201, json!("created")),
            (200, json!("updated")),
            (200, json!("updated")),
        ]
    );
    let doc = get_doc(&client, &index, "queue-a.test", None).await;
    assert_eq!(doc["_source"]["nextDue"], json!("2020-01-02T00:00:00Z"));
    assert_eq!(doc["_source"]["writes"], json!(3));
    opensearch::delete_index(&client, &index).await;
}

#[tokio::test]
async fn refresh_makes_writes_searchable() {
    let client = opensearch::client().await;
    let index = opensearch::unique_index("caps-refresh");
    // Automatic refresh off: only an explicit refresh publishes writes to search.
    create_status_index(&client, &index, "-1").await;

    let response = client
        .index(IndexParts::IndexId(&index, "x"))
        .body(status_doc(
            "https://x.test/",
            "x.test",
            "2020-01-01T00:00:00Z",
        ))
        .send()
        .await
        .expect("index");
    assert!(response.status_code().is_success());

    let count = |client: Elasticsearch, index: String| async move {
        let answer: Value = client
            .count(CountParts::Index(&[&index]))
            .send()
            .await
            .expect("count")
            .json()
            .await
            .expect("count answer");
        answer["count"].as_u64().expect("count value")
    };
    assert_eq!(count(client.clone(), index.clone()).await, 0);

    let refreshed = client
        .indices()
        .refresh(IndicesRefreshParts::Index(&[&index]))
        .send()
        .await
        .expect("refresh");
    assert!(refreshed.status_code().is_success());
    assert_eq!(count(client.clone(), index.clone()).await, 1);
    opensearch::delete_index(&client, &index).await;
}
