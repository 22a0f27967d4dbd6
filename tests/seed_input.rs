//! Seeds as users give them to the crawl binary: files with a byte-order mark, `--resolve` with a
//! host name in another script, URLs too long to be pages; and a seed file larger than one batch
//! of the streaming injection. Every site is a loopback server that records what it was asked.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;
use axum::response::Response;

use crate::support;
use squall::frontier::{Catalog, UrlQuery};
use support::binary::crawl_binary;
use support::http::{html, serve};

/// The requests a site received: each one's `Host` header and path with query.
type Requests = Arc<Mutex<Vec<(String, String)>>>;

/// A site that records every request and answers each with `page` (an HTML body).
async fn recording_site(page: String) -> (std::net::SocketAddr, Requests) {
    let requests: Requests = Arc::default();
    let seen = Arc::clone(&requests);
    let app = Router::new().fallback(move |request: Request| {
        let seen = Arc::clone(&seen);
        let page = page.clone();
        async move {
            let host = request
                .headers()
                .get("host")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let target = request.uri().path_and_query().map(|p| p.to_string());
            if let Ok(mut seen) = seen.lock() {
                seen.push((host, target.unwrap_or_default()));
            }
            let answer: Response = html(page);
            answer
        }
    });
    (serve(app).await, requests)
}

fn targets(requests: &Requests) -> Vec<String> {
    let seen = requests.lock().expect("requests");
    seen.iter().map(|(_, target)| target.clone()).collect()
}

/// Runs the crawl binary to its end, with a fresh frontier in `dir`, `args` after the usual ones.
fn crawl(dir: &Path, args: &[String]) -> Output {
    Command::new(crawl_binary())
        .arg("--frontier-path")
        .arg(dir.join("frontier"))
        .args(["--set", "http.agent.name=squall-test", "--until-idle"])
        .args(["--set", "fetcher.server.delay=0.02"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the crawl binary")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeds_file_starting_with_a_byte_order_mark_loses_no_seed() {
    let (addr, requests) = recording_site("no links".to_string()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let seeds = dir.path().join("seeds.txt");
    let base = format!("http://bom.test:{}", addr.port());
    std::fs::write(&seeds, format!("\u{feff}{base}/first\r\n{base}/second\r\n")).expect("write");
    let args = [
        "--resolve".to_string(),
        format!("bom.test:{}", addr.ip()),
        "--seeds".to_string(),
        seeds.display().to_string(),
    ];
    let output = tokio::task::block_in_place(|| crawl(dir.path(), &args));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("skipping seed"), "{stderr}");
    let fetched = targets(&requests);
    for path in ["/first", "/second"] {
        assert!(fetched.iter().any(|t| t == path), "{path}: {fetched:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_takes_a_host_name_in_another_script_in_its_idna_form() {
    let (addr, requests) = recording_site("no links".to_string()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "--resolve".to_string(),
        format!("Bücher.test:{}", addr.ip()),
        format!("http://bücher.test:{}/", addr.port()),
    ];
    let output = tokio::task::block_in_place(|| crawl(dir.path(), &args));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let seen = requests.lock().expect("requests").clone();
    let host = format!("xn--bcher-kva.test:{}", addr.port());
    assert!(
        seen.contains(&(host, "/".to_string())),
        "{seen:?}\n{stderr}"
    );

    let output = crawl(
        dir.path(),
        &["--resolve".to_string(), "a b.test:127.0.0.1".to_string()],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a valid host name"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_long_seeds_are_refused_by_name_and_over_long_links_dropped() {
    let long_link = format!("/long?{}", "q".repeat(200_000));
    let page = format!("<a href=\"{long_link}\">long</a> <a href=\"/short\">short</a>");
    let (addr, requests) = recording_site(page).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let base = format!("http://long.test:{}", addr.port());
    let seeds = dir.path().join("seeds.txt");
    let long_seed = format!("{base}/{}", "s".repeat(3000));
    std::fs::write(&seeds, format!("{long_seed}\n{base}/\n")).expect("write");
    let args = [
        "--resolve".to_string(),
        format!("long.test:{}", addr.ip()),
        "--seeds".to_string(),
        seeds.display().to_string(),
        format!("{base}/{}", "a".repeat(50_000)),
    ];
    let output = tokio::task::block_in_place(|| crawl(dir.path(), &args));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let refusals: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("over urlfilter.max.length (2048 bytes)"))
        .collect();
    assert_eq!(refusals.len(), 2, "{stderr}");
    assert!(
        refusals.iter().all(|line| line.len() < 600),
        "a refusal shows the seed's start only: {refusals:?}"
    );
    let fetched = targets(&requests);
    assert!(fetched.iter().any(|t| t == "/short"), "{fetched:?}");
    assert!(
        fetched.iter().all(|t| t.len() <= 2048),
        "an over-long URL was fetched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeds_file_larger_than_one_batch_is_injected_whole() {
    let config = support::crawler::config(&["http.agent.name=squall-test"]);
    let (builder, frontier, dir) = support::crawler::embedded(config);
    let crawler = builder.build().expect("crawler");
    let seeds = dir.path().join("seeds.txt");
    let lines: Vec<String> = (0..25_000)
        .map(|i| format!("http://h{}.test/page/{i}", i % 7))
        .collect();
    std::fs::write(&seeds, format!("\u{feff}{}\n", lines.join("\n"))).expect("write");
    let report = crawler.inject_file(&seeds).await.expect("read the file");
    assert_eq!(report.accepted, 25_000, "{:?}", report.rejected);
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let held = frontier.count(&UrlQuery::default()).await.expect("count");
    assert_eq!(held, 25_000);
    let missing = crawler
        .inject_file(&dir.path().join("missing.txt"))
        .await
        .expect_err("no such file");
    assert!(missing.to_string().contains("missing.txt"), "{missing}");
}
