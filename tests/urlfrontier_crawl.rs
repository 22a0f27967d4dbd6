//! Two crawl processes (the example binary, `--frontier urlfrontier`) crawl the generated
//! multi-host site from one squall URLFrontier server, which keeps its frontier in the queue
//! frontier on the real node.
//!
//! Checked from the processes' fetch logs and the site's own request log (each process has its own
//! User-Agent): every reachable URL fetched exactly once; no host fetched by the two processes at
//! once, nor closer than the politeness delay; both processes ending by themselves once the whole
//! frontier is idle; every URL of the site with its expected status (FETCHED,
//! REDIRECTION, FETCH_ERROR, ERROR for robots-denied) in the server's frontier. No timed assertion: the
//! deadline only keeps a broken crawl from hanging the suite.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use squall::config::ConfigBuilder;
use squall::frontier::UrlQuery;
use squall::model::Status;
use squall_testsite::{ExpectedStatus, Site, SiteSpec};

use crate::support;
use support::binary::{set_args, site_args};
use support::crawl_process::CrawlProcess;
use support::fetch_log::{Fetch, by_host, politeness_problem, read_log};
use support::opensearch;

/// The politeness delay, in the workers and between two holders of a queue at the server.
const DELAY: Duration = Duration::from_millis(200);
/// Only against hangs.
const DEADLINE: Duration = Duration::from_secs(240);
const WORKERS: usize = 2;
/// What one worker may hold: a hungry worker asks again the moment its fetcher runs dry, an idle
/// one every `spout.min.delay.queries`, so a worker that came up first could take every queue the
/// moment it frees (a CI run saw [172, 0]). A worker holds at most `PENDING` URLs in flight and
/// `PENDING` buffered, at most `PER_QUEUE` of a queue per answer: once the site's `HOSTS` have
/// their pages due, it holds at most 4 of the 8 queues, and the other worker finds one free.
const PENDING: usize = 10;
const PER_QUEUE: usize = 5;
const HOSTS: usize = 8;

fn agent(p: usize) -> String {
    format!("squall-worker-{p}")
}

