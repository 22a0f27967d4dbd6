//! The rules clients set on squall's server are kept in its frontier: a `squall-frontier` process
//! on an embedded frontier, killed (SIGKILL) right after the calls were answered and started again
//! on the same directory, applies every one. Read back by GetActive (SetActive false), ListQueues
//! (a blocked queue is not active), hand-outs (the blocked queue is not handed out; a queue's
//! SetDelay holds between two holders; a crawl limit stops its queue) and the log (SetLogLevel's
//! level is set again).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    Active, BlockQueueParams, CrawlLimitParams, DiscoveredUrlItem, GetParams, KnownUrlItem, Local,
    LogLevelParams, Pagination, QueueDelayParams, UrlInfo, UrlItem, get_params, log_level_params,
};
use tonic::transport::Channel;

use crate::support::process::{listening_address, server_binary};
use crate::support::serving::{connect, serve};

type Client = UrlFrontierClient<Channel>;

/// Starts the server on the frontier `frontier` names (its arguments), its log in `log`.
fn start(frontier: &[String], log: &Path) -> (Child, String) {
    let log = std::fs::File::create(log).expect("the log file");
    let mut child = Command::new(server_binary())
        .args(["--listen", "127.0.0.1:0"])
        .args(frontier)
        .args([
            "--set",
            "fetcher.server.delay=0",
            "--set",
            "spout.min.delay.queries=50",
        ])
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("start squall-frontier");
    let addr = listening_address(&mut child);
    (child, addr)
}

fn kill(child: &mut Child) {
    let status = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status();
    assert!(status.is_ok_and(|s| s.success()), "kill -KILL");
    let _ = child.wait();
}

fn item(url: &str) -> UrlItem {
    UrlItem {
        item: Some(Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url: url.to_string(),
                ..UrlInfo::default()
            }),
        })),
        ..UrlItem::default()
    }
}

fn known(url: &str) -> UrlItem {
    UrlItem {
        item: Some(Item::Known(KnownUrlItem {
            info: Some(UrlInfo {
                url: url.to_string(),
                ..UrlInfo::default()
            }),
            refetchable_from_date: 0,
        })),
        ..UrlItem::default()
    }
}

async fn put(client: &mut Client, items: Vec<UrlItem>) {
    let count = items.len();
    let acks = client
        .put_ur_ls(futures::stream::iter(items))
        .await
        .expect("PutURLs");
    let acks: Vec<_> = acks.into_inner().try_collect().await.expect("acks");
    assert_eq!(acks.len(), count);
}

/// One GetURLs: the URLs handed out, held 600 s.
async fn get(client: &mut Client) -> Vec<String> {
    let ask = GetParams {
        delay_requestable: 600,
        max_urls_per_queue: 1,
        item: Some(get_params::Item::CrawlId("DEFAULT".into())),
        ..GetParams::default()
    };
    let got = client.get_ur_ls(ask).await.expect("GetURLs");
    let urls: Vec<UrlInfo> = got.into_inner().try_collect().await.expect("URLs");
    urls.into_iter().map(|info| info.url).collect()
}

