//! The link checker (`examples/link_checker.rs`) as a worker of crawler-commons' reference
//! URLFrontier service (RocksDB), built from its source by `scripts/urlfrontier-reference`
//! (skipped, saying why, where it cannot be built): links fed by the reference's own client CLI,
//! checked once each with `--until-idle`, the worker ending by itself from what the API says, and
//! every link back in the reference's frontier due again a day later, as its CLI lists them.

#[path = "support/reference.rs"]
mod reference;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    if let Err(why) = reference::build() {
        eprintln!("SKIPPED: the reference URLFrontier cannot be built here: {why}");
        return;
    }
    let binary = link_checker_binary();
    assert!(
        binary.exists(),
        "{} is missing: `cargo test -p squall-urlfrontier` builds it",
        binary.display()
    );
    let base = site().await;
    let links: Vec<String> = (0..4)
        .flat_map(|i| [format!("{base}/ok?n={i}"), format!("{base}/missing?n={i}")])
        .collect();
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

    let report = dir.path().join("report.jsonl");
    let mut worker = Command::new(&binary)
        .args(["--frontier", &format!("127.0.0.1:{}", service.port)])
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

    let listed = reference::cli(service.port, &["ListURLs"]);
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let now = chrono::Utc::now().timestamp();
    for link in &links {
        let due = listed
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{link};")))
            .and_then(|date| date.parse::<i64>().ok())
            .unwrap_or_else(|| panic!("{link} not listed by the reference:\n{listed}"));
        assert!(
            due > now + 23 * 3600,
            "{link} due at {due}, not a day after its check ({now})"
        );
    }
}
