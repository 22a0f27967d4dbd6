//! The crawler's live status page (`--status-addr`), read in a real headless Chromium while the
//! crawl binary crawls its demo site: what the page draws is what `/status.json` says, it changes
//! as the crawl goes on, and it asks nothing of any other server. A screenshot is saved to
//! `target/test-output/status-page.png`.

use std::time::{Duration, Instant};

use crate::support;
use support::binary::queue_frontier_args;
use support::opensearch;

use support::crawl_process::CrawlProcess;
use support::status_page::{Chromium, OpenPage, assert_drawn, figure, screenshot_path, table_rows};

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// Starts the crawl binary on its demo site with the status page on a port of its choosing, and
/// returns it with the page's URL (from the line it prints); `frontier` are the arguments that
/// choose the frontier.
fn start_demo_crawl(dir: &std::path::Path, frontier: &[String]) -> (CrawlProcess, String) {
    let mut args: Vec<String> = [
        "--demo-site",
        "--demo-port",
        &free_port().to_string(),
        "--status-addr",
        "127.0.0.1:0",
        "--frontier-path",
        &dir.join("frontier").display().to_string(),
        "--max-duration",
        "120",
    ]
    .map(str::to_string)
    .to_vec();
    args.extend_from_slice(frontier);
    let mut crawl = CrawlProcess::start(0, dir, &args, &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, stderr) = crawl.output();
        if let Some(url) = stderr
            .lines()
            .find_map(|line| line.strip_prefix("status page: "))
        {
            return (crawl, url.trim().to_string());
        }
        assert!(crawl.running(), "the crawl ended early:\n{}", crawl.tail());
        assert!(
            Instant::now() < deadline,
            "no status page line:\n{}",
            crawl.tail()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_draws_the_crawl_as_its_json_says_and_follows_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut crawl, base) = start_demo_crawl(dir.path(), &[]);
    let http = reqwest::Client::new();
    let chromium = Chromium::launch().await;
    let page = OpenPage::open(&chromium, &base).await;

    // Let the crawl fetch a little (past the charts' first 5 s step), then read the page and the
    // JSON of one document.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (drawn, first) = page.matched_reading(&http).await;
    assert_drawn(&drawn, &first);
    let pages = figure(&first, "pages");
    assert!(pages > 0.0, "the demo crawl fetched pages: {first}");
    for table in [
        "stages",
        "frontier",
        "busiest_hosts",
        "slowest_hosts",
        "errors",
    ] {
        let rows = table_rows(&first, table).len();
        assert!(
            rows > 0,
            "table {table} has rows (the demo site has slow and failing pages)"
        );
    }

    // A step on, the page shows a later document, with more pages and longer lines.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let (drawn, later) = page.matched_reading(&http).await;
    assert_drawn(&drawn, &later);
    assert!(later["sequence"].as_f64() > first["sequence"].as_f64());
    assert!(
        figure(&later, "pages") > pages,
        "pages went from {pages} to {}",
        figure(&later, "pages")
    );
    let fetched_points = |json: &serde_json::Value| {
        let charts = json["charts"].as_array().expect("charts");
        let urls = charts
            .iter()
            .find(|c| c["id"] == "urls")
            .expect("the urls chart");
        let series = urls["series"].as_array().expect("series");
        let fetched = series
            .iter()
            .find(|s| s["id"] == "fetched")
            .expect("fetched");
        fetched["values"].as_array().map_or(0, Vec::len)
    };
    assert!(
        fetched_points(&later) > fetched_points(&first),
        "the chart grew"
    );

    let shot = screenshot_path("status-page.png");
    page.screenshot(&shot).await;
    let size = std::fs::metadata(&shot).map_or(0, |m| m.len());
    assert!(
        size > 20_000,
        "a screenshot of the page: {} ({size} bytes)",
        shot.display()
    );
    println!("screenshot: {}", shot.display());

    assert_eq!(
        page.foreign_requests(),
        Vec::<String>::new(),
        "the page asks only its own server"
    );
    crawl.kill();
}

