//! Crawls of the local multi-host site with the frontier in the real OpenSearch node, one per spout.

use crate::support;
use std::time::Duration;

use squall::frontier::StatusStore;
use squall::topology::{CrawlerBuilder, StopReason};
use squall_testsite::SiteSpec;
use support::{Kind, crawler};

async fn crawl_site(kind: Kind) {
    let client = support::client().await;
    support::crawl::crawl_site(&client, kind, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregation_spout_crawls_the_site_to_the_end() {
    crawl_site(Kind::Aggregation).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collapsing_spout_crawls_the_site_to_the_end() {
    crawl_site(Kind::Collapsing).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_spout_crawls_the_site_to_the_end() {
    crawl_site(Kind::Hybrid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stormcrawler_format_index_is_crawled_and_stays_in_its_format() {
    use serde_json::json;
    use squall_engine::client::Method;
    use squall_engine::client::RequestBody;
    use squall_engine::status_index::schema::{KeyField, document_id};
    use squall_engine::status_index::spouts::{AggregationSpout, StatusSpoutConfig};
    use squall_engine::{EsStatusStore, WriterConfig};

    let client = support::client().await;
    let index = support::unique_index("sc-crawl");
    let site = crawler::start_site(4, 10).await;
    // StormCrawler's published mapping, and its seeds as StormCrawler's injector writes them, with
    // the key in metadata.hostname (as news-crawl configures it).
    support::stormcrawler_index(&client, &index).await;
    let mut lines = Vec::new();
    for seed in site.seeds() {
        let host = url::Url::parse(&seed)
            .expect("seed")
            .host_str()
            .unwrap_or_default()
            .to_string();
        lines.push(json!({ "create": { "_id": document_id(&seed), "routing": host } }));
        lines.push(json!({ "url": seed, "status": "DISCOVERED",
            "nextFetchDate": "2024-01-01T00:00:00.000Z",
            "metadata": { "hostname": [host], "depth": ["0"] } }));
    }
    support::bulk(&client, &index, lines).await;

    let key_field = KeyField::parse("metadata.hostname");
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.clone(),
            key_field: key_field.clone(),
            routing: true,
        },
    );
    let spout = AggregationSpout::new(
        client.clone(),
        StatusSpoutConfig {
            key_field,
            ..support::spout_settings(&index)
        },
    );
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.05",
        "spout.min.delay.queries=200",
        &SiteSpec::exclude_outside_hosts(),
    ]);
    let builder = CrawlerBuilder::new(config).frontier(spout, store.clone());
    // The seeds are given again, as when resuming any crawl: they define the scope, and, already in
    // the index, they are left as StormCrawler wrote them (DISCOVERED is create-only).
    let crawler = crawler::resolve_site(builder, &site)
        .build()
        .expect("crawler");
    let seeds = site.seeds();
    let report = crawler.inject(seeds.iter().map(String::as_str)).await;
    assert_eq!(report.accepted, seeds.len());
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(120))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    let problems = site.expected().check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");

    // Every document is still in StormCrawler's shape: key in metadata.hostname, no top-level key.
    store.flush().await.expect("refresh");
    let with_key = client
        .request(
            Method::Post,
            &format!("/{index}/_count"),
            &[],
            Some(RequestBody::Json(
                json!({ "query": { "exists": { "field": "key" } } }),
            )),
        )
        .await
        .expect("count");
    assert_eq!(with_key["count"], json!(0));
    let without_hostname = client
        .request(Method::Post, &format!("/{index}/_count"), &[],
            Some(RequestBody::Json(json!({ "query": { "bool": { "must_not": { "exists": { "field": "metadata.hostname" } } } } }))))
        .await
        .expect("count");
    assert_eq!(without_hostname["count"], json!(0));
    site.shutdown().await;
    support::delete_index(&client, &index).await;
}
