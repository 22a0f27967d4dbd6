//! `squall-frontier` as a process, met by clients that mean it harm or push it: a PutURLs item
//! over the message size limit, floods of connections that send nothing on each of its listeners
//! (the gRPC port, the status page, the metrics endpoint) under a low descriptor limit, and one
//! stream of 40,000 URLs. Each time the server answers or closes, keeps its descriptors bounded,
//! serves a real client right after, and still stops on SIGTERM.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use squall_testsite::flood::silent_connections_watching;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{DiscoveredUrlItem, QueueWithinCrawlParams, UrlInfo, UrlItem};
use tonic::transport::Channel;

use crate::support::process;

use process::{listening_address, server_binary};

/// The server's descriptor limit in these tests: under the three listeners' caps together
/// (256 + 64 + 64) with room for the frontier, yet low enough that a flood held open would reach it.
const DESCRIPTOR_LIMIT: usize = 512;
/// The handshake timeout the server is started with.
const HANDSHAKE: Duration = Duration::from_secs(2);

struct Server {
    child: Child,
    addr: String,
    status: SocketAddr,
    metrics: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> SocketAddr {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    socket.local_addr().expect("its address")
}

/// Starts the server under a descriptor limit of [`DESCRIPTOR_LIMIT`], with a status page and
/// a metrics endpoint.
fn start() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let (status, metrics) = (free_port(), free_port());
    let binary = server_binary();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {DESCRIPTOR_LIMIT} && exec \"$0\" \"$@\""
        ))
        .arg(binary)
        .args(["--listen", "127.0.0.1:0", "--frontier-path"])
        .arg(dir.path().join("frontier"))
        .args(["--handshake-timeout", &HANDSHAKE.as_secs().to_string()])
        .args(["--status-addr", &status.to_string()])
        .args(["--metrics-addr", &metrics.to_string()])
        .stdout(Stdio::piped())
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start squall-frontier");
    let addr = listening_address(&mut child);
    Server {
        child,
        addr,
        status,
        metrics,
        _dir: dir,
    }
}

async fn connect(addr: &str) -> UrlFrontierClient<Channel> {
    UrlFrontierClient::connect(format!("http://{addr}"))
        .await
        .expect("connect")
}

async fn stats(client: &mut UrlFrontierClient<Channel>) -> u64 {
    let params = QueueWithinCrawlParams {
        key: String::new(),
        crawl_id: "DEFAULT".to_string(),
        local: false,
    };
    let stats = tokio::time::timeout(Duration::from_secs(20), client.get_stats(params))
        .await
        .expect("GetStats answered")
        .expect("GetStats");
    stats.into_inner().size
}

fn discovered(url: String) -> UrlItem {
    let info = UrlInfo {
        url,
        key: String::new(),
        metadata: Default::default(),
        crawl_id: String::new(),
    };
    UrlItem {
        creation_date: 0,
        id: String::new(),
        item: Some(Item::Discovered(DiscoveredUrlItem { info: Some(info) })),
    }
}

/// Sends SIGTERM and waits (up to a minute) for the process to end.
fn stop_gracefully(server: &mut Server) {
    let pid = server.child.id().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(sent.is_ok_and(|status| status.success()), "kill -TERM");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if server.child.try_wait().expect("wait").is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server did not stop within a minute of SIGTERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_over_the_size_limit_ends_its_call_with_an_error_and_the_server_goes_on() {
    let mut server = start();
    let mut client = connect(&server.addr).await;
    let huge = format!("http://big.test/{}", "a".repeat(5 << 20));
    let items = vec![discovered("http://small.test/1".into()), discovered(huge)];
    let call = async {
        let mut acks = client
            .put_ur_ls(futures::stream::iter(items))
            .await?
            .into_inner();
        while acks.message().await?.is_some() {}
        Ok::<(), tonic::Status>(())
    };
    let answer = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call was answered");
    let status = answer.expect_err("the call ends with an error");
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert!(status.message().contains("PutURLs ended"), "{status:?}");

    // The server goes on: it answers, a real put is acked, and SIGTERM still stops it.
    let mut again = connect(&server.addr).await;
    let acks = again
        .put_ur_ls(futures::stream::iter(vec![discovered(
            "http://small.test/2".into(),
        )]))
        .await
        .expect("PutURLs")
        .into_inner();
    let acked: Vec<_> = futures::StreamExt::collect::<Vec<_>>(acks).await;
    assert_eq!(acked.len(), 1, "{acked:?}");
    assert!(stats(&mut again).await >= 1);
    stop_gracefully(&mut server);
}

/// Floods `target` with 1,000 silent connections while sampling the server's descriptors; every
/// connection must be closed within the handshake timeout (and a margin for a busy machine).
async fn flood(server: &Server, target: SocketAddr) {
    let pid = server.child.id();
    let outcome =
        silent_connections_watching(target, 1000, HANDSHAKE + Duration::from_secs(10), pid).await;
    assert_eq!(outcome.opened, 1000, "{target}: {outcome:?}");
    assert_eq!(
        outcome.closed, 1000,
        "{target}: some stayed open: {outcome:?}"
    );
    let peak = outcome.peak_descriptors;
    assert!(peak > 0, "the server's descriptors were never read");
    assert!(peak < DESCRIPTOR_LIMIT, "{target}: {peak} descriptors held");
}

async fn http_get(addr: SocketAddr, path: &str) -> String {
    let response = reqwest::get(format!("http://{addr}{path}"))
        .await
        .expect("GET");
    assert!(
        response.status().is_success(),
        "{path}: {}",
        response.status()
    );
    response.text().await.expect("body")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_on_every_listener_and_real_clients_are_served() {
    let mut server = start();
    let grpc: SocketAddr = server.addr.parse().expect("address");

    flood(&server, grpc).await;
    let mut client = connect(&server.addr).await;
    assert_eq!(stats(&mut client).await, 0);

    flood(&server, server.status).await;
    assert!(
        http_get(server.status, "/status.json")
            .await
            .starts_with('{')
    );

    flood(&server, server.metrics).await;
    http_get(server.metrics, "/metrics").await;

    // A client that stays connected, quiet, longer than the handshake timeout is not cut off.
    tokio::time::sleep(HANDSHAKE * 2).await;
    assert_eq!(stats(&mut client).await, 0);
    stop_gracefully(&mut server);
}

/// A request for the status page through another site's host name (DNS rebinding) is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_answers_only_for_its_address() {
    let server = start();
    let client = reqwest::Client::new();
    let response = client
        .get(format!("http://{}/status.json", server.status))
        .header("host", "attacker.example")
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status().as_u16(), 421);
    http_get(server.status, "/status.json").await;
}

/// One PutURLs stream of 40,000 URLs, sent as fast as the client can while the acks are read as
/// they come: every URL is acked OK, none lost to HTTP/2 flow control.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_40000_urls_is_acked_in_full() {
    let server = start();
    let mut client = connect(&server.addr).await;
    let items = (0..40_000).map(|i| discovered(format!("http://h{}.test/page/{i}", i % 97)));
    let mut acks = client
        .put_ur_ls(futures::stream::iter(items))
        .await
        .expect("PutURLs")
        .into_inner();
    let mut ok = 0;
    let read = async {
        while let Some(ack) = acks.message().await.expect("acks") {
            assert_eq!(ack.status, 0, "{ack:?}");
            ok += 1;
        }
    };
    tokio::time::timeout(Duration::from_secs(300), read)
        .await
        .expect("every ack within five minutes");
    assert_eq!(ok, 40_000);
}
