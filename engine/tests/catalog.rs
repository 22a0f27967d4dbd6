//! The catalog of the index frontiers (listing, counting, deleting) against the real node: the
//! catalog conformance check for the queue frontier and for status indices, and `frontier::open`
//! giving each frontier its catalog.

use crate::support;
use std::time::Duration;

use chrono::Utc;
use squall::config::ConfigBuilder;
use squall::frontier::conformance::{FrontierPair, check_catalog};
use squall::frontier::{Catalog, StatusWrite, UrlQuery};
use squall::model::{CrawlUrl, Status};
use squall_engine::catalog::EsCatalog;
use squall_engine::client::indices::ensure_index;
use squall_engine::queue::schema::queues_index_body;
use squall_engine::queue::{QueueSpout, QueueSpoutConfig};
use squall_engine::status_index::schema::{KeyField, document_id};
use squall_engine::status_index::spouts::StatusSpoutConfig;
use squall_engine::{EsStatusStore, WriterConfig};
use support::Kind;

#[tokio::test]
async fn the_queue_frontier_is_a_conformant_catalog() {
    let client = support::client().await;
    let urls = support::status_index(&client, "catalog-urls", 2).await;
    let queues = support::unique_index("catalog-queues");
    ensure_index(&client, &queues, queues_index_body(1, 0, "1s"))
        .await
        .expect("queues index");
    let settings = QueueSpoutConfig {
        owner: "catalog".to_string(),
        lease_ttl: Duration::from_secs(5),
        refresh_interval: Duration::from_secs(1),
        ..QueueSpoutConfig::new(&urls, &queues)
    };
    let spout = QueueSpout::new(client.clone(), settings);
    let store = spout.status_store();
    let pair = FrontierPair::new(spout, store);
    let catalog = EsCatalog::queue_frontier(client.clone(), &urls, &queues, KeyField::default());
    let result = check_catalog(pair, &catalog).await;
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
    assert_eq!(result, Ok(()));
}

/// The check on a status index whose key is in `key_field`, read by a spout of `kind`.
async fn status_index_catalog(kind: Kind, key_field: KeyField, routing: bool) {
    let client = support::client().await;
    let index = support::status_index(&client, "catalog-status", 2).await;
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.clone(),
            key_field: key_field.clone(),
            routing,
        },
    );
    let settings = StatusSpoutConfig {
        key_field: key_field.clone(),
        ..support::spout_settings(&index)
    };
    let pair = FrontierPair {
        spout: support::spout(kind, &client, settings),
        store: Box::new(store),
    };
    let catalog = EsCatalog::status_index(client.clone(), &index, key_field);
    let result = check_catalog(pair, &catalog).await;
    support::delete_index(&client, &index).await;
    assert_eq!(result, Ok(()), "{kind:?}");
}

#[tokio::test]
async fn a_routed_status_index_is_a_conformant_catalog() {
    status_index_catalog(Kind::Aggregation, KeyField::default(), true).await;
}

#[tokio::test]
async fn a_status_index_keyed_in_metadata_is_a_conformant_catalog() {
    let key_field = KeyField::parse("metadata.host.name");
    status_index_catalog(Kind::Collapsing, key_field, false).await;
}

fn discovered(url: &str, key: &str) -> StatusWrite {
    StatusWrite {
        url: CrawlUrl::seed(url::Url::parse(url).expect("url")),
        key: key.to_string(),
        status: Status::Discovered,
        next_fetch: Some(Utc::now()),
        queue: Default::default(),
    }
}

/// Opens the frontier of `assignments`, writes two URLs of two queues through it, and checks that
/// its catalog sees and deletes them.
async fn opened_frontier_has_its_catalog(assignments: &[String]) {
    let mut builder = ConfigBuilder::new()
        .set("http.agent.name=test")
        .expect("key");
    for assignment in assignments {
        builder = builder.set(assignment).expect("key");
    }
    let config = builder.build().expect("config");
    let frontier = squall_engine::setup::open(&config).await.expect("frontier");
    let outcomes = frontier
        .store
        .store(vec![
            discovered("http://a.test/1", "a.test"),
            discovered("http://b.test/1", "b.test"),
        ])
        .await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    frontier.store.flush().await.expect("flush");
    let catalog = frontier
        .catalog
        .as_ref()
        .expect("the engine's frontiers have a catalog");
    assert_eq!(catalog.count(&UrlQuery::default()).await, Ok(2));
    let queues = catalog.queues(0, 10).await.expect("queues");
    assert_eq!(
        (queues.keys, queues.total),
        (vec!["a.test".into(), "b.test".into()], 2)
    );
    assert_eq!(catalog.delete_queue("a.test").await, Ok(1));
    assert_eq!(catalog.delete_all().await, Ok(1));
    assert_eq!(catalog.count(&UrlQuery::default()).await, Ok(0));
}

