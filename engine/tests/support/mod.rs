//! Shared helpers for the integration tests of the Elasticsearch/OpenSearch frontier, run against a
//! real node (`scripts/opensearch start`; `OPENSEARCH_URL`, default http://127.0.0.1:9200).

#![allow(dead_code)]

pub mod crawl;
/// In-process crawls of a test site: shared with the root crate's integration tests.
#[path = "../../../tests/support/crawler.rs"]
pub mod crawler;
/// Where the test engine is, shared with the root crate's integration tests.
#[path = "../../../tests/support/engine_node.rs"]
pub mod engine_node;
#[path = "../../../tests/support/stormcrawler.rs"]
pub mod stormcrawler;

pub use engine_node::{base_url, engine_name, unique_index};

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use squall::config::CrawlConfig;
use squall::topology::CrawlerBuilder;
use squall_engine::client::Method;
use squall_engine::client::{
    ConnectionConfig, Engine, EsClient, EsError, RequestBody, UpdateMode, Updates,
};
use squall_engine::queue::schema::queue_id;
use squall_engine::status_index::index::{StatusIndexConfig, ensure_status_index};
use squall_engine::status_index::schema::{KeyField, document_id};
use squall_engine::status_index::spouts::{
    AggregationSpout, CollapsingSpout, HybridSpout, StatusSpoutConfig,
};
use squall_engine::{EsStatusStore, WriterConfig};

/// A client for the test engine; fails loudly, with instructions, when no engine answers.
pub async fn client() -> EsClient {
    let url = base_url();
    let mut settings = ConnectionConfig::new(&url).expect("OPENSEARCH_URL is an address");
    settings.max_retries = 1;
    let client = EsClient::new(settings.clone()).expect("client");
    let engine = client.engine().await;
    if let Ok(engine) = &engine {
        let expected = engine_name();
        let is_elasticsearch = matches!(engine, Engine::Elasticsearch(_));
        assert_eq!(
            is_elasticsearch,
            expected == "elasticsearch",
            "SQUALL_ENGINE={expected}, but {url} is {engine:?}"
        );
    }
    if let Err(error) = engine {
        engine_node::no_node(&url, &error.to_string());
    }
    settings.max_retries = 6;
    EsClient::new(settings).expect("client")
}

/// A client for the test engine that makes queue updates the way `mode` says.
pub async fn client_updating(mode: UpdateMode) -> EsClient {
    let _ = client().await;
    let mut settings = ConnectionConfig::new(&base_url()).expect("OPENSEARCH_URL is an address");
    settings.update_mode = mode;
    EsClient::new(settings).expect("client")
}

/// The ways of making queue updates this engine serves: conditional writes always, Painless
/// scripts where the engine runs them (as detected; `engine_without_painless_is_detected` in
/// `queue_updates.rs` checks the detection against a real scripted update).
pub async fn update_modes() -> Vec<UpdateMode> {
    let detected = client()
        .await
        .updates()
        .await
        .expect("the engine says what it serves");
    match detected {
        Updates::Scripted => vec![UpdateMode::Scripted, UpdateMode::Conditional],
        Updates::Conditional => vec![UpdateMode::Conditional],
    }
}

/// Creates a status index with squall's mapping and no replicas.
pub async fn status_index(client: &EsClient, prefix: &str, shards: u32) -> String {
    status_index_with(client, prefix, shards, 0).await
}

/// Creates a status index with squall's mapping, `shards` shards and `replicas` replicas.
pub async fn status_index_with(
    client: &EsClient,
    prefix: &str,
    shards: u32,
    replicas: u32,
) -> String {
    let name = unique_index(prefix);
    ensure_status_index(
        client,
        &StatusIndexConfig {
            name: name.clone(),
            shards,
            replicas,
            refresh_interval: "1s".to_string(),
        },
    )
    .await
    .expect("create the status index");
    name
}

/// Deletes an index (cleanup; errors ignored).
pub async fn delete_index(client: &EsClient, index: &str) {
    // A queues index comes with the workers index its spouts announce themselves in.
    for name in [index.to_string(), format!("{index}-workers")] {
        let _ = client
            .request(Method::Delete, &format!("/{name}"), &[], None)
            .await;
    }
}

/// The three spout strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Aggregation,
    Collapsing,
    Hybrid,
}

/// Spout settings for tests: a 1 s refresh, generous buckets.
pub fn spout_settings(index: &str) -> StatusSpoutConfig {
    StatusSpoutConfig {
        index: index.to_string(),
        max_buckets: 50,
        max_urls_per_bucket: 5,
        max_urls_per_reload: 5,
        refresh_interval: Duration::from_secs(1),
        reset_fetch_date_after: Some(Duration::from_secs(5)),
        ..StatusSpoutConfig::default()
    }
}