fn worker(index: usize, dir: &std::path::Path, server: &str, site: &Site) -> CrawlProcess {
    let mut args: Vec<String> = [
        "--frontier",
        "urlfrontier",
        "--frontier-url",
        server,
        "--until-idle",
        "--max-duration",
        &DEADLINE.as_secs().to_string(),
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(set_args(&[
        &format!("http.agent.name={}", agent(index)),
        &format!("fetcher.server.delay={}", DELAY.as_secs_f64()),
        "spout.min.delay.queries=200",
        "urlfrontier.delay.requestable=60",
        &format!("topology.max.spout.pending={PENDING}"),
        &format!("urlfrontier.max.urls.per.bucket={PER_QUEUE}"),
        "urlfrontier.max.buckets=2",
        &SiteSpec::exclude_outside_hosts(),
    ]));
    args.extend(site_args(site));
    CrawlProcess::start(index, dir, &args, &[])
}

async fn start_server(urls: &str, queues: &str) -> squall_urlfrontier::server::RunningServer {
    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.kind", "opensearch"))
        .and_then(|b| b.set_text("es.status.addresses", &opensearch::base_url()))
        .and_then(|b| b.set_text("es.status.spout", "queue"))
        .and_then(|b| b.set_text("es.status.index.name", urls))
        .and_then(|b| b.set_text("es.queues.index.name", queues))
        .and_then(|b| b.set(&format!("fetcher.server.delay={}", DELAY.as_secs_f64())))
        .and_then(|b| b.set("spout.min.delay.queries=200"))
        .and_then(ConfigBuilder::build)
        .expect("server config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    squall_urlfrontier::server::start(config, listener)
        .await
        .expect("the server starts on the queue frontier")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_one_frontier_server_politely_and_fetch_every_url_once() {
    let engine = opensearch::client().await;
    let site = Site::start(SiteSpec {
        hosts: HOSTS,
        pages_per_host: 20,
        ..SiteSpec::default()
    })
    .await
    .expect("site");
    let urls = opensearch::unique_index("uf-urls");
    let queues = opensearch::unique_index("uf-queues");
    let server = start_server(&urls, &queues).await;
    let address = server.addr().to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut workers: Vec<CrawlProcess> = (0..WORKERS)
        .map(|p| worker(p, dir.path(), &address, &site))
        .collect();
    let started = Instant::now();
    let mut hung = Vec::new();
    for w in workers.iter_mut() {
        while w.running() {
            if started.elapsed() > DEADLINE + Duration::from_secs(30) {
                hung.push(w.index);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let tails: String = workers
        .iter()
        .map(CrawlProcess::tail)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        hung.is_empty(),
        "workers {hung:?} did not end (the crawl hung)\n{tails}"
    );
    let mut fetches = Vec::new();
    let mut problems = Vec::new();
    let mut per_worker = Vec::new();
    for w in workers.iter_mut() {
        let success = w.child.wait().map(|s| s.success()).unwrap_or(false);
        if !success {
            problems.push(format!(
                "worker {} did not end well:\n{}",
                w.index,
                w.tail()
            ));
        }
        let (entries, bad) = read_log(w.index, &w.log);
        per_worker.push(entries.len());
        fetches.extend(entries);
        problems.extend(bad);
    }
    let expected = site.expected();
    let reachable = expected.reachable_in_scope_urls();
    problems.extend(check_exactly_once(&fetches, &reachable));
    problems.extend(check_politeness(&fetches));
    let requests = site.requests();
    problems.extend(support::site_politeness::problems(
        &requests,
        "squall-worker-",
        DELAY,
    ));
    problems.extend(expected.check_requests(&requests));
    let crawl = server
        .crawls()
        .get("DEFAULT")
        .await
        .expect("the default crawl");
    for (url, expected_status) in expected.statuses() {
        let wanted = match expected_status {
            ExpectedStatus::Fetched => Status::Fetched,
            ExpectedStatus::Redirection => Status::Redirection,
            ExpectedStatus::FetchError => Status::FetchError,
            ExpectedStatus::RobotsDenied => Status::Error,
        };
        match crawl.catalog().lookup(url).await {
            Ok(Some(stored)) if stored.status == wanted => {}
            other => problems.push(format!(
                "{url} in the server's frontier, not {wanted}: {other:?}"
            )),
        }
    }
    let held = crawl
        .catalog()
        .count(&UrlQuery::default())
        .await
        .expect("count");
    eprintln!(
        "crawl over after {:.1} s: fetches per worker {per_worker:?}, {} fetches, {} reachable URLs, {held} URLs in the frontier",
        started.elapsed().as_secs_f64(),
        fetches.len(),
        reachable.len()
    );
    if per_worker.contains(&0) {
        problems.push(format!("a worker fetched nothing: {per_worker:?}"));
    }
    server.shutdown().await;
    for index in [urls.clone(), queues.clone(), format!("{queues}-workers")] {
        opensearch::delete_index(&engine, &index).await;
    }
    site.shutdown().await;
    if !problems.is_empty() {
        let kept = dir.keep();
        panic!(
            "{} problems (logs kept in {}):\n{}",
            problems.len(),
            kept.display(),
            problems.join("\n")
        );
    }
}

/// Every reachable URL in exactly one fetch, across the workers.
fn check_exactly_once(fetches: &[Fetch], reachable: &BTreeSet<String>) -> Vec<String> {
    let mut seen: BTreeMap<&str, Vec<&Fetch>> = BTreeMap::new();
    for fetch in fetches {
        seen.entry(fetch.url.as_str()).or_default().push(fetch);
    }
    let mut problems = Vec::new();
    for url in reachable {
        match seen.get(url.as_str()).map(Vec::len) {
            Some(1) => {}
            None => problems.push(format!("{url} was never fetched")),
            Some(n) => problems.push(format!("{url} was fetched {n} times")),
        }
    }
    problems
}

/// Fetches of one host by two workers neither overlap nor start closer than the delay.
fn check_politeness(fetches: &[Fetch]) -> Vec<String> {
    let mut problems = Vec::new();
    for (host, list) in by_host(fetches) {
        for pair in list.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.process == b.process {
                continue;
            }
            let at_once = b.started < a.finished;
            let gap = (b.started - a.finished).to_std().unwrap_or_default();
            if at_once || gap < DELAY {
                problems.push(politeness_problem(host, at_once, a, b));
            }
        }
    }
    problems
}
