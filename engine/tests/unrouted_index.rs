//! A status index written without routing (StormCrawler with `es.status.routing: false`, or another
//! tool): crawled to the end with no URL fetched twice and no second document for any id, and the
//! start-up check that names a routing setting the index contradicts. Real node, real local site.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use serde_json::json;
use squall::frontier::{BusyUrls, Spout};
use squall::frontier::{StatusStore, StatusWrite};
use squall::model::{CrawlUrl, PartitionMode, Status, partition_key};
use squall::topology::{CrawlerBuilder, StopReason};
use squall_engine::client::Method;
use squall_engine::client::{EsClient, RequestBody};
use squall_engine::status_index::index::{check_routing, routing_for, sample_routing};
use squall_engine::status_index::schema::{KeyField, document_id, status_document};
use squall_engine::status_index::spouts::{AggregationSpout, CollapsingSpout, HybridSpout};
use squall_engine::{EsStatusStore, Routing, WriterConfig};
use squall_testsite::{Site, SiteSpec};
use support::{Kind, crawler};

/// Shards of the test indices: with 8, a seed's own (unrouted) shard and its key's shard differ for
/// at least one of three seeds but once in 512 runs, so that a write routed by key misses it.
const SHARDS: u32 = 8;

/// Creates `index` with StormCrawler's status mapping and [`SHARDS`] shards.
async fn stormcrawler_index(client: &EsClient, index: &str) {
    support::stormcrawler_index_with(client, index, SHARDS).await;
}

/// The DISCOVERED status of a seed, as StormCrawler's injector writes it (key by host, depth 0,
/// due in the past).
fn seed_write(seed: &str) -> StatusWrite {
    let url = CrawlUrl::seed(url::Url::parse(seed).expect("seed URL"));
    let key = partition_key(&url.url, &url.metadata, PartitionMode::ByHost);
    StatusWrite {
        url,
        key,
        status: Status::Discovered,
        next_fetch: Some(Utc::now() - TimeDelta::minutes(5)),
        queue: Default::default(),
    }
}

/// Writes `urls` as DISCOVERED documents in StormCrawler's shape, routed by key or not at all.
async fn fill(client: &EsClient, index: &str, urls: &[String], routed: bool) {
    let mut lines = Vec::new();
    for url in urls {
        let write = seed_write(url);
        let mut action = json!({ "_id": document_id(url) });
        if routed {
            action["routing"] = json!(write.key);
        }
        lines.push(json!({ "create": action }));
        lines.push(status_document(&write, &KeyField::default()));
    }
    let answer = support::bulk(client, index, lines).await;
    assert_eq!(answer["errors"], json!(false), "{answer}");
}

/// The shard `routing` sends a document to.
async fn shard_of(client: &EsClient, index: &str, routing: &str) -> Option<u64> {
    let answer = client
        .request(
            Method::Get,
            &format!("/{index}/_search_shards"),
            &[("routing", routing)],
            None,
        )
        .await
        .ok()?;
    answer["shards"][0][0]["shard"].as_u64()
}

/// Whether a write of `seed` routed by its key would miss its unrouted document (the condition under
/// which today's always-routed writer makes a second copy).
async fn key_shard_differs(client: &EsClient, index: &str, seed: &str) -> bool {
    let write = seed_write(seed);
    shard_of(client, index, &write.key).await != shard_of(client, index, &document_id(seed)).await
}

