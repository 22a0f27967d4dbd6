//! The engine stopped and started again in the middle of a crawl: the crawl waits, resumes, and loses
//! no status update. This test runs its own node (port 9250, its own home), so that stopping it
//! disturbs no other test: OpenSearch (`scripts/opensearch`), or with `SQUALL_ENGINE=elasticsearch`
//! Elasticsearch (`scripts/elasticsearch`).

use crate::support;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use squall::frontier::StatusStore;
use squall::message::{CrawlEvent, CrawlObserver};
use squall::topology::StopReason;
use squall_engine::client::{ConnectionConfig, EsClient};
use squall_testsite::SiteSpec;
use support::crawler;

const PORT: &str = "9250";

/// Runs the engine's script (`scripts/opensearch` or `scripts/elasticsearch`) for the restart node.
/// `fresh` wipes its data first; a restart keeps it (whatever `*_CLEAN` the caller's environment
/// has, as CI's does).
fn node_with(command: &str, fresh: bool) -> std::process::ExitStatus {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let engine = support::engine_name();
    let prefix = engine.to_uppercase();
    Command::new(repo.join("scripts").join(engine))
        .arg(command)
        .env(format!("{prefix}_CLEAN"), if fresh { "1" } else { "0" })
        .env(format!("{prefix}_PORT"), PORT)
        .env(format!("{prefix}_HEAP"), "1g")
        .env(
            format!("{prefix}_HOME"),
            repo.join(format!("target/{engine}-restart-test")),
        )
        .status()
        .unwrap_or_else(|e| panic!("run scripts/{engine}: {e}"))
}

fn node(command: &str) -> std::process::ExitStatus {
    node_with(command, false)
}

/// Stops the restart node however the test ends.
struct NodeGuard;

impl Drop for NodeGuard {
    fn drop(&mut self) {
        let _ = node("stop");
    }
}

#[derive(Default)]
struct Pages(AtomicU64);

impl CrawlObserver for Pages {
    fn on_event(&self, event: &CrawlEvent) {
        if let CrawlEvent::Processed { fetch: Some(_), .. } = event {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_survives_an_engine_restart_without_losing_status_updates() {
    let _ = node("stop");
    let _guard = NodeGuard;
    assert!(
        node_with("start", true).success(),
        "the restart-test node did not start"
    );
    let mut connection =
        ConnectionConfig::new(&format!("http://127.0.0.1:{PORT}")).expect("address");
    // Enough patience to ride out a restart (about 10 s here).
    connection.max_retries = 12;
    connection.max_backoff = Duration::from_secs(4);
    let client = EsClient::new(connection).expect("client");
    let index = support::status_index_with(&client, "restart", 2, 0).await;

    let site = crawler::start_site(6, 20).await;
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.3",
        "spout.min.delay.queries=200",
        &SiteSpec::exclude_outside_hosts(),
        "topology.shutdown.timeout=60",
    ]);
    let (builder, store) = support::crawler_on(config, support::Kind::Aggregation, &client, &index);
    let pages = Arc::new(Pages::default());
    let crawler = crawler::resolve_site(builder.observer(pages.clone()), &site)
        .build()
        .expect("crawler");
    let seeds = site.seeds();
    crawler.inject(seeds.iter().map(String::as_str)).await;
    let crawl = tokio::spawn(crawler::run_until_idle(
        crawler,
        Some(Duration::from_secs(300)),
    ));

    // Mid-crawl: stop the engine, leave it down a moment, start it again with the same data.
    while pages.0.load(Ordering::Relaxed) < 30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let restart = tokio::task::spawn_blocking(|| {
        let stopped = node("stop").success();
        std::thread::sleep(Duration::from_secs(2));
        stopped && node("start").success()
    })
    .await
    .expect("join");
    assert!(restart, "the node did not restart");
    let at_restart = pages.0.load(Ordering::Relaxed);

    let summary = crawl.await.expect("crawl task");
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    let expectation = site.expected();
    assert!(
        (at_restart as usize) < expectation.reachable_in_scope_urls().len(),
        "the restart came after the crawl"
    );

    // Every URL's final status made it into the index.
    store.flush().await.expect("refresh");
    let wrong = support::wrong_statuses(&client, &index, &expectation).await;
    assert!(wrong.is_empty(), "{wrong:#?}");
    let problems = expectation.check_requests(&site.requests());
    // Pages whose status write was refused while the engine was down are fetched again later.
    eprintln!(
        "restart after {at_restart} pages; {} request problems (re-fetches): {problems:?}",
        problems.len()
    );
    let never: Vec<String> = problems
        .into_iter()
        .filter(|p| p.contains("never requested") || p.contains("must not"))
        .collect();
    assert!(never.is_empty(), "{never:#?}");
    site.shutdown().await;
}
