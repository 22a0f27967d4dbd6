//! The link checker (`examples/link_checker.rs`) as a worker of a URLFrontier server that is not
//! squall's: links fed to it, checked once each with `--until-idle`, the worker ending by itself
//! from what the API says (no `squall.idle` count), and every link back in the frontier due again a
//! day later.
//!
//! Two such servers: crawler-commons' reference service (RocksDB), run from the jars
//! `URLFRONTIER_REFERENCE_SERVICE_JAR` and `URLFRONTIER_REFERENCE_CLIENT_JAR` name (built by hand;
//! skipped, saying why, when they are not set), fed and listed by its own client CLI; and squall's
//! server with its own counts left out of GetStats (`ServerOptions::reference_stats`), fed and
//! listed over gRPC, which CI always runs.

use crate::support::reference;

use std::collections::{BTreeMap, HashMap};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{DiscoveredUrlItem, ListUrlParams, UrlInfo, UrlItem};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;

const DEADLINE: Duration = Duration::from_secs(120);

/// A site on loopback: `/ok` answers 200, `/missing` 404. Returns its base URL.
async fn site() -> String {
    let app = Router::new()
        .route("/ok", get(|| async { "fine" }))
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

fn link_checker_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let target = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("target directory");
    target
        .join("examples")
        .join(format!("link_checker{}", std::env::consts::EXE_SUFFIX))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_checker_checks_every_link_of_the_reference_service_once_and_ends() {
    if let Err(why) = reference::locate() {
        eprintln!("SKIPPED: the reference URLFrontier is not at hand: {why}");
        return;
    }
    let links = links(&site().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let service = reference::start_reference(&dir.path().join("rocksdb"));
    let seeds = dir.path().join("links.txt");
    std::fs::write(&seeds, links.join("\n") + "\n").expect("write the links");
    let fed = reference::cli(
        service.port,
        &["PutURLs", "-f", &seeds.display().to_string()],
    );
    let fed = String::from_utf8_lossy(&fed.stdout).to_string();
    assert!(fed.contains(&format!("OK: {}", links.len())), "{fed}");

    check_once(&format!("127.0.0.1:{}", service.port), dir.path(), &links).await;

    let listed = reference::cli(service.port, &["ListURLs"]);
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let due: BTreeMap<String, i64> = links
        .iter()
        .map(|link| {
            let date = listed
                .lines()
                .find_map(|line| line.strip_prefix(&format!("{link};")))
                .and_then(|date| date.parse::<i64>().ok())
                .unwrap_or_else(|| panic!("{link} not listed by the reference:\n{listed}"));
            (link.clone(), date)
        })
        .collect();
    check_due_a_day_later(&due);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_checker_checks_every_link_once_and_ends_on_a_server_without_squall_counts() {
    let links = links(&site().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let server = reference::start_without_squall_counts(dir.path(), &[]).await;
    let address = server.addr().to_string();
    let mut client = UrlFrontierClient::connect(format!("http://{address}"))
        .await
        .expect("connect");
    let items: Vec<UrlItem> = links.iter().map(|url| discovered(url)).collect();
    let acks = client.put_ur_ls(futures::stream::iter(items)).await;
    let acks: Vec<_> = acks
        .expect("PutURLs")
        .into_inner()
        .try_collect()
        .await
        .expect("acks");
    assert_eq!(acks.len(), links.len(), "one ack a link");

    check_once(&address, dir.path(), &links).await;

    let params = ListUrlParams {
        size: 1000,
        crawl_id: "DEFAULT".into(),
        ..Default::default()
    };
    let listed = client
        .list_ur_ls(params)
        .await
        .expect("ListURLs")
        .into_inner();
    let listed: Vec<UrlItem> = listed.try_collect().await.expect("the listing");
    let mut due = BTreeMap::new();
    for item in listed {
        if let Some(Item::Known(known)) = item.item {
            let url = known.info.map(|info| info.url).unwrap_or_default();
            due.insert(
                url,
                i64::try_from(known.refetchable_from_date).expect("a date"),
            );
        }
    }
    assert_eq!(
        due.len(),
        links.len(),
        "every link listed as known: {due:?}"
    );
    check_due_a_day_later(&due);
    server.shutdown().await;
}

/// Four links that answer 200 and four that answer 404, on the site at `base`.
fn links(base: &str) -> Vec<String> {
    (0..4)
        .flat_map(|i| [format!("{base}/ok?n={i}"), format!("{base}/missing?n={i}")])
        .collect()
}

/// A discovered link in the default crawl, its queue left to the server.
fn discovered(url: &str) -> UrlItem {
    UrlItem {
        creation_date: 0,
        id: url.to_string(),
        item: Some(Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url: url.to_string(),
                key: String::new(),
                metadata: HashMap::new(),
                crawl_id: "DEFAULT".into(),
            }),
        })),
    }
}

/// Runs the link checker against the server at `address` with `--until-idle` and checks that it
/// ended by itself, with success, having checked each of `links` once with the right outcome.
async fn check_once(address: &str, dir: &std::path::Path, links: &[String]) {
    let binary = link_checker_binary();
    assert!(
        binary.exists(),
        "{} is missing: `cargo test -p squall-urlfrontier` builds it",
        binary.display()
    );
    let report = dir.join("report.jsonl");
    let mut worker = Command::new(&binary)
        .args(["--frontier", address])
        .args(["--until-idle", "--batch", "3", "--report"])
        .arg(&report)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the link checker starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = worker.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = worker.kill();
            panic!("the link checker did not end within {DEADLINE:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.success(), "the link checker ended with {status}");
    let text = std::fs::read_to_string(&report).expect("the report");
    let mut checked: Vec<(String, bool)> = text
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            (
                value["url"].as_str().unwrap_or("").to_string(),
                value["ok"] == true,
            )
        })
        .collect();
    checked.sort();
    let mut expected: Vec<(String, bool)> = links
        .iter()
        .map(|l| (l.clone(), l.contains("/ok")))
        .collect();
    expected.sort();
    assert_eq!(
        checked, expected,
        "every link checked once, with its outcome"
    );
    eprintln!(
        "{} links checked in {:.1} s",
        checked.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Every link due again about a day after its check (`due`: seconds since 1970 by URL).
fn check_due_a_day_later(due: &BTreeMap<String, i64>) {
    let now = chrono::Utc::now().timestamp();
    for (link, date) in due {
        assert!(
            *date > now + 23 * 3600,
            "{link} due at {date}, not a day after its check ({now})"
        );
    }
}
