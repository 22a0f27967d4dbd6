//! `urlfilter.ignore.outside.host` in the crawls that are not given their seeds: a status index
//! whose seeds were injected earlier, crawler processes joining a shared queue frontier, and an
//! embedded crawl resumed without repeating its seeds. The scope is the source page's host, so each
//! of them crawls the whole site (every URL a source-host crawl reaches, each fetched once).

use std::path::Path;
use std::process::{Command, Output};

use squall::frontier::{StatusStore, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::indices::ensure_index;
use squall_engine::client::{ConnectionConfig, EsClient};
use squall_engine::queue::QueueStatusStore;
use squall_engine::queue::schema::queues_index_body;
use squall_engine::status_index::index::{StatusIndexConfig, ensure_status_index};
use squall_engine::status_index::schema::KeyField;
use squall_engine::{EsStatusStore, WriterConfig};
use squall_testsite::{Scope, Site, SiteSpec};
use url::Url;

use crate::support;
use support::binary::{crawl_binary, resolve_args, site_args};
use support::opensearch;

/// Arguments every run shares: host scope, a fast pace, the fetch log, stop when idle.
fn scope_args(fetch_log: &Path) -> Vec<String> {
    [
        "--fetch-log",
        &fetch_log.display().to_string(),
        "--set",
        "http.agent.name=squall-test",
        "--set",
        "fetcher.server.delay=0.02",
        "--set",
        "spout.min.delay.queries=100",
        "--set",
        "urlfilter.ignore.outside.host=true",
        "--max-duration",
        "180",
    ]
    .map(str::to_string)
    .to_vec()
}

async fn run(args: Vec<String>) -> Output {
    let output =
        tokio::task::spawn_blocking(move || Command::new(crawl_binary()).args(&args).output())
            .await
            .expect("join")
            .expect("run the crawl binary");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Every URL of a source-host crawl requested once, nothing else.
fn assert_whole_site(site: &Site) {
    let expected = site.expected_with(Scope::SourceHost);
    assert!(expected.reachable_in_scope_urls().len() > site.seeds().len() * 5);
    let problems = expected.check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The seeds as DISCOVERED writes, due now, keyed by host.
fn seed_writes(site: &Site) -> Vec<StatusWrite> {
    site.seeds()
        .iter()
        .map(|seed| {
            let url = Url::parse(seed).expect("seed URL");
            StatusWrite {
                key: url.host_str().unwrap_or_default().to_string(),
                url: CrawlUrl::seed(url),
                status: Status::Discovered,
                next_fetch: Some(chrono::Utc::now()),
                queue: Default::default(),
            }
        })
        .collect()
}

async fn store_seeds(store: &dyn StatusStore, site: &Site) {
    for outcome in store.store(seed_writes(site)).await {
        outcome.expect("seed written");
    }
    store.flush().await.expect("refresh");
}

fn es_client() -> EsClient {
    let settings = ConnectionConfig::new(&opensearch::base_url()).expect("address");
    EsClient::new(settings).expect("client")
}

fn index_settings(name: &str) -> StatusIndexConfig {
    StatusIndexConfig {
        name: name.to_string(),
        shards: 2,
        replicas: 0,
        refresh_interval: "1s".to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_index_seeded_earlier_is_crawled_whole_without_seed_arguments() {
    let engine = opensearch::client().await;
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let index = opensearch::unique_index("scope-status");
    let client = es_client();
    ensure_status_index(&client, &index_settings(&index))
        .await
        .expect("status index");
    // Injected by an earlier process, routed by host as StormCrawler's injector does.
    let writer = EsStatusStore::new(
        client,
        WriterConfig {
            index: index.clone(),
            key_field: KeyField::default(),
            routing: true,
        },
    );
    store_seeds(&writer, &site).await;

    let dir = tempfile::tempdir().expect("temp dir");
    let mut args = scope_args(&dir.path().join("fetch.jsonl"));
    args.extend(
        [
            "--frontier",
            "opensearch",
            "--es-url",
            &opensearch::base_url(),
            "--es-index",
            &index,
            "--spout",
            "aggregation",
            "--until-idle",
        ]
        .map(str::to_string),
    );
    args.extend(resolve_args(&site));
    run(args).await;
    assert_whole_site(&site);
    opensearch::delete_index(&engine, &index).await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_joining_a_queue_frontier_without_seeds_crawl_the_whole_site() {
    let engine = opensearch::client().await;
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let urls = opensearch::unique_index("scope-urls");
    let queues = opensearch::unique_index("scope-queues");
    let client = es_client();
    ensure_status_index(&client, &index_settings(&urls))
        .await
        .expect("urls index");
    ensure_index(&client, &queues, queues_index_body(1, 0, "1s"))
        .await
        .expect("queues index");
    let writer = QueueStatusStore::new(client, &urls, &queues, KeyField::default());
    store_seeds(&writer, &site).await;

    let dir = tempfile::tempdir().expect("temp dir");
    let mut runs = Vec::new();
    for p in 0..2 {
        let mut args = scope_args(&dir.path().join(format!("fetch-{p}.jsonl")));
        args.extend(
            [
                "--frontier",
                "opensearch",
                "--es-url",
                &opensearch::base_url(),
                "--spout",
                "queue",
                "--es-index",
                &urls,
                "--es-queues-index",
                &queues,
                "--instance-id",
                &format!("joiner-{p}"),
                "--lease-ttl",
                "5",
                "--until-idle",
            ]
            .map(str::to_string),
        );
        args.extend(resolve_args(&site));
        runs.push(tokio::spawn(run(args)));
    }
    for process in runs {
        process.await.expect("join");
    }
    assert_whole_site(&site);
    opensearch::delete_index(&engine, &urls).await;
    opensearch::delete_index(&engine, &queues).await;
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_crawl_resumed_without_its_seeds_crawls_the_whole_site() {
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier").display().to_string();
    let fetch_log = dir.path().join("fetch.jsonl");

    let mut first = scope_args(&fetch_log);
    first.extend(["--frontier-path", &frontier, "--max-pages", "5"].map(str::to_string));
    first.extend(site_args(&site));
    run(first).await;
    // Five answered fetches, then those in flight and the robots.txt files: far from the site.
    let after_first = site.requests().len();
    let whole = site
        .expected_with(Scope::SourceHost)
        .reachable_in_scope_urls()
        .len();
    assert!(
        after_first * 2 < whole,
        "the first run went too far: {after_first} requests of {whole}"
    );

    let mut second = scope_args(&fetch_log);
    second.extend(["--frontier-path", &frontier, "--until-idle"].map(str::to_string));
    second.extend(resolve_args(&site));
    let output = run(second).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("crawl stopped (Idle)"), "{stdout}");
    assert_whole_site(&site);
    site.shutdown().await;
}