/// Every document of `index`: (`_id`, `_routing`, status).
async fn documents(client: &EsClient, index: &str) -> Vec<(String, Option<String>, String)> {
    client
        .request(Method::Post, &format!("/{index}/_refresh"), &[], None)
        .await
        .expect("refresh");
    let body = json!({ "size": 10_000, "_source": ["status"], "query": { "match_all": {} } });
    let answer = client
        .request(
            Method::Post,
            &format!("/{index}/_search"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await
        .expect("read all documents");
    let hits = answer["hits"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    hits.iter()
        .map(|hit| {
            (
                hit["_id"].as_str().unwrap_or_default().to_string(),
                hit["_routing"].as_str().map(str::to_string),
                hit["_source"]["status"]
                    .as_str()
                    .unwrap_or("none")
                    .to_string(),
            )
        })
        .collect()
}

/// Ids held by more than one document, with each copy's routing and status.
fn duplicates(
    docs: &[(String, Option<String>, String)],
) -> BTreeMap<String, Vec<(Option<String>, String)>> {
    let mut by_id: BTreeMap<String, Vec<(Option<String>, String)>> = BTreeMap::new();
    for (id, routing, status) in docs {
        by_id
            .entry(id.clone())
            .or_default()
            .push((routing.clone(), status.clone()));
    }
    by_id.retain(|_, copies| copies.len() > 1);
    by_id
}

/// Crawls the small site from an index holding only its seeds, unrouted, with the writer routing new
/// documents as `routing` says and the spout's routes wired to it; checks that the crawl is
/// complete and exact, and returns the index's documents at the end.
async fn crawl_unrouted_seeds(
    client: &EsClient,
    index: &str,
    site: &Site,
    routing: bool,
) -> Vec<(String, Option<String>, String)> {
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.to_string(),
            key_field: KeyField::default(),
            routing,
        },
    );
    let spout = AggregationSpout::new(client.clone(), support::spout_settings(index))
        .with_routes(store.routes());
    // Off the out-of-scope hosts. A writer that routes new documents by key would make a second
    // copy of a seed when a page links to it (a DISCOVERED create goes where the setting says; that
    // is what the start-up check prevents), so with routing on the links to the home pages (the
    // seeds, already in the index) are left out too: what is tested then is only that the seeds'
    // updates land on their own documents. Nothing else goes unreached: the home pages are seeds.
    let exclude = if routing {
        r"urlfilter.exclude=['^http://outside-', '^http://host-\d+\.test:\d+/$']"
    } else {
        r"urlfilter.exclude=['^http://outside-']"
    };
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.05",
        "spout.min.delay.queries=200",
        exclude,
        "status.updater.flush.interval=0.2",
        // Short, so that a URL whose update missed its document is fetched again within the run.
        "spout.ttl.purgatory=3",
    ]);
    let builder = CrawlerBuilder::new(config).frontier(spout, store.clone());
    let crawler = crawler::resolve_site(builder, site)
        .build()
        .expect("crawler");
    if !routing {
        // Given again, as when resuming any crawl: create-only, unrouted, they meet the originals.
        let seeds = site.seeds();
        let report = crawler.inject(seeds.iter().map(String::as_str)).await;
        assert_eq!(report.accepted, seeds.len());
    }
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(180))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");

    // Every reachable URL requested exactly once, nothing else.
    let requests = site.requests();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for request in requests.iter().filter(|r| r.path != "/robots.txt") {
        *counts.entry(request.url.as_str()).or_default() += 1;
    }
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "requested more than once: {twice:?}");
    let expectation = site.expected();
    let problems = expectation.check_requests(&requests);
    assert!(problems.is_empty(), "{problems:#?}");
    store.flush().await.expect("refresh");
    let wrong = support::wrong_statuses(client, index, &expectation).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(
        store.routes().is_empty(),
        "routes left after the crawl: {}",
        store.routes().len()
    );
    documents(client, index).await
}

