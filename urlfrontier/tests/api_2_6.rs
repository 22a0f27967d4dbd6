//! What URLFrontier API 2.6 added, as a gRPC client sees it on squall's server: `PutDiscovered`
//! (one ack per batch, a status per URL in the batch's order: new URLs OK, known ones, second
//! copies and unreadable URLs SKIPPED; an empty batch acked at once), `URLItem.creation_date` (set
//! when a URL is first stored, kept when it is put back as known), `PurgeURLs` (the URLs first
//! stored more than N days ago go, in any status; nothing handed out after), and PutURLs answering
//! SKIPPED for a discovered URL it knew.

use std::collections::HashMap;

use crate::support::serving::{connect, embedded_config, serve};
use futures::TryStreamExt;
use squall::config::{ConfigBuilder, CrawlConfig};
use squall_urlfrontier::proto::ack_message::Status as Ack;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    BlockQueueParams, CountUrlParams, DiscoveredBatch, DiscoveredUrlItem, GetParams, KnownUrlItem,
    PurgeUrlParams, UrlInfo, UrlItem, UrlStatusRequest, get_params,
};
use squall_urlfrontier::server::RunningServer;
use tonic::transport::Channel;

type Client = UrlFrontierClient<Channel>;

const CRAWL: &str = "api26";

fn info(url: &str) -> UrlInfo {
    UrlInfo {
        url: url.to_string(),
        crawl_id: CRAWL.to_string(),
        ..UrlInfo::default()
    }
}

fn batch(id: &str, urls: &[&str]) -> DiscoveredBatch {
    DiscoveredBatch {
        id: id.to_string(),
        items: urls.iter().map(|url| info(url)).collect(),
    }
}

/// Sends `batches` on one PutDiscovered stream: the statuses of each batch, by its ID.
async fn put_discovered(
    client: &mut Client,
    batches: Vec<DiscoveredBatch>,
) -> HashMap<String, Vec<Ack>> {
    let count = batches.len();
    let acks = client
        .put_discovered(futures::stream::iter(batches))
        .await
        .expect("PutDiscovered");
    let acks: Vec<_> = acks.into_inner().try_collect().await.expect("acks");
    assert_eq!(acks.len(), count, "one ack per batch: {acks:?}");
    acks.into_iter()
        .map(|ack| {
            let statuses = ack.statuses().collect();
            (ack.id, statuses)
        })
        .collect()
}

async fn put(client: &mut Client, item: Item) -> Ack {
    let item = UrlItem {
        item: Some(item),
        ..UrlItem::default()
    };
    let acks = client
        .put_ur_ls(futures::stream::iter([item]))
        .await
        .expect("PutURLs");
    let acks: Vec<_> = acks.into_inner().try_collect().await.expect("acks");
    assert_eq!(acks.len(), 1);
    acks[0].status()
}

async fn creation_date(client: &mut Client, url: &str) -> u64 {
    let request = UrlStatusRequest {
        url: url.to_string(),
        crawl_id: CRAWL.to_string(),
        key: String::new(),
    };
    let item = client.get_url_status(request).await.expect("GetURLStatus");
    item.into_inner().creation_date
}

async fn purge(client: &mut Client, days: u32) -> u64 {
    let params = PurgeUrlParams {
        key: String::new(),
        crawl_id: CRAWL.to_string(),
        days,
    };
    client
        .purge_ur_ls(params)
        .await
        .expect("PurgeURLs")
        .into_inner()
        .value
}

async fn count(client: &mut Client) -> u64 {
    let params = CountUrlParams {
        crawl_id: CRAWL.to_string(),
        ..CountUrlParams::default()
    };
    client
        .count_ur_ls(params)
        .await
        .expect("CountURLs")
        .into_inner()
        .value
}

async fn handed_out(client: &mut Client) -> Vec<String> {
    let ask = GetParams {
        delay_requestable: 60,
        item: Some(get_params::Item::CrawlId(CRAWL.to_string())),
        ..GetParams::default()
    };
    let got = client.get_ur_ls(ask).await.expect("GetURLs");
    let urls: Vec<UrlInfo> = got.into_inner().try_collect().await.expect("URLs");
    urls.into_iter().map(|info| info.url).collect()
}

/// Makes every write so far show in lookups and counts (an index refresh on the queue frontier).
async fn settle(server: &RunningServer) {
    let crawl = server.crawls().get_or_open(CRAWL).await.expect("crawl");
    crawl.catalog().settle().await.expect("settle");
}