/// A spout of `kind` over `index`.
pub fn spout(
    kind: Kind,
    client: &EsClient,
    settings: StatusSpoutConfig,
) -> Box<dyn squall::frontier::Spout> {
    match kind {
        Kind::Aggregation => Box::new(AggregationSpout::new(client.clone(), settings)),
        Kind::Collapsing => Box::new(CollapsingSpout::new(client.clone(), settings)),
        Kind::Hybrid => Box::new(HybridSpout::new(client.clone(), settings)),
    }
}

/// The writer for `index`, routed by key.
pub fn store(client: &EsClient, index: &str) -> EsStatusStore {
    EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.to_string(),
            key_field: KeyField::default(),
            routing: true,
        },
    )
}

/// The queue document of `key` in the queues index `queues`.
pub async fn queue_doc(client: &EsClient, queues: &str, key: &str) -> Result<Value, EsError> {
    let path = format!("/{queues}/_doc/{}", queue_id(key));
    client.request(Method::Get, &path, &[], None).await
}

/// The document of `url` in the status (or urls) index `index`.
pub async fn url_doc(client: &EsClient, index: &str, url: &str) -> Value {
    let path = format!("/{index}/_doc/{}", document_id(url));
    client
        .request(Method::Get, &path, &[], None)
        .await
        .expect("url doc")
}

/// A crawler builder for `config` on `index`: a spout of `kind` with the test settings, and the
/// writer routed by key, returned too (to flush it).
pub fn crawler_on(
    config: CrawlConfig,
    kind: Kind,
    client: &EsClient,
    index: &str,
) -> (CrawlerBuilder, EsStatusStore) {
    let store = store(client, index);
    let builder = CrawlerBuilder::new(config)
        .spout(spout(kind, client, spout_settings(index)))
        .status_store(Arc::new(store.clone()));
    (builder, store)
}

/// Every URL the site lists against its status in `index`: the mismatches, as lines.
pub async fn wrong_statuses(
    client: &EsClient,
    index: &str,
    expectation: &squall_testsite::Expectation,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (url, expected) in expectation.statuses() {
        let id = document_id(url);
        let answer = client
            .request(
                Method::Get,
                &format!("/{index}/_search"),
                &[("q", &format!("_id:{id}"))],
                None,
            )
            .await
            .expect("search by id");
        let status = answer["hits"]["hits"][0]["_source"]["status"]
            .as_str()
            .unwrap_or("missing");
        let want = crawler::expected_status(*expected).as_str();
        if status != want {
            wrong.push(format!("{url}: {status}, expected {want}"));
        }
    }
    wrong
}

/// Creates `index` with StormCrawler's status mapping as StormCrawler publishes it
/// (`tests/fixtures/stormcrawler/status.mapping`), `shards` shards, no replicas and a 1 s refresh.
pub async fn stormcrawler_index_with(client: &EsClient, index: &str, shards: u32) {
    client
        .request(
            Method::Put,
            &format!("/{index}"),
            &[],
            Some(RequestBody::Json(stormcrawler::status_index(
                shards, 0, "1s",
            ))),
        )
        .await
        .expect("create a StormCrawler status index");
}

/// [`stormcrawler_index_with`] two shards: StormCrawler's status index at test size.
pub async fn stormcrawler_index(client: &EsClient, index: &str) {
    stormcrawler_index_with(client, index, 2).await;
}

/// Sends `lines` (NDJSON: action, document, ...) to `index`'s bulk API, visible to search on
/// return; the engine's answer.
pub async fn bulk(client: &EsClient, index: &str, lines: Vec<Value>) -> Value {
    bulk_with(client, index, "true", lines).await
}

/// [`bulk`] with the `refresh` parameter given (`true`, `wait_for`, `false`).
pub async fn bulk_with(client: &EsClient, index: &str, refresh: &str, lines: Vec<Value>) -> Value {
    client
        .request(
            Method::Post,
            &format!("/{index}/_bulk"),
            &[("refresh", refresh)],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .expect("bulk request")
}

/// Documents in `index` (as far as refreshed).
pub async fn count(client: &EsClient, index: &str) -> u64 {
    let answer = client
        .request(Method::Get, &format!("/{index}/_count"), &[], None)
        .await
        .expect("count");
    answer["count"].as_u64().expect("a count")
}
