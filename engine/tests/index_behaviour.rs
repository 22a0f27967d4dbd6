//! The status index in the real node: instances splitting the shards, per-item bulk failures, and
//! documents written by StormCrawler.

use crate::support;
use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use serde_json::json;
use squall::frontier::{BusyUrls, Spout};
use squall::frontier::{StatusStore, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::Method;
use squall_engine::client::RequestBody;
use squall_engine::status_index::schema::{KeyField, document_id};
use squall_engine::status_index::spouts::{AggregationSpout, StatusSpoutConfig};
use squall_engine::{EsStatusStore, WriterConfig};
use support::Kind;

fn discovered(url: &str, key: &str) -> StatusWrite {
    StatusWrite {
        url: CrawlUrl::seed(url::Url::parse(url).expect("url")),
        key: key.to_string(),
        status: Status::Discovered,
        next_fetch: Some(Utc::now() - TimeDelta::seconds(1)),
        queue: Default::default(),
    }
}

async fn drain(spout: &mut dyn Spout) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for _ in 0..30 {
        let batch = spout.next_batch(&BusyUrls::none()).await.expect("query");
        let before = seen.len();
        seen.extend(batch.into_iter().map(|d| d.url.url.to_string()));
        if seen.len() == before {
            break;
        }
    }
    seen
}

#[tokio::test]
async fn two_instances_splitting_the_shards_never_emit_the_same_url() {
    let client = support::client().await;
    let index = support::status_index(&client, "split", 4).await;
    let store = support::store(&client, &index);
    let writes: Vec<StatusWrite> = (0..40)
        .flat_map(|h| (0..3).map(move |p| (h, p)))
        .map(|(h, p)| discovered(&format!("http://h{h}.test/{p}"), &format!("h{h}.test")))
        .collect();
    let all: BTreeSet<String> = writes.iter().map(|w| w.url.url.to_string()).collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");

    for kind in [Kind::Aggregation, Kind::Collapsing, Kind::Hybrid] {
        let mut seen = Vec::new();
        for instance in 0..2 {
            let settings = StatusSpoutConfig {
                shard_split: (instance, 2),
                max_buckets: 100,
                max_urls_per_bucket: 10,
                ..support::spout_settings(&index)
            };
            let mut spout = support::spout(kind, &client, settings);
            seen.push(drain(spout.as_mut()).await);
        }
        assert!(
            !seen[0].is_empty() && !seen[1].is_empty(),
            "{kind:?}: one instance got nothing"
        );
        let both: Vec<&String> = seen[0].intersection(&seen[1]).collect();
        assert!(both.is_empty(), "{kind:?}: both instances emitted {both:?}");
        let union: BTreeSet<String> = seen[0].union(&seen[1]).cloned().collect();
        assert_eq!(union, all, "{kind:?}: together they cover the index");
    }
    support::delete_index(&client, &index).await;
}

#[tokio::test]
async fn a_rejected_bulk_item_fails_only_its_url_with_the_engines_reason() {
    let client = support::client().await;
    let index = support::status_index(&client, "reject", 1).await;
    // A StormCrawler index may map a metadata field strictly; a value that does not fit is refused.
    client
        .request(
            Method::Put,
            &format!("/{index}/_mapping"),
            &[],
            Some(RequestBody::Json(json!({
                "properties": { "metadata": { "properties": { "size": { "type": "long" } } } }
            }))),
        )
        .await
        .expect("mapping");
    let store = support::store(&client, &index);
    let good = discovered("http://a.test/good", "a.test");
    let mut bad = discovered("http://a.test/bad", "a.test");
    bad.url.metadata.set("size", "not a number");
    let outcomes = store.store(vec![good, bad]).await;
    assert_eq!(outcomes[0], Ok(()));
    let reason = outcomes[1]
        .clone()
        .expect_err("the bad item is rejected")
        .message()
        .to_string();
    assert!(reason.contains("http://a.test/bad"), "{reason}");
    // OpenSearch says mapper_parsing_exception, Elasticsearch 8 document_parsing_exception.
    assert!(
        [
            "mapper_parsing_exception",
            "document_parsing_exception",
            "number_format"
        ]
        .iter()
        .any(|kind| reason.contains(kind)),
        "{reason}"
    );
    support::delete_index(&client, &index).await;
}

