//! The crawl binary's listeners (the demo site it serves, its status page, its metrics endpoint)
//! met by 1,000 connections that send nothing each, while it crawls under a descriptor limit of
//! 1,024: every one is closed within the handshake timeout, the process's descriptors stay under
//! the limit, each listener serves a real client right after, and the crawl goes on.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use squall_testsite::flood::silent_connections_watching;

use crate::support;
use support::binary::{crawl_binary, lines, set_args};

const DESCRIPTOR_LIMIT: usize = 1024;
/// The listeners' handshake timeout (squall's default), and a margin for a busy machine.
const HANDSHAKE: Duration = Duration::from_secs(10);
const MARGIN: Duration = Duration::from_secs(10);

struct Crawl(Child);

impl Drop for Crawl {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> SocketAddr {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    socket.local_addr().expect("its address")
}

/// Floods `target` while sampling the crawl's descriptors.
async fn flood(pid: u32, target: SocketAddr) {
    let outcome = silent_connections_watching(target, 1000, HANDSHAKE + MARGIN, pid).await;
    assert_eq!(outcome.opened, 1000, "{target}: {outcome:?}");
    assert_eq!(
        outcome.closed, 1000,
        "{target}: some stayed open: {outcome:?}"
    );
    let peak = outcome.peak_descriptors;
    assert!(
        peak > 0 && peak < DESCRIPTOR_LIMIT,
        "{target}: {peak} descriptors"
    );
}

async fn get(url: String) -> reqwest::Response {
    let response = reqwest::get(&url).await.expect("GET");
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_on_every_listener_of_a_crawl_are_closed_and_it_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fetch_log = dir.path().join("fetch.jsonl");
    let (demo, status, metrics) = (free_port(), free_port(), free_port());
    let mut args = vec![
        "--demo-site".to_string(),
        "--demo-port".to_string(),
        demo.port().to_string(),
        "--status-addr".to_string(),
        status.to_string(),
        "--metrics-addr".to_string(),
        metrics.to_string(),
        "--frontier-path".to_string(),
        dir.path().join("frontier").display().to_string(),
        "--fetch-log".to_string(),
        fetch_log.display().to_string(),
    ];
    // Slow enough that the crawl outlasts the floods.
    args.extend(set_args(&["fetcher.server.delay=3"]));
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {DESCRIPTOR_LIMIT} && exec \"$0\" \"$@\""
        ))
        .arg(crawl_binary())
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the crawl");
    let crawl = Crawl(child);
    let started = Instant::now();
    while lines(&fetch_log) == 0 {
        assert!(started.elapsed() < Duration::from_secs(60), "no fetch");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = crawl.0.id();

    flood(pid, demo).await;
    // The demo site answers by host name; any answer to its bare address shows it serves.
    let answer = reqwest::get(format!("http://{demo}/"))
        .await
        .expect("served");
    assert!(answer.status().as_u16() < 500, "{}", answer.status());
    flood(pid, status).await;
    get(format!("http://{status}/status.json")).await;
    flood(pid, metrics).await;
    get(format!("http://{metrics}/metrics")).await;

    // The crawl went on through the floods.
    let fetched = lines(&fetch_log);
    let waited = Instant::now();
    while lines(&fetch_log) == fetched {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the crawl stopped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