#[tokio::test]
async fn open_gives_each_frontier_its_catalog() {
    let dir = tempfile::tempdir().expect("temp dir");
    opened_frontier_has_its_catalog(&[format!("frontier.path={}", dir.path().display())]).await;
    let client = support::client().await;
    for spout in ["queue", "aggregation"] {
        let urls = support::unique_index("catalog-open");
        let queues = support::unique_index("catalog-open-queues");
        opened_frontier_has_its_catalog(&[
            "frontier.kind=opensearch".to_string(),
            format!("es.status.addresses={}", support::base_url()),
            format!("es.status.index.name={urls}"),
            format!("es.queues.index.name={queues}"),
            format!("es.status.spout={spout}"),
            "es.status.index.shards=1".to_string(),
            "es.status.index.replicas=0".to_string(),
        ])
        .await;
        support::delete_index(&client, &urls).await;
        support::delete_index(&client, &queues).await;
    }
}

#[tokio::test]
async fn pages_past_the_result_window_are_reached() {
    let client = support::client().await;
    let index = support::status_index(&client, "catalog-deep", 2).await;
    // 10,050 URLs of three queues: more than the 10,000 hits `from` and `size` may reach.
    let mut urls: Vec<(String, String)> = (0..10_050)
        .map(|i| {
            (
                format!("k{}.test", i % 3),
                format!("http://k{}.test/{i:05}", i % 3),
            )
        })
        .collect();
    let mut lines = Vec::new();
    for (key, url) in &urls {
        lines.push(serde_json::json!({ "index": { "_id": document_id(url) } }));
        lines.push(
            serde_json::json!({ "url": url, "key": key, "status": "DISCOVERED",
            "nextFetchDate": "2024-01-01T00:00:00.000Z", "metadata": {} }),
        );
    }
    let answer = support::bulk(&client, &index, lines).await;
    assert_eq!(answer["errors"], serde_json::json!(false));
    urls.sort();
    let catalog = EsCatalog::status_index(client.clone(), &index, KeyField::default());
    assert_eq!(catalog.count(&UrlQuery::default()).await, Ok(10_050));
    for (start, size) in [(9_990, 20), (10_000, 30), (10_040, 20), (0, 10_050)] {
        let page = catalog
            .list(&UrlQuery::default(), start, size)
            .await
            .expect("a deep page");
        let listed: Vec<(String, String)> = page
            .into_iter()
            .map(|s| (s.key, s.url.url.to_string()))
            .collect();
        let end = (start + size).min(10_050) as usize;
        assert_eq!(listed, urls[start as usize..end], "list({start}, {size})");
    }
    let queues = catalog.queues(1, 5).await.expect("queues");
    assert_eq!(
        (queues.keys, queues.total),
        (vec!["k1.test".into(), "k2.test".into()], 3)
    );
    assert_eq!(catalog.delete_queue("k1.test").await, Ok(3_350));
    assert_eq!(catalog.delete_all().await, Ok(6_700));
    support::delete_index(&client, &index).await;
}

/// A URL written by another process shows in the catalog's count once settled, however long the
/// index waits between refreshes (StormCrawler's injection topology, then its crawl, started at
/// once: the crawl counts the seeds before refusing an empty frontier).
#[tokio::test]
async fn settle_makes_a_write_not_yet_refreshed_count() {
    use squall_engine::client::indices::set_refresh_interval;
    use squall_engine::client::{Method, RequestBody};
    let client = support::client().await;
    let index = support::status_index(&client, "catalog-settle", 2).await;
    set_refresh_interval(&client, &index, "-1")
        .await
        .expect("refresh off");
    let document = serde_json::json!({
        "url": "http://settle.test/", "key": "settle.test", "status": "DISCOVERED",
        "nextFetchDate": Utc::now().to_rfc3339(), "metadata": {}
    });
    client
        .request(
            Method::Put,
            &format!("/{index}/_doc/{}", document_id("http://settle.test/")),
            &[],
            Some(RequestBody::Json(document)),
        )
        .await
        .expect("written without a refresh");
    let catalog = EsCatalog::status_index(client.clone(), &index, KeyField::default());
    let all = UrlQuery::default();
    let before = catalog.count(&all).await.expect("count");
    catalog.settle().await.expect("settle");
    let after = catalog.count(&all).await.expect("count");
    support::delete_index(&client, &index).await;
    assert_eq!((before, after), (0, 1), "counted before and after settling");
}
