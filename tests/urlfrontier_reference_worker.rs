//! squall's crawl binary as a worker of a URLFrontier server that is not squall's, to the end: the
//! generated multi-host site crawled with `--until-idle`, every reachable URL fetched exactly once,
//! and the worker ending by itself from what the API says, with none of squall's own counts.
//!
//! Two such servers: crawler-commons' reference service (RocksDB), run from the jar
//! `URLFRONTIER_REFERENCE_SERVICE_JAR` names (built by hand; skipped, saying why, when it is not
//! set), and squall's own server with its counts left out of GetStats
//! (`ServerOptions::reference_stats`), which CI always runs. The test prints how long after the
//! last fetch the worker ended; no timed assertion: the deadline only keeps a broken crawl from
//! hanging.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::Utc;
use squall_testsite::{Site, SiteSpec};

#[path = "../urlfrontier/tests/support/reference.rs"]
mod reference;
use crate::support;
use support::binary::{set_args, site_args};
use support::crawl_process::CrawlProcess;
use support::fetch_log::read_log;

const DEADLINE: Duration = Duration::from_secs(240);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_binary_crawls_the_site_to_the_end_from_the_reference_service() {
    if let Err(why) = reference::locate() {
        eprintln!("SKIPPED: the reference URLFrontier is not at hand: {why}");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let service = reference::start_reference(&dir.path().join("rocksdb"));
    crawl_to_the_end(&format!("127.0.0.1:{}", service.port), dir.path()).await;
    drop(service);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crawl_binary_crawls_to_the_end_from_a_server_without_squall_counts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = ["fetcher.server.delay=0.2", "spout.min.delay.queries=200"];
    let server = reference::start_without_squall_counts(dir.path(), &settings).await;
    let address = server.addr().to_string();
    crawl_to_the_end(&address, dir.path()).await;
    server.shutdown().await;
}

/// Crawls the generated site to the end with the crawl binary as a worker of the URLFrontier
/// server at `address`, and checks that every reachable URL was fetched once and the worker ended.
async fn crawl_to_the_end(address: &str, dir: &std::path::Path) {
    let site = Site::start(SiteSpec {
        hosts: 4,
        pages_per_host: 40,
        ..SiteSpec::default()
    })
    .await
    .expect("site");
    let mut args: Vec<String> = [
        "--frontier",
        "urlfrontier",
        "--frontier-url",
        address,
        "--until-idle",
        "--max-duration",
        &DEADLINE.as_secs().to_string(),
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(set_args(&[
        "http.agent.name=squall-reference-worker",
        "fetcher.server.delay=0.2",
        "spout.min.delay.queries=200",
        "urlfrontier.delay.requestable=60",
        &SiteSpec::exclude_outside_hosts(),
    ]));
    args.extend(site_args(&site));
    let mut worker = CrawlProcess::start(0, dir, &args, &[]);
    let started = Instant::now();
    while worker.running() && started.elapsed() < DEADLINE + Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ended = Utc::now();
    assert!(
        !worker.running(),
        "the worker did not end (the crawl hung)\n{}",
        worker.tail()
    );
    let success = worker.child.wait().map(|s| s.success()).unwrap_or(false);
    assert!(success, "the worker did not end well:\n{}", worker.tail());
    let (fetches, bad) = read_log(0, &worker.log);
    assert!(bad.is_empty(), "unreadable fetch log: {bad:?}");
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for fetch in &fetches {
        *seen.entry(fetch.url.as_str()).or_default() += 1;
    }
    let reachable = site.expected().reachable_in_scope_urls();
    let never: Vec<&String> = reachable
        .iter()
        .filter(|url| !seen.contains_key(url.as_str()))
        .collect();
    let twice: Vec<(&&str, &usize)> = seen.iter().filter(|(_, n)| **n > 1).collect();
    let last = fetches.iter().map(|f| f.finished).max();
    eprintln!(
        "{} fetches of {} reachable URLs in {:.1} s; the worker ended {:.1} s after its last fetch",
        fetches.len(),
        reachable.len(),
        started.elapsed().as_secs_f64(),
        last.map_or(f64::NAN, |l| (ended - l).num_milliseconds() as f64 / 1000.0)
    );
    assert!(never.is_empty(), "never fetched: {never:?}");
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    site.shutdown().await;
}
