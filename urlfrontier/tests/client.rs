//! squall's URLFrontier client against squall's URLFrontier server on an embedded frontier: seeds
//! written through the client's status store, read back through its spout, put back fetched (the
//! URLFrontier way of acknowledging them) until the server calls the crawl idle; and the errors a
//! crawl sees when nothing listens or the server goes away.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::support::serving::serve;
use chrono::Utc;
use squall::config::{ConfigBuilder, CrawlConfig};
use squall::frontier::{
    BusyUrls, DueUrl, ErrorKind, LearnedPace, PaceCause, QueueReport, Spout, StatusWrite,
};
use squall::model::{CrawlUrl, Status};
use squall_urlfrontier::client::{self, ClientError};
use squall_urlfrontier::convert::STATUS_KEY;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::{UrlStatusRequest, url_item};
use squall_urlfrontier::server::RunningServer;
use url::Url;

const SEEDS: [&str; 3] = [
    "http://a.test/one",
    "http://a.test/two",
    "http://b.test/page?x=1",
];

fn config(settings: &[&str]) -> CrawlConfig {
    let mut builder = ConfigBuilder::new()
        .set("http.agent.name=squall-test")
        .expect("agent");
    for setting in settings {
        builder = builder.set(setting).expect("setting");
    }
    builder.build().expect("config")
}

/// A server on a fresh embedded frontier in `dir`.
async fn start_server(dir: &std::path::Path) -> RunningServer {
    let path = format!("frontier.path={}", dir.display());
    let server_config = config(&[
        &path,
        "fetcher.server.delay=0.2",
        "spout.min.delay.queries=100",
    ]);
    serve(server_config).await
}

/// The client's configuration for the server at `addr`, crawl `crawl`.
fn client_config(addr: std::net::SocketAddr, crawl: &str) -> CrawlConfig {
    config(&[
        &format!("urlfrontier.address={addr}"),
        &format!("urlfrontier.crawlid={crawl}"),
        "urlfrontier.delay.requestable=30",
        "urlfrontier.request.timeout=5",
    ])
}

fn seed(url: &str, status: Status) -> StatusWrite {
    let url = Url::parse(url).expect("seed URL");
    let key = url.host_str().unwrap_or_default().to_string();
    let mut crawl_url = CrawlUrl::seed(url);
    crawl_url
        .metadata
        .set_values("tags", vec!["x".into(), "y".into()]);
    StatusWrite {
        url: crawl_url,
        key,
        status,
        next_fetch: None,
        queue: QueueReport::default(),
    }
}