/// Asks for URLs until `url` is handed out (the server reads its frontier in the background).
async fn until_handed_out(client: &mut Client, url: &str) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !handed_out(client).await.iter().any(|u| u == url) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{url} never handed out"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

fn now_secs() -> u64 {
    chrono::Utc::now().timestamp().try_into().unwrap_or(0)
}

async fn check_api_2_6(config: CrawlConfig) {
    let server = serve(config).await;
    let mut client = connect(&server).await;
    let (a, b, c) = (
        "https://a.example/1",
        "https://b.example/2",
        "https://c.example/3",
    );

    let before = now_secs();
    let acks = put_discovered(
        &mut client,
        vec![batch("first", &[a, b, a, "not a url"]), batch("", &[])],
    )
    .await;
    assert_eq!(
        acks["first"],
        [Ack::Ok, Ack::Ok, Ack::Skipped, Ack::Skipped]
    );
    assert_eq!(acks[""], [], "an empty batch is acked, with its (empty) ID");
    let acks = put_discovered(&mut client, vec![batch("second", &[a, c])]).await;
    assert_eq!(
        acks["second"],
        [Ack::Skipped, Ack::Ok],
        "a known URL is skipped"
    );
    assert_eq!(
        put(
            &mut client,
            Item::Discovered(DiscoveredUrlItem {
                info: Some(info(b))
            })
        )
        .await,
        Ack::Skipped,
        "PutURLs skips a discovered URL it knows"
    );

    settle(&server).await;
    let created = creation_date(&mut client, a).await;
    assert!(
        (before..=now_secs()).contains(&created),
        "dated when first stored: {created}, put from {before}"
    );
    // Put back known: a URL not handed out, then one handed out (what the reader read of it).
    let known = |url: &str| {
        Item::Known(KnownUrlItem {
            info: Some(info(url)),
            refetchable_from_date: 0,
        })
    };
    assert_eq!(put(&mut client, known(a)).await, Ack::Ok);
    let created_c = creation_date(&mut client, c).await;
    until_handed_out(&mut client, c).await;
    assert_eq!(put(&mut client, known(c)).await, Ack::Ok);
    settle(&server).await;
    assert_eq!(
        creation_date(&mut client, a).await,
        created,
        "kept when known"
    );
    assert_eq!(
        creation_date(&mut client, c).await,
        created_c,
        "kept when put back"
    );

    assert_eq!(purge(&mut client, 1).await, 0, "nothing is a day old");
    assert_eq!(
        purge(&mut client, u32::MAX).await,
        0,
        "before any date: nothing"
    );
    settle(&server).await;
    assert_eq!(count(&mut client).await, 3);
    // Whole seconds: a URL stored in this very second is not yet before "now".
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(purge(&mut client, 0).await, 3, "every URL, done or due");
    settle(&server).await;
    assert_eq!(count(&mut client).await, 0);
    let after = handed_out(&mut client).await;
    assert!(after.is_empty(), "nothing purged is handed out: {after:?}");
    // A block past the year 9999 is taken (as the year 9999), not a failure of the server.
    let block = BlockQueueParams {
        key: "a.example".into(),
        time: u64::MAX,
        crawl_id: CRAWL.into(),
        ..BlockQueueParams::default()
    };
    client
        .block_queue_until(block)
        .await
        .expect("BlockQueueUntil u64::MAX");
    settle(&server).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_2_6_on_the_embedded_frontier() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = embedded_config(dir.path());
    check_api_2_6(config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_2_6_on_the_queue_frontier() {
    let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
    let suffix = format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp());
    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.kind", "opensearch"))
        .and_then(|b| b.set_text("es.status.addresses", &url))
        .and_then(|b| b.set_text("es.status.spout", "queue"))
        .and_then(|b| b.set_text("es.status.index.name", &format!("uf-api26-urls-{suffix}")))
        .and_then(|b| b.set_text("es.queues.index.name", &format!("uf-api26-queues-{suffix}")))
        .and_then(ConfigBuilder::build)
        .expect("config");
    check_api_2_6(config).await;
    let cleanup = reqwest::Client::new()
        .delete(format!("{url}/uf-api26-*{suffix}*"))
        .send()
        .await;
    if let Err(error) = cleanup {
        eprintln!("the test indices could not be deleted: {error}");
    }
}
