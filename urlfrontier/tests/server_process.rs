//! The `squall-frontier` binary as a process on an embedded frontier: stopped gracefully (SIGTERM)
//! or killed (SIGKILL) while clients hold URLs, it loses nothing. Every write it acked is there
//! after a restart, and the URLs handed out and not put back are handed out again.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    DiscoveredUrlItem, GetParams, KnownUrlItem, UrlInfo, UrlItem, UrlStatusRequest, get_params,
};
use tonic::transport::Channel;

use crate::support::process;

use process::{listening_address, server_binary};

/// Starts the server on `dir`, returning it and the address it printed.
fn start(dir: &Path) -> (Child, String) {
    let mut child = Command::new(server_binary())
        .args(["--listen", "127.0.0.1:0", "--frontier-path"])
        .arg(dir)
        .args([
            "--set",
            "fetcher.server.delay=0",
            "--set",
            "spout.min.delay.queries=50",
        ])
        .stdout(Stdio::piped())
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start squall-frontier");
    let addr = listening_address(&mut child);
    (child, addr)
}

async fn connect(addr: &str) -> UrlFrontierClient<Channel> {
    UrlFrontierClient::connect(format!("http://{addr}"))
        .await
        .expect("connect")
}

fn info(url: &str) -> UrlInfo {
    UrlInfo {
        url: url.to_string(),
        key: String::new(),
        metadata: Default::default(),
        crawl_id: String::new(),
    }
}

async fn put(client: &mut UrlFrontierClient<Channel>, items: Vec<UrlItem>) {
    let count = items.len();
    let mut acks = client
        .put_ur_ls(futures::stream::iter(items))
        .await
        .expect("PutURLs")
        .into_inner();
    let mut ok = 0;
    while let Some(ack) = acks.message().await.expect("acks") {
        assert_eq!(ack.status, 0, "ack {ack:?}");
        ok += 1;
    }
    assert_eq!(ok, count, "one OK ack per URL");
}

/// Asks until `want` URLs came (the server reads its frontier in the background).
async fn get(client: &mut UrlFrontierClient<Channel>, want: usize) -> BTreeSet<String> {
    let mut got = BTreeSet::new();
    for _ in 0..100 {
        let params = GetParams {
            max_urls_per_queue: 0,
            max_queues: 0,
            key: String::new(),
            delay_requestable: 600,
            item: Some(get_params::Item::CrawlId("DEFAULT".into())),
        };
        let mut stream = client
            .get_ur_ls(params)
            .await
            .expect("GetURLs")
            .into_inner();
        while let Some(info) = stream.message().await.expect("URLs") {
            assert!(
                got.insert(info.url.clone()),
                "{} handed out twice",
                info.url
            );
        }
        if got.len() >= want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    got
}

async fn stop_and_restart(signal: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, addr) = start(dir.path());
    let mut client = connect(&addr).await;
    let urls: Vec<String> = (0..20)
        .map(|i| format!("http://h{}.test/{i}", i % 4))
        .collect();
    let discovered = urls.iter().map(|u| UrlItem {
        creation_date: 0,
        id: u.clone(),
        item: Some(Item::Discovered(DiscoveredUrlItem {
            info: Some(info(u)),
        })),
    });
    put(&mut client, discovered.collect()).await;
    let handed = get(&mut client, 20).await;
    assert_eq!(handed.len(), 20, "every URL handed out once");
    // Five put back as fetched (acked: durable); fifteen still held by this client.
    let done: Vec<&String> = handed.iter().take(5).collect();
    let known = done.iter().map(|u| UrlItem {
        creation_date: 0,
        id: u.to_string(),
        item: Some(Item::Known(KnownUrlItem {
            info: Some(info(u)),
            refetchable_from_date: 0,
        })),
    });
    put(&mut client, known.collect()).await;
    let status = Command::new("kill")
        .args([signal, &server.id().to_string()])
        .status();
    assert!(status.is_ok_and(|s| s.success()), "kill {signal}");
    let ended = server.wait().expect("the server ends");
    if signal == "-TERM" {
        assert!(ended.success(), "a graceful stop exits 0: {ended}");
    }
    let (mut server, addr) = start(dir.path());
    let mut client = connect(&addr).await;
    let again = get(&mut client, 15).await;
    let expected: BTreeSet<String> = handed.iter().skip(5).cloned().collect();
    assert_eq!(
        again, expected,
        "after {signal}: the 15 held URLs are due again, the 5 done are not"
    );
    for url in done {
        let item = client
            .get_url_status(UrlStatusRequest {
                url: url.clone(),
                key: String::new(),
                crawl_id: String::new(),
            })
            .await
            .expect("GetURLStatus")
            .into_inner();
        assert!(
            matches!(item.item, Some(Item::Known(_))),
            "{url} kept as known: {item:?}"
        );
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_loses_nothing() {
    stop_and_restart("-TERM").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_loses_nothing_it_acked() {
    stop_and_restart("-KILL").await;
}