/// Asks every 50 ms until `url` is handed out; how long that took. What came is added to `others`.
async fn until_handed_out(client: &mut Client, url: &str, others: &mut Vec<String>) -> Duration {
    let started = Instant::now();
    loop {
        let got = get(client).await;
        let found = got.iter().any(|u| u == url);
        others.extend(got);
        if found {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url} never handed out; handed out: {others:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn set_rules(client: &mut Client, in_an_hour: u64) {
    let block = BlockQueueParams {
        key: "a.test".into(),
        time: in_an_hour,
        ..BlockQueueParams::default()
    };
    client
        .block_queue_until(block)
        .await
        .expect("BlockQueueUntil");
    let delay = QueueDelayParams {
        key: "b.test".into(),
        delay_requestable: 3,
        ..QueueDelayParams::default()
    };
    client.set_delay(delay).await.expect("SetDelay");
    let limit = CrawlLimitParams {
        key: "c.test".into(),
        limit: 1,
        ..CrawlLimitParams::default()
    };
    client.set_crawl_limit(limit).await.expect("SetCrawlLimit");
    let level = LogLevelParams {
        package: "squall_urlfrontier".into(),
        level: log_level_params::Level::Debug as i32,
        ..LogLevelParams::default()
    };
    client.set_log_level(level).await.expect("SetLogLevel");
    let inactive = Active {
        state: false,
        ..Active::default()
    };
    client.set_active(inactive).await.expect("SetActive");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rule_set_holds_after_the_server_is_killed_and_started_again_embedded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("frontier").display().to_string();
    let frontier = ["--frontier-path".to_string(), path];
    every_rule_holds(&frontier, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rule_set_holds_after_the_server_is_killed_and_started_again_on_the_queue_frontier() {
    let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
    let suffix = format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp());
    let frontier: Vec<String> = [
        "--frontier",
        "opensearch",
        "--spout",
        "queue",
        "--es-url",
        &url,
        "--es-index",
        &format!("uf-rules-urls-{suffix}"),
        "--es-queues-index",
        &format!("uf-rules-queues-{suffix}"),
        // The killed server's leases lapse within seconds (the next one takes its queues), yet
        // not so soon that a loaded machine loses them between renewals.
        "--set",
        "es.queues.lease.ttl=6",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    every_rule_holds(&frontier, dir.path()).await;
    let cleanup = reqwest::Client::new()
        .delete(format!("{url}/uf-rules-*{suffix}*"))
        .send()
        .await;
    if let Err(error) = cleanup {
        eprintln!("the test indices could not be deleted: {error}");
    }
}

/// Sets every rule on a server over `frontier`, kills it, starts another and checks each holds.
async fn every_rule_holds(frontier: &[String], dir: &Path) {
    let (first_log, second_log) = (dir.join("first.log"), dir.join("second.log"));
    let (mut server, addr) = start(frontier, &first_log);
    let mut client = Client::connect(format!("http://{addr}"))
        .await
        .expect("connect");
    let urls = [
        "http://a.test/1",
        "http://b.test/1",
        "http://b.test/2",
        "http://c.test/1",
        "http://c.test/2",
    ];
    put(&mut client, urls.iter().map(|u| item(u)).collect()).await;
    let in_an_hour = chrono::Utc::now().timestamp() as u64 + 3600;
    set_rules(&mut client, in_an_hour).await;
    kill(&mut server);

    let (mut server, addr) = start(frontier, &second_log);
    let mut client = Client::connect(format!("http://{addr}"))
        .await
        .expect("connect");
    // The rules are read back as the crawl opens: give its first read a moment.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let active = client
        .get_active(Local::default())
        .await
        .expect("GetActive");
    assert!(!active.into_inner().state, "SetActive false kept");
    assert!(
        get(&mut client).await.is_empty(),
        "nothing handed out while inactive"
    );
    // A crawl opened after SetActive false hands out nothing either: the flag is the server's.
    let mut later = item("http://d.test/1");
    if let Some(Item::Discovered(DiscoveredUrlItem { info: Some(info) })) = &mut later.item {
        info.crawl_id = "later".into();
    }
    put(&mut client, vec![later]).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ask = GetParams {
        item: Some(get_params::Item::CrawlId("later".into())),
        ..GetParams::default()
    };
    let got = client.get_ur_ls(ask).await.expect("GetURLs");
    let got: Vec<UrlInfo> = got.into_inner().try_collect().await.expect("URLs");
    assert!(
        got.is_empty(),
        "a crawl opened later hands out nothing while inactive: {got:?}"
    );
    let active = Active {
        state: true,
        ..Active::default()
    };
    client.set_active(active).await.expect("SetActive");

    // b.test: its first URL put back, the second waits the 3 s SetDelay.
    let mut others = Vec::new();
    until_handed_out(&mut client, "http://b.test/1", &mut others).await;
    if !others.iter().any(|u| u == "http://c.test/1") {
        until_handed_out(&mut client, "http://c.test/1", &mut others).await;
    }
    put(
        &mut client,
        vec![known("http://b.test/1"), known("http://c.test/1")],
    )
    .await;
    let waited = until_handed_out(&mut client, "http://b.test/2", &mut others).await;
    assert!(
        waited >= Duration::from_millis(2500),
        "SetDelay kept: waited {waited:?}"
    );
    // c.test: its limit of 1 was reached; a.test: blocked for an hour.
    tokio::time::sleep(Duration::from_millis(500)).await;
    others.extend(get(&mut client).await);
    assert!(
        !others
            .iter()
            .any(|u| u.starts_with("http://a.test") || u == "http://c.test/2"),
        "the blocked queue and the limited one handed out nothing: {others:?}"
    );
    let queues = client
        .list_queues(Pagination::default())
        .await
        .expect("ListQueues")
        .into_inner();
    assert!(
        !queues.values.contains(&"a.test".to_string()),
        "blocked: {queues:?}"
    );

    // Its INFO line at start shows only under a level below RUST_LOG's `warn`: SetLogLevel's.
    let listening = "URLFrontier server listening";
    let first = std::fs::read_to_string(&first_log).expect("the first log");
    assert!(!first.contains(listening), "warn only at first:\n{first}");
    let second = std::fs::read_to_string(&second_log).expect("the second log");
    assert!(
        second.contains(listening),
        "SetLogLevel's DEBUG set again:\n{second}"
    );
    kill(&mut server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_set_on_one_server_holds_on_another_over_the_same_queue_frontier() {
    let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
    let suffix = format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp());
    let config = squall::config::ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.kind", "opensearch"))
        .and_then(|b| b.set_text("es.status.addresses", &url))
        .and_then(|b| b.set_text("es.status.spout", "queue"))
        .and_then(|b| b.set_text("es.status.index.name", &format!("uf-shared-urls-{suffix}")))
        .and_then(|b| {
            b.set_text(
                "es.queues.index.name",
                &format!("uf-shared-queues-{suffix}"),
            )
        })
        .and_then(squall::config::ConfigBuilder::build)
        .expect("config");
    let mut servers = Vec::new();
    let mut clients = Vec::new();
    for _ in 0..2 {
        let server = serve(config.clone()).await;
        let client = connect(&server).await;
        servers.push(server);
        clients.push(client);
    }
    let inactive = Active {
        state: false,
        ..Active::default()
    };
    clients[0].set_active(inactive).await.expect("SetActive");
    let limit = CrawlLimitParams {
        key: "a.test".into(),
        limit: 7,
        ..CrawlLimitParams::default()
    };
    clients[0]
        .set_crawl_limit(limit)
        .await
        .expect("SetCrawlLimit");
    let started = Instant::now();
    loop {
        let active = clients[1]
            .get_active(Local::default())
            .await
            .expect("GetActive");
        if !active.into_inner().state {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the other server never read SetActive false"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let crawl = servers[1]
        .crawls()
        .get_or_open("DEFAULT")
        .await
        .expect("crawl");
    let kept = crawl.catalog().rules().await.expect("rules");
    assert_eq!(kept.queues["a.test"].limit, Some(7));
    eprintln!(
        "SetActive false on one server read by the other after {:?}",
        started.elapsed()
    );
    for server in servers {
        server.shutdown().await;
    }
    let cleanup = reqwest::Client::new()
        .delete(format!("{url}/uf-shared-*{suffix}*"))
        .send()
        .await;
    if let Err(error) = cleanup {
        eprintln!("the test indices could not be deleted: {error}");
    }
}