/// Starts a URLFrontier server in this process on an embedded frontier of `dir`, with its status
/// page on a port of its choosing.
async fn start_frontier_server(dir: &std::path::Path) -> squall_urlfrontier::server::RunningServer {
    let config = squall::config::ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.path", &dir.join("served").display().to_string()))
        .and_then(squall::config::ConfigBuilder::build)
        .expect("server config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let options = squall_urlfrontier::server::ServerOptions {
        status_addr: Some("127.0.0.1:0".parse().expect("address")),
        ..Default::default()
    };
    squall_urlfrontier::server::start_with(config, listener, options)
        .await
        .expect("the server starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn squall_frontiers_status_page_draws_its_crawls_calls_and_workers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_frontier_server(dir.path()).await;
    let base = server.status_url().expect("a status page");
    // A worker: the crawl binary crawling its demo site from the server.
    let args: Vec<String> = [
        "--demo-site",
        "--demo-port",
        &free_port().to_string(),
        "--frontier",
        "urlfrontier",
        "--frontier-url",
        &server.addr().to_string(),
        "--max-duration",
        "120",
    ]
    .map(str::to_string)
    .to_vec();
    let mut worker = CrawlProcess::start(0, dir.path(), &args, &[]);
    let http = reqwest::Client::new();
    let chromium = Chromium::launch().await;
    let page = OpenPage::open(&chromium, &base).await;

    // Wait until the worker has made each kind of call (seeds and outlinks on PutDiscovered,
    // fetches on GetURLs, their outcomes on PutURLs) and its URLs are counted, then compare page
    // and JSON. The outcomes come a fetch after the first GetURLs, so a reading that only waited
    // for the worker and its URLs could come before them.
    let deadline = Instant::now() + Duration::from_secs(60);
    let kinds = |json: &serde_json::Value| -> Vec<String> {
        table_rows(json, "calls")
            .iter()
            .filter_map(|row| row["kind"].as_str().map(str::to_string))
            .collect()
    };
    let worker_kinds = ["PutDiscovered", "GetURLs", "PutURLs"];
    let (drawn, first) = loop {
        let (drawn, json) = page.matched_reading(&http).await;
        let called = kinds(&json);
        let all_called = worker_kinds
            .iter()
            .all(|kind| called.iter().any(|k| k == kind));
        if figure(&json, "workers") >= 1.0 && figure(&json, "urls") > 0.0 && all_called {
            break (drawn, json);
        }
        assert!(
            worker.running(),
            "the worker ended early:\n{}",
            worker.tail()
        );
        assert!(
            Instant::now() < deadline,
            "no worker, URL or call of each kind ({worker_kinds:?}) shown: {json}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_drawn(&drawn, &first);
    let rows = table_rows;
    assert_eq!(rows(&first, "crawls")[0]["crawl"], "DEFAULT");

    tokio::time::sleep(Duration::from_secs(4)).await;
    let (drawn, later) = page.matched_reading(&http).await;
    assert_drawn(&drawn, &later);
    let calls = |json: &serde_json::Value| -> f64 {
        rows(json, "calls")
            .iter()
            .filter_map(|row| row["total"].as_f64())
            .sum()
    };
    assert!(
        calls(&later) > calls(&first),
        "calls went on: {} then {}",
        calls(&first),
        calls(&later)
    );

    let shot = screenshot_path("squall-frontier-status-page.png");
    page.screenshot(&shot).await;
    assert!(
        std::fs::metadata(&shot).map_or(0, |m| m.len()) > 20_000,
        "{}",
        shot.display()
    );
    println!("screenshot: {}", shot.display());
    assert_eq!(
        page.foreign_requests(),
        Vec::<String>::new(),
        "the page asks only its own server"
    );
    worker.kill();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_queue_frontier_the_page_lists_the_leases_this_process_holds() {
    let client = opensearch::client().await;
    let urls = opensearch::unique_index("page-urls");
    let queues = opensearch::unique_index("page-queues");
    let frontier =
        queue_frontier_args(&opensearch::base_url(), &urls, &queues, (1, 0), "page-test");
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut crawl, base) = start_demo_crawl(dir.path(), &frontier);
    let http = reqwest::Client::new();
    let chromium = Chromium::launch().await;
    let page = OpenPage::open(&chromium, &base).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let (drawn, json) = loop {
        let (drawn, json) = page.matched_reading(&http).await;
        let held = table_rows(&json, "leases").len();
        if held > 0 {
            break (drawn, json);
        }
        assert!(crawl.running(), "the crawl ended early:\n{}", crawl.tail());
        assert!(Instant::now() < deadline, "no lease shown: {json}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_drawn(&drawn, &json);
    for row in table_rows(&json, "leases") {
        let left = row["expires_in_s"].as_f64().expect("seconds left");
        assert!(
            left > 0.0 && left <= 60.0,
            "a lease of the default 60 s ttl: {row}"
        );
        assert!(
            row["queue"].as_str().is_some_and(|q| q.ends_with(".test")),
            "{row}"
        );
    }
    crawl.kill();
    opensearch::delete_index(&client, &urls).await;
    opensearch::delete_index(&client, &queues).await;
}