#[tokio::test]
async fn a_stormcrawler_index_is_read_crawled_and_kept_readable() {
    let client = support::client().await;
    let index = support::unique_index("stormcrawler");
    // StormCrawler's own mapping (archetype `ES_IndexInit.sh` / OpenSearch `status.mapping`).
    support::stormcrawler_index(&client, &index).await;
    // Documents as StormCrawler writes them, the key in metadata.hostname (news-crawl's setup).
    let docs = [
        (
            "http://sc.test/due",
            json!({ "url": "http://sc.test/due", "status": "DISCOVERED",
            "nextFetchDate": "2024-01-01T00:00:00.000Z",
            "metadata": { "hostname": ["sc.test"], "url%2Epath": ["http://sc.test/"], "depth": ["1"] } }),
        ),
        (
            "http://sc.test/error",
            json!({ "url": "http://sc.test/error", "status": "FETCH_ERROR",
            "nextFetchDate": "2024-01-02T00:00:00.000Z",
            "metadata": { "hostname": ["sc.test"], "fetch%2Eerror%2Ecount": ["2"] } }),
        ),
        (
            "http://sc.test/never",
            json!({ "url": "http://sc.test/never", "status": "ERROR",
            "metadata": { "hostname": ["sc.test"], "error%2Ecause": ["robots.txt"] } }),
        ),
        (
            "http://other.test/later",
            json!({ "url": "http://other.test/later", "status": "FETCHED",
            "nextFetchDate": "2999-01-01T00:00:00.000Z", "metadata": { "hostname": ["other.test"] } }),
        ),
    ];
    let mut lines = Vec::new();
    for (url, doc) in &docs {
        lines.push(json!({ "index": { "_id": document_id(url), "routing": doc["metadata"]["hostname"][0] } }));
        lines.push(doc.clone());
    }
    support::bulk(&client, &index, lines).await;

    let key_field = KeyField::parse("metadata.hostname");
    let mut spout = AggregationSpout::new(
        client.clone(),
        StatusSpoutConfig {
            key_field: key_field.clone(),
            ..support::spout_settings(&index)
        },
    );
    let batch = spout.next_batch(&BusyUrls::none()).await.expect("query");
    let mut due: Vec<(String, String)> = batch
        .iter()
        .map(|d| (d.url.url.to_string(), d.key.clone()))
        .collect();
    due.sort();
    assert_eq!(
        due,
        [
            ("http://sc.test/due".to_string(), "sc.test".to_string()),
            ("http://sc.test/error".to_string(), "sc.test".to_string())
        ],
        "due StormCrawler documents are read; `never` (no nextFetchDate) and future ones are not"
    );
    let error = batch
        .iter()
        .find(|d| d.url.url.as_str() == "http://sc.test/error")
        .expect("error doc");
    assert_eq!(
        error.url.metadata.first("fetch.error.count"),
        Some("2"),
        "%2E unescaped"
    );
    assert!(
        error.url.metadata.first("hostname").is_none(),
        "the key is not metadata"
    );

    // Updated by squall, the document keeps StormCrawler's shape and its id.
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.clone(),
            key_field,
            routing: true,
        },
    );
    let mut fetched = batch[0].url.clone();
    fetched.metadata.set("fetch.statusCode", "200");
    let outcome = store
        .store(vec![StatusWrite {
            key: batch[0].key.clone(),
            url: fetched.clone(),
            status: Status::Fetched,
            next_fetch: Some(Utc::now() + TimeDelta::days(1)),
            queue: Default::default(),
        }])
        .await;
    assert_eq!(outcome, [Ok(())]);
    store.flush().await.expect("refresh");
    let id = document_id(fetched.url.as_str());
    let doc = client
        .request(
            Method::Get,
            &format!("/{index}/_doc/{id}"),
            &[("routing", "sc.test")],
            None,
        )
        .await
        .expect("get updated document");
    let source = &doc["_source"];
    assert_eq!(source["status"], json!("FETCHED"));
    assert_eq!(source["metadata"]["hostname"], json!(["sc.test"]));
    assert_eq!(source["metadata"]["fetch%2EstatusCode"], json!(["200"]));
    assert!(
        source["nextFetchDate"]
            .as_str()
            .is_some_and(|d| d.ends_with('Z'))
    );
    assert!(
        source.get("key").is_none(),
        "the key stays where StormCrawler keeps it"
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
    support::delete_index(&client, &index).await;
}