/// Fails on today's code, where the status writer always routes by key (the crawl binary's
/// hard-coded `routing: true`; there is no sample): a seed's FETCHED update lands on its key's shard
/// as a second document, the original stays DISCOVERED and due, and the seed is requested again
/// once its purgatory is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrouted_index_is_crawled_to_the_end_without_refetching_or_second_copies() {
    let client = support::client().await;
    let index = support::unique_index("unrouted-crawl");
    let site = Site::start(SiteSpec::small()).await.expect("site");
    stormcrawler_index(&client, &index).await;
    let seeds = site.seeds();
    fill(&client, &index, &seeds, false).await;
    let mut differ = 0;
    for seed in &seeds {
        differ += usize::from(key_shard_differs(&client, &index, seed).await);
    }
    eprintln!(
        "{differ} of {} seeds live off their key's shard",
        seeds.len()
    );

    // The routing as the sample says.
    let sample = sample_routing(&client, &index, 100).await.expect("sample");
    assert_eq!((sample.routed, sample.unrouted), (0, seeds.len()));
    let routing = routing_for(&index, None, sample).expect("auto never mismatches");
    assert!(!routing, "an unrouted index is written unrouted");

    let docs = crawl_unrouted_seeds(&client, &index, &site, routing).await;
    let ids: BTreeSet<&str> = docs.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(
        ids.len(),
        docs.len(),
        "second copies: {:#?}",
        duplicates(&docs)
    );
    let routed: Vec<_> = docs.iter().filter(|(_, r, _)| r.is_some()).collect();
    assert!(routed.is_empty(), "routed documents: {routed:?}");
    let discovered: Vec<_> = docs.iter().filter(|(_, _, s)| s == "DISCOVERED").collect();
    assert!(discovered.is_empty(), "left DISCOVERED: {discovered:?}");
    site.shutdown().await;
    support::delete_index(&client, &index).await;
}

/// The writer's setting left on (new documents routed by key) on an index whose seeds are not
/// routed: with the routes wired, the seeds' updates still go to their own documents. Fails on
/// today's code, which has no routes: the updates land on the keys' shards as second documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_routing_on_the_seeds_updates_land_on_their_unrouted_documents() {
    let client = support::client().await;
    let index = support::unique_index("unrouted-routes");
    let site = Site::start(SiteSpec::small()).await.expect("site");
    stormcrawler_index(&client, &index).await;
    let seeds = site.seeds();
    fill(&client, &index, &seeds, false).await;

    let docs = crawl_unrouted_seeds(&client, &index, &site, true).await;
    let seed_ids: BTreeSet<String> = seeds.iter().map(|s| document_id(s)).collect();
    let seed_docs: Vec<_> = docs
        .iter()
        .filter(|(id, _, _)| seed_ids.contains(id))
        .collect();
    assert_eq!(
        seed_docs.len(),
        seeds.len(),
        "second copies of seeds: {:#?}",
        duplicates(&docs)
    );
    for (id, routing, status) in &seed_docs {
        assert_eq!(routing, &None, "seed {id} moved");
        assert_eq!(status, "FETCHED", "seed {id}");
    }
    // Everything else is new, and routed by key as the setting says.
    let unrouted_new: Vec<_> = docs
        .iter()
        .filter(|(id, routing, _)| !seed_ids.contains(id) && routing.is_none())
        .collect();
    assert!(
        unrouted_new.is_empty(),
        "new documents not routed: {unrouted_new:?}"
    );
    assert!(duplicates(&docs).is_empty(), "{:#?}", duplicates(&docs));
    site.shutdown().await;
    support::delete_index(&client, &index).await;
}

