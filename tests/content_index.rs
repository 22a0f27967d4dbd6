//! The content indexer on the real OpenSearch node: a content index created from StormCrawler's
//! OpenSearch archetype `indexer.mapping` (as its `OS_IndexInit.sh` uploads it) and one created by
//! squall have the same mappings and settings, and a crawl of a loopback site fills either with
//! StormCrawler's documents; the crawl binary turns it on beside the frontier of the example
//! config files.

use crate::support;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use squall::index::document_id;
use squall::topology::StopReason;
use squall_engine::client::{ConnectionConfig, EsClient, Method, RequestBody};
use support::binary::{crawl_binary, set_args};
use support::content_site::ContentSite;
use support::crawler;
use support::opensearch::{base_url, delete_index, unique_index};

/// StormCrawler's file, byte for byte as its archetype ships it.
const STORMCRAWLER_MAPPING: &str =
    include_str!("fixtures/stormcrawler/archetype/src/main/resources/indexer.mapping");

fn config(index: &str) -> squall::config::CrawlConfig {
    crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.02",
        "spout.min.delay.queries=100",
        "indexer.kind=opensearch",
        &format!("es.indexer.addresses={}", base_url()),
        &format!("es.indexer.index.name={index}"),
        "es.indexer.flushInterval=200ms",
    ])
}

async fn get(client: &EsClient, path: &str) -> Value {
    client
        .request(Method::Get, path, &[], None)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// The index's mappings and the settings its creation body sets.
async fn shape(client: &EsClient, index: &str) -> Value {
    let mappings = get(client, &format!("/{index}/_mapping")).await[index]["mappings"].clone();
    let settings =
        get(client, &format!("/{index}/_settings")).await[index]["settings"]["index"].clone();
    json!({
        "mappings": mappings,
        "number_of_shards": settings["number_of_shards"],
        "number_of_replicas": settings["number_of_replicas"],
        "refresh_interval": settings["refresh_interval"],
    })
}

/// Crawls the site until idle with the content index `index` (created by squall if missing);
/// returns the frontier, which lives as long as the returned directory.
async fn crawl_into(
    site: &ContentSite,
    index: &str,
) -> (squall::frontier::EmbeddedFrontier, tempfile::TempDir) {
    let config = config(index);
    let store = squall_engine::indexer::open(&config)
        .await
        .expect("content index");
    let (builder, frontier, dir) = crawler::embedded(config);
    let crawler = site
        .resolve(builder.content_store(Arc::new(store)))
        .build()
        .expect("crawler");
    crawler
        .inject(site.seeds().iter().map(String::as_str))
        .await;
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(120))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    assert_eq!(summary.write_failures, 0, "{summary}");
    (frontier, dir)
}