/// Reads until `wanted` URLs came back or 10 s passed (the server reads its frontier in the
/// background, and hands out one holder's worth of a queue at a time).
async fn read(spout: &mut Box<dyn Spout>, wanted: usize) -> Vec<DueUrl> {
    let mut read = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while read.len() < wanted && tokio::time::Instant::now() < deadline {
        read.extend(spout.next_batch(&BusyUrls::none()).await.expect("GetURLs"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    read
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_written_by_the_store_are_read_by_the_spout_and_put_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_server(dir.path()).await;
    let crawl = format!("client-{}", std::process::id());
    let (mut spout, store, description) = client::open(&client_config(server.addr(), &crawl))
        .await
        .expect("the client connects");
    assert!(
        description.contains(&server.addr().to_string()),
        "{description}"
    );

    // Seeds, one of them twice in the batch: each write gets its own outcome.
    let mut batch: Vec<StatusWrite> = SEEDS.iter().map(|u| seed(u, Status::Discovered)).collect();
    batch.push(seed(SEEDS[0], Status::Discovered));
    let outcomes = store.store(batch).await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");

    let due = read(&mut spout, SEEDS.len()).await;
    let urls: BTreeSet<&str> = due.iter().map(|d| d.url.url.as_str()).collect();
    assert_eq!(urls, SEEDS.into_iter().collect(), "each seed once");
    for url in &due {
        assert_eq!(url.key, url.url.url.host_str().unwrap_or_default());
        assert_eq!(url.url.metadata.values("tags"), ["x", "y"]);
        assert_eq!(url.url.depth(), 0);
        assert!(!url.url.metadata.contains(STATUS_KEY));
    }
    assert!(
        !spout.frontier_idle().await.expect("GetStats"),
        "URLs are handed out"
    );

    // Put them back fetched, never due again, with what the fetches learned about their queues.
    let mut fetched: Vec<StatusWrite> = due
        .iter()
        .map(|d| StatusWrite {
            url: d.url.clone(),
            key: d.key.clone(),
            status: Status::Fetched,
            next_fetch: None,
            queue: QueueReport::default(),
        })
        .collect();
    fetched[0].queue.crawl_delay = Some(Duration::from_millis(1500));
    fetched[1].queue.blocked_until = Some(Utc::now() + chrono::Duration::seconds(1));
    let outcomes = store.store(fetched).await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    for url in &due {
        spout.ack(&url.url).await;
    }

    let mut grpc = UrlFrontierClient::connect(format!("http://{}", server.addr()))
        .await
        .expect("a plain gRPC client");
    let stored = grpc
        .get_url_status(UrlStatusRequest {
            url: SEEDS[2].to_string(),
            key: String::new(),
            crawl_id: crawl.clone(),
        })
        .await
        .expect("GetURLStatus")
        .into_inner();
    let Some(url_item::Item::Known(known)) = stored.item else {
        panic!("the fetched URL is not known: {stored:?}");
    };
    let info = known.info.expect("info");
    assert!(
        !info.metadata.contains_key(STATUS_KEY),
        "FETCHED is what a known item means: {info:?}"
    );
    assert_eq!(known.refetchable_from_date, 0, "never due again");
    assert!(stored.creation_date > 0, "dated when first stored");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !spout.frontier_idle().await.expect("GetStats") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the crawl never went idle"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rest = spout.next_batch(&BusyUrls::none()).await.expect("GetURLs");
    assert!(rest.is_empty(), "nothing is due: {rest:?}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learned_pace_becomes_the_queues_delay_at_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_server(dir.path()).await;
    let (mut spout, store, _) = client::open(&client_config(server.addr(), "paced"))
        .await
        .expect("the client connects");
    let first = [seed(SEEDS[0], Status::Discovered)];
    assert!(store.store(first.to_vec()).await.iter().all(Result::is_ok));
    let due = read(&mut spout, 1).await;
    assert_eq!(due.len(), 1, "{due:?}");
    // Its server pushed back: the fetcher keeps 3 s now (the server's own delay is 0.2 s). The
    // page goes back with that pace, and a link to the same host due now.
    let pace = LearnedPace {
        delay: Duration::from_secs(3),
        cause: PaceCause::Http(429),
        strikes: 1,
        limit: None,
        at: Utc::now(),
    };
    let fetched = StatusWrite {
        url: due[0].url.clone(),
        key: due[0].key.clone(),
        status: Status::FetchError,
        next_fetch: None,
        queue: QueueReport {
            pace: Some(pace),
            ..QueueReport::default()
        },
    };
    let sent = std::time::Instant::now();
    let outcomes = store
        .store(vec![fetched, seed(SEEDS[1], Status::Discovered)])
        .await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    spout.ack(&due[0].url).await;
    let next = read(&mut spout, 1).await;
    let waited = sent.elapsed();
    assert_eq!(next.len(), 1, "the link is handed out in the end");
    assert!(
        waited >= Duration::from_millis(3000),
        "handed out {waited:?} after the page went back: the queue keeps the pace learned"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_urls_are_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_server(dir.path()).await;
    let (mut spout, store, _) = client::open(&client_config(server.addr(), "busy"))
        .await
        .expect("the client connects");
    let seeds = [seed(SEEDS[2], Status::Discovered)];
    assert!(store.store(seeds.to_vec()).await.iter().all(Result::is_ok));
    // The runner holds the URL already: the spout leaves it out of the batch.
    let busy = BusyUrls::in_topology_of([SEEDS[2].to_string()]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut grpc = UrlFrontierClient::connect(format!("http://{}", server.addr()))
        .await
        .expect("a plain gRPC client");
    loop {
        let batch = spout.next_batch(&busy).await.expect("GetURLs");
        assert!(batch.is_empty(), "a busy URL came back: {batch:?}");
        let stats = grpc
            .get_stats(squall_urlfrontier::proto::QueueWithinCrawlParams {
                key: String::new(),
                crawl_id: "busy".to_string(),
                local: false,
            })
            .await
            .expect("GetStats")
            .into_inner();
        if stats.in_process > 0 {
            break; // handed out, and skipped
        }
        assert!(tokio::time::Instant::now() < deadline, "never handed out");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_hold_reported_with_a_write_blocks_the_queue_on_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_server(dir.path()).await;
    let (mut spout, store, _) = client::open(&client_config(server.addr(), "hold"))
        .await
        .expect("the client connects");
    let hold_until = Utc::now() + chrono::Duration::seconds(2);
    let mut held = seed(SEEDS[0], Status::Discovered);
    held.queue.blocked_until = Some(hold_until);
    let free = seed(SEEDS[2], Status::Discovered);
    assert!(
        store
            .store(vec![held, free])
            .await
            .iter()
            .all(Result::is_ok)
    );

    let first = read(&mut spout, 1).await;
    let hosts: Vec<&str> = first.iter().filter_map(|d| d.url.url.host_str()).collect();
    assert_eq!(hosts, ["b.test"], "a.test is held");
    let later = read(&mut spout, 1).await;
    assert_eq!(later.len(), 1, "a.test comes once its hold is over");
    assert_eq!(later[0].url.url.as_str(), SEEDS[0]);
    assert!(Utc::now() >= hold_until, "handed out during the hold");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_listening_is_a_connect_error_naming_the_address() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    let error = client::open(&client_config(addr, "DEFAULT"))
        .await
        .map(|_| ())
        .expect_err("nothing listens");
    assert!(matches!(error, ClientError::Connect { .. }), "{error:?}");
    assert!(error.to_string().contains(&addr.to_string()), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_gone_is_unavailable_to_the_spout_and_the_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_server(dir.path()).await;
    let (mut spout, store, _) = client::open(&client_config(server.addr(), "DEFAULT"))
        .await
        .expect("the client connects");
    server.shutdown().await;

    let error = spout
        .next_batch(&BusyUrls::none())
        .await
        .expect_err("no server");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let error = spout.frontier_idle().await.expect_err("no server");
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    let outcomes = store.store(vec![seed(SEEDS[0], Status::Discovered)]).await;
    let [Err(error)] = outcomes.as_slice() else {
        panic!("a write to no server: {outcomes:?}");
    };
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
}

/// How many calls of `kind` (`PutDiscovered`) the server answered.
fn calls(server: &RunningServer, kind: &str) -> u64 {
    let kinds = server.calls().kinds();
    kinds.iter().find(|(k, _)| k == kind).map_or(0, |(_, n)| *n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovered_urls_go_as_one_put_discovered_batch_beside_put_urls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_server(dir.path()).await;
    let crawl = format!("batch-{}", std::process::id());
    let (_spout, store, _) = client::open(&client_config(server.addr(), &crawl))
        .await
        .expect("the client connects");
    let mut batch: Vec<StatusWrite> = SEEDS.iter().map(|u| seed(u, Status::Discovered)).collect();
    batch.push(seed("http://c.test/done", Status::Fetched));
    batch.push(seed(SEEDS[0], Status::Discovered));
    let outcomes = store.store(batch).await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    assert_eq!(
        calls(&server, "PutDiscovered"),
        1,
        "{:?}",
        server.calls().kinds()
    );
    assert_eq!(calls(&server, "PutURLs"), 1, "the fetched URL");
    let stats = server.crawls().get_or_open(&crawl).await.expect("crawl");
    let count = stats.catalog().count(&Default::default()).await;
    assert_eq!(count, Ok(4), "three seeds and the fetched URL");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_put_discovered_gets_the_urls_on_put_urls_from_then_on() {
    // A gRPC server with no service answers UNIMPLEMENTED to every call, PutDiscovered included:
    // the store then sends the same writes on PutURLs (refused here too, which shows it tried),
    // and asks PutDiscovered no more.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let addr = listener.local_addr().expect("address");
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    let empty = tonic::transport::Server::builder()
        .add_routes(tonic::service::Routes::default())
        .serve_with_incoming(incoming);
    let server = tokio::spawn(empty);
    let (_, store, _) = client::open(&client_config(addr, "DEFAULT"))
        .await
        .expect("the client connects");
    for _ in 0..2 {
        let outcomes = store.store(vec![seed(SEEDS[0], Status::Discovered)]).await;
        let error = outcomes[0]
            .as_ref()
            .expect_err("nothing serves PutURLs either");
        assert!(error.message().contains("PutURLs"), "{error}");
    }
    server.abort();
}