/// Each status-index spout records the routing of what it returns: an update with routing on lands
/// on the unrouted document. Fails on today's code (no routes: a second copy on the key's shard).
#[tokio::test]
async fn every_spout_records_where_its_documents_live() {
    let client = support::client().await;
    let urls: Vec<String> = (0..12)
        .map(|i| format!("http://h{}.test/p{i}", i % 4))
        .collect();
    for kind in [Kind::Aggregation, Kind::Collapsing, Kind::Hybrid] {
        let index = support::unique_index("unrouted-spout");
        stormcrawler_index(&client, &index).await;
        fill(&client, &index, &urls, false).await;
        let store = EsStatusStore::new(
            client.clone(),
            WriterConfig {
                index: index.clone(),
                key_field: KeyField::default(),
                routing: true,
            },
        );
        let settings = support::spout_settings(&index);
        let mut spout: Box<dyn Spout> = match kind {
            Kind::Aggregation => Box::new(
                AggregationSpout::new(client.clone(), settings).with_routes(store.routes()),
            ),
            Kind::Collapsing => {
                Box::new(CollapsingSpout::new(client.clone(), settings).with_routes(store.routes()))
            }
            Kind::Hybrid => {
                Box::new(HybridSpout::new(client.clone(), settings).with_routes(store.routes()))
            }
        };
        let batch = spout.next_batch(&BusyUrls::none()).await.expect("query");
        assert!(!batch.is_empty(), "{kind:?} returned nothing");
        for due in &batch {
            assert_eq!(
                store.routes().get(due.url.url.as_str()),
                Some(Routing::Unrouted),
                "{kind:?}: {}",
                due.url.url
            );
        }
        let writes: Vec<StatusWrite> = batch
            .iter()
            .map(|due| StatusWrite {
                url: due.url.clone(),
                key: due.key.clone(),
                status: Status::Fetched,
                next_fetch: None,
                queue: Default::default(),
            })
            .collect();
        assert!(store.store(writes).await.iter().all(Result::is_ok));
        assert!(store.routes().is_empty(), "{kind:?}: records left");
        let docs = documents(&client, &index).await;
        assert_eq!(docs.len(), urls.len(), "{kind:?}: {:#?}", duplicates(&docs));
        let fetched = docs.iter().filter(|(_, _, s)| s == "FETCHED").count();
        assert_eq!(fetched, batch.len(), "{kind:?}");
        support::delete_index(&client, &index).await;
    }
}

/// The start-up check. Fails on today's code, which has no check: the crawl binary starts with
/// routing on whatever the index holds.
#[tokio::test]
async fn a_routing_setting_the_index_contradicts_is_named() {
    let client = support::client().await;
    let urls: Vec<String> = (0..20)
        .map(|i| format!("http://h{}.test/p{i}", i % 5))
        .collect();

    let routed = support::unique_index("routing-check");
    stormcrawler_index(&client, &routed).await;
    fill(&client, &routed, &urls, true).await;
    let sample = sample_routing(&client, &routed, 100).await.expect("sample");
    assert_eq!((sample.routed, sample.unrouted), (20, 0));
    let error = check_routing(&routed, false, sample).expect_err("routed index, setting false");
    assert!(
        error.to_string().contains(&format!("`{routed}`")),
        "{error}"
    );
    assert!(routing_for(&routed, Some(false), sample).is_err());
    assert_eq!(routing_for(&routed, None, sample), Ok(true));
    assert_eq!(check_routing(&routed, true, sample), Ok(()));

    let unrouted = support::unique_index("routing-check");
    stormcrawler_index(&client, &unrouted).await;
    fill(&client, &unrouted, &urls, false).await;
    let sample = sample_routing(&client, &unrouted, 10)
        .await
        .expect("sample");
    assert_eq!((sample.routed, sample.unrouted), (0, 10));
    let error = check_routing(&unrouted, true, sample).expect_err("unrouted index, setting true");
    let message = error.to_string();
    for part in [
        format!("status index `{unrouted}`"),
        "without routing (10 of 10 sampled)".to_string(),
        "es.status.routing is true".to_string(),
        "second copies".to_string(),
    ] {
        assert!(message.contains(&part), "{part:?} not in {message:?}");
    }
    assert_eq!(routing_for(&unrouted, None, sample), Ok(false));

    let empty = support::unique_index("routing-check");
    stormcrawler_index(&client, &empty).await;
    let sample = sample_routing(&client, &empty, 100).await.expect("sample");
    assert!(sample.is_empty());
    assert_eq!(check_routing(&empty, true, sample), Ok(()));
    assert_eq!(check_routing(&empty, false, sample), Ok(()));
    assert_eq!(routing_for(&empty, None, sample), Ok(true));
    let missing = support::unique_index("routing-check-missing");
    let sample = sample_routing(&client, &missing, 100)
        .await
        .expect("sample");
    assert!(sample.is_empty());

    for index in [routed, unrouted, empty] {
        support::delete_index(&client, &index).await;
    }
}