#[tokio::test]
async fn the_engine_is_detected_and_its_point_in_time_call_used() {
    let client = support::client().await;
    // The major version as the node's root endpoint gives it (2 or 3, 8 or 9: whichever runs).
    let root = client
        .request(Method::Get, "/", &[], None)
        .await
        .expect("the root endpoint");
    let major: u32 = root["version"]["number"]
        .as_str()
        .and_then(|number| number.split('.').next()?.parse().ok())
        .expect("a version number");
    let expected = match support::engine_name() {
        "elasticsearch" => squall_engine::client::Engine::Elasticsearch(major),
        _ => squall_engine::client::Engine::OpenSearch(major),
    };
    assert_eq!(client.engine().await.expect("engine"), expected);
    let index = support::status_index(&client, "pit", 1).await;
    let store = support::store(&client, &index);
    let outcomes = store
        .store(vec![discovered("http://a.test/1", "a.test")])
        .await;
    assert_eq!(outcomes, [Ok(())]);
    store.flush().await.expect("refresh");
    let pit = client.open_point_in_time(&index, "1m").await.expect("open");
    let answer = client
        .request(
            Method::Post,
            "/_search",
            &[],
            Some(RequestBody::Json(
                json!({ "pit": { "id": pit, "keep_alive": "1m" }, "size": 10 }),
            )),
        )
        .await
        .expect("search through the point in time");
    assert_eq!(answer["hits"]["hits"].as_array().map(Vec::len), Some(1));
    client.close_point_in_time(&pit).await.expect("close");
    support::delete_index(&client, &index).await;
}

#[tokio::test]
async fn the_diversified_sampler_keeps_every_host_and_caps_urls_per_host() {
    let client = support::client().await;
    let index = support::status_index(&client, "sample", 1).await;
    let store = support::store(&client, &index);
    let writes: Vec<StatusWrite> = (0..5)
        .flat_map(|h| (0..6).map(move |p| (h, p)))
        .map(|(h, p)| discovered(&format!("http://s{h}.test/{p}"), &format!("s{h}.test")))
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    let mut spout = AggregationSpout::new(
        client.clone(),
        StatusSpoutConfig {
            sample: true,
            max_buckets: 10,
            max_urls_per_bucket: 2,
            ..support::spout_settings(&index)
        },
    );
    let batch = spout.next_batch(&BusyUrls::none()).await.expect("query");
    let mut per_host = std::collections::BTreeMap::new();
    for due in &batch {
        *per_host.entry(due.key.clone()).or_insert(0) += 1;
    }
    assert_eq!(per_host.len(), 5, "{per_host:?}");
    assert!(per_host.values().all(|n| *n <= 2), "{per_host:?}");
    support::delete_index(&client, &index).await;
}

/// The URLs of `batch`, in order.
fn urls_of(batch: &[squall::frontier::DueUrl]) -> Vec<String> {
    batch.iter().map(|d| d.url.url.to_string()).collect()
}

/// The URLs `http://one.test/NN` for `pages`.
fn one_host_urls(pages: std::ops::Range<i64>) -> Vec<String> {
    pages.map(|p| format!("http://one.test/{p:02}")).collect()
}

/// A new status index named after `name` holding one host's 15 due URLs, in date order.
async fn one_host_of_15_due_urls(client: &squall_engine::client::EsClient, name: &str) -> String {
    let index = support::status_index(client, name, 2).await;
    let store = support::store(client, &index);
    let writes: Vec<StatusWrite> = (0..15)
        .map(|p| {
            let mut write = discovered(&format!("http://one.test/{p:02}"), "one.test");
            write.next_fetch = Some(Utc::now() - TimeDelta::seconds(100 - p));
            write
        })
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    index
}