/// Every document of `index`: its id and its source.
async fn documents(engine: &elasticsearch::Elasticsearch, index: &str) -> Vec<(String, Value)> {
    support::opensearch::all_hits(engine, index)
        .await
        .into_iter()
        .map(|hit| {
            let id = hit["_id"].as_str().expect("id").to_string();
            (id, hit["_source"].clone())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stormcrawlers_content_index_and_squalls_are_identical_and_filled_by_a_crawl() {
    let engine = support::opensearch::client().await;
    let client =
        EsClient::new(ConnectionConfig::new(&base_url()).expect("address")).expect("client");
    let theirs = unique_index("sc-content");
    let ours = unique_index("squall-content");
    let body: Value = serde_json::from_str(STORMCRAWLER_MAPPING).expect("the fixture is JSON");
    client
        .request(
            Method::Put,
            &format!("/{theirs}"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await
        .expect("StormCrawler's content index");
    squall_engine::indexer::open(&config(&ours))
        .await
        .expect("squall creates its content index");
    assert_eq!(shape(&client, &theirs).await, shape(&client, &ours).await);
    assert_eq!(
        shape(&client, &ours).await["refresh_interval"],
        "60s",
        "the settings were read"
    );

    let site = ContentSite::start().await;
    for index in [&theirs, &ours] {
        let _crawled = crawl_into(&site, index).await;
        let documents = documents(&engine, index).await;
        let urls: BTreeSet<String> = documents
            .iter()
            .map(|(_, source)| source["url"].as_str().expect("url").to_string())
            .collect();
        assert_eq!(urls, site.indexed_urls(), "{index}");
        assert_eq!(documents.len(), urls.len(), "{index}");
        for (id, source) in &documents {
            assert_eq!(*id, document_id(source["url"].as_str().expect("url")));
        }
        let home = site.url("www.site.test", "/");
        let (_, home) = documents
            .iter()
            .find(|(id, _)| *id == document_id(&home))
            .expect("the home page");
        assert_eq!(home["title"], "Home");
        assert_eq!(home["description"], "The home page");
        assert_eq!(home["keywords"], "alpha, beta");
        assert_eq!(home["host"], "www.site.test");
        assert_eq!(home["domain"], "site.test");
        assert!(
            home["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("Welcome home."))
        );
    }
    assert_eq!(
        shape(&client, &theirs).await,
        shape(&client, &ours).await,
        "the documents added no field to either mapping"
    );
    delete_index(&engine, &theirs).await;
    delete_index(&engine, &ours).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_binary_indexes_beside_the_frontier_of_the_example_config_files() {
    let engine = support::opensearch::client().await;
    let status = unique_index("binary-status");
    let content = unique_index("binary-content");
    let site = ContentSite::start().await;
    let mut args: Vec<String> = [
        "--config",
        "examples/crawler-conf.yaml",
        "--config",
        "examples/opensearch-conf.yaml",
        "--indexer",
        "opensearch",
        "--until-idle",
        "--max-duration",
        "120",
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(set_args(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.02",
        "spout.min.delay.queries=100",
        &format!("es.status.addresses={}", base_url()),
        &format!("es.status.index.name={status}"),
        "es.status.index.shards=1",
        "es.status.index.replicas=0",
        &format!("es.indexer.addresses={}", base_url()),
        &format!("es.indexer.index.name={content}"),
        "es.indexer.flushInterval=200ms",
    ]));
    args.extend(site.resolve_args());
    args.extend(site.seeds());
    let binary = crawl_binary();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(binary)
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
    })
    .await
    .expect("join")
    .expect("run the crawl binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("crawl stopped (Idle)"),
        "{stdout}\n{stderr}"
    );
    let urls: BTreeSet<String> = documents(&engine, &content)
        .await
        .into_iter()
        .map(|(_, source)| source["url"].as_str().expect("url").to_string())
        .collect();
    assert_eq!(urls, site.indexed_urls());
    delete_index(&engine, &status).await;
    delete_index(&engine, &content).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_the_index_refuses_gives_its_url_the_status_error() {
    let engine = support::opensearch::client().await;
    let client =
        EsClient::new(ConnectionConfig::new(&base_url()).expect("address")).expect("client");
    let index = unique_index("refusing-content");
    // A content index where a title must be a number: every page's document is refused (400).
    let body = json!({ "mappings": { "properties": { "title": { "type": "long" } } } });
    client
        .request(
            Method::Put,
            &format!("/{index}"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await
        .expect("the refusing index");
    let site = ContentSite::start().await;
    let (frontier, _dir) = crawl_into(&site, &index).await;
    let home = frontier
        .lookup(&site.url("www.site.test", "/"))
        .expect("lookup")
        .expect("stored");
    assert_eq!(home.status, squall::model::Status::Error);
    assert_eq!(home.metadata.first("error.cause"), Some("indexing"));
    let noindex = site.not_indexed_urls()[0].clone();
    let stored = frontier.lookup(&noindex).expect("lookup").expect("stored");
    assert_eq!(
        stored.status,
        squall::model::Status::Fetched,
        "nothing to refuse"
    );
    assert!(documents(&engine, &index).await.is_empty());
    delete_index(&engine, &index).await;
}