#[tokio::test]
async fn a_host_busy_in_the_topology_gets_its_next_due_urls() {
    let client = support::client().await;
    let index = one_host_of_15_due_urls(&client, "past-busy").await;
    // The first five are being fetched: a query must bring the next five (before, the aggregation
    // and collapsing spouts returned the same five, which the runner drops, until a refresh).
    let in_topology = one_host_urls(0..5);
    for kind in [Kind::Aggregation, Kind::Collapsing] {
        let mut spout = support::spout(kind, &client, support::spout_settings(&index));
        assert!(spout.reads_past_busy(), "{kind:?}");
        let busy = BusyUrls::in_topology_of(in_topology.clone());
        let batch = spout.next_batch(&busy).await.expect("query");
        assert_eq!(urls_of(&batch), one_host_urls(5..10), "{kind:?}");
    }
    support::delete_index(&client, &index).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hybrid_spout_refills_a_host_once_its_urls_are_all_being_fetched() {
    let client = support::client().await;
    let index = one_host_of_15_due_urls(&client, "hybrid-refill").await;
    let mut spout = support::spout(Kind::Hybrid, &client, support::spout_settings(&index));
    // So the runner asks again as soon as the host's last waiting URL starts (before, it waited
    // for the minimum delay between queries: a host refilled every 2 s with the archetype's files).
    assert!(spout.reads_past_busy());
    let first = urls_of(
        &spout
            .next_batch(&BusyUrls::none())
            .await
            .expect("aggregation"),
    );
    assert_eq!(first, one_host_urls(0..5));
    // All five started (in the topology, none waiting for the fetcher), their writes not made:
    // the host gets its next five now, as StormCrawler's spout refills a key whose buffer queue
    // emptied (before, it waited for all five to be written and acked).
    let busy = BusyUrls::in_topology_of(first);
    let next = urls_of(&spout.next_batch(&busy).await.expect("per-key query"));
    assert_eq!(next, one_host_urls(5..10));
    support::delete_index(&client, &index).await;
}

/// A status index where `pages` URLs of each of two hosts are due, all of the first host's
/// before the second's (`http://{host}.test/{p}`, keyed `{host}.test`).
async fn two_hosts_due_in_turn(
    client: &squall_engine::client::EsClient,
    name: &str,
    hosts: [&str; 2],
    pages: i64,
) -> String {
    let index = support::status_index(client, name, 2).await;
    let store = support::store(client, &index);
    let writes: Vec<StatusWrite> = hosts
        .iter()
        .enumerate()
        .flat_map(|(h, host)| {
            (0..pages).map(move |p| {
                let mut write =
                    discovered(&format!("http://{host}.test/{p}"), &format!("{host}.test"));
                write.next_fetch = Some(Utc::now() - TimeDelta::seconds(100 - 10 * h as i64 - p));
                write
            })
        })
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    index
}

/// Spout settings over `index` asking one host, two URLs, a query.
fn one_host_of_two_urls_a_query(index: &str) -> StatusSpoutConfig {
    StatusSpoutConfig {
        max_buckets: 1,
        max_urls_per_bucket: 2,
        ..support::spout_settings(index)
    }
}

#[tokio::test]
async fn the_hybrid_spout_asks_its_aggregation_when_the_keys_it_refills_have_nothing_more() {
    let client = support::client().await;
    // done.test's two URLs are due first, then next.test's; one host per aggregation.
    let index = two_hosts_due_in_turn(&client, "hybrid-fall-through", ["done", "next"], 2).await;
    let mut spout = support::spout(Kind::Hybrid, &client, one_host_of_two_urls_a_query(&index));
    let first = urls_of(
        &spout
            .next_batch(&BusyUrls::none())
            .await
            .expect("aggregation"),
    );
    assert_eq!(first, ["http://done.test/0", "http://done.test/1"]);
    // Both started: done.test is refilled, finds nothing more, and the same call asks the
    // aggregation, which brings next.test (before, the answer was empty and the runner waited).
    let busy = BusyUrls::in_topology_of(first);
    let next = urls_of(
        &spout
            .next_batch(&busy)
            .await
            .expect("refill, then aggregation"),
    );
    assert_eq!(next, ["http://next.test/0", "http://next.test/1"]);
    support::delete_index(&client, &index).await;
}

#[tokio::test]
async fn a_host_whose_waiting_urls_fill_its_share_leaves_its_place_to_another() {
    let client = support::client().await;
    // full.test's URLs are due first, room.test's after them; one host per query.
    let index = two_hosts_due_in_turn(&client, "full-host", ["full", "room"], 6).await;
    let settings = one_host_of_two_urls_a_query(&index);
    // (The collapsing spout pages through the hosts, which a shrinking list would skip.)
    for kind in [Kind::Aggregation, Kind::Hybrid] {
        let mut spout = support::spout(kind, &client, settings.clone());
        let first = urls_of(&spout.next_batch(&BusyUrls::none()).await.expect("query"));
        assert_eq!(
            first,
            ["http://full.test/0", "http://full.test/1"],
            "{kind:?}"
        );
        // Both wait for the fetcher: full.test can take no more, so the one place goes to
        // room.test (before, full.test's next URLs took it and were dropped: an empty answer).
        let busy = BusyUrls::waiting_of(first.iter().map(|u| (u.clone(), "full.test".to_string())));
        let next = urls_of(&spout.next_batch(&busy).await.expect("query"));
        assert_eq!(
            next,
            ["http://room.test/0", "http://room.test/1"],
            "{kind:?}"
        );
    }
    support::delete_index(&client, &index).await;
}
