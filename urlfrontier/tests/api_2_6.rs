//! What URLFrontier API 2.6 added, as a gRPC client sees it on squall's server: `PutDiscovered`
//! (one ack per batch, a status per URL in the batch's order: new URLs OK, known ones, second
//! copies and unreadable URLs SKIPPED; an empty batch acked at once), `URLItem.creation_date` (set
//! when a URL is first stored, kept when it is put back as known), `PurgeURLs` (the URLs first
//! stored more than N days ago go, in any status; nothing handed out after), and PutURLs answering
//! SKIPPED for a discovered URL it knew.

use std::collections::HashMap;

use futures::TryStreamExt;
use squall::config::{ConfigBuilder, CrawlConfig};
use squall_urlfrontier::proto::ack_message::Status as Ack;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    CountUrlParams, DiscoveredBatch, DiscoveredUrlItem, GetParams, KnownUrlItem, PurgeUrlParams,
    UrlInfo, UrlItem, UrlStatusRequest, get_params,
};
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

async fn handed_out(client: &mut Client) -> usize {
    let ask = GetParams {
        delay_requestable: 60,
        item: Some(get_params::Item::CrawlId(CRAWL.to_string())),
        ..GetParams::default()
    };
    let got = client.get_ur_ls(ask).await.expect("GetURLs");
    let urls: Vec<_> = got.into_inner().try_collect().await.expect("URLs");
    urls.len()
}

fn now_secs() -> u64 {
    chrono::Utc::now().timestamp().try_into().unwrap_or(0)
}

async fn check_api_2_6(config: CrawlConfig) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let server = squall_urlfrontier::server::start(config, listener)
        .await
        .expect("the server starts");
    let mut client = Client::connect(format!("http://{}", server.addr()))
        .await
        .expect("connect");
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

    let created = creation_date(&mut client, a).await;
    assert!(
        (before..=now_secs()).contains(&created),
        "dated when first stored: {created}, put from {before}"
    );
    let known = KnownUrlItem {
        info: Some(info(a)),
        refetchable_from_date: 0,
    };
    assert_eq!(put(&mut client, Item::Known(known)).await, Ack::Ok);
    assert_eq!(
        creation_date(&mut client, a).await,
        created,
        "kept when known"
    );

    assert_eq!(purge(&mut client, 1).await, 0, "nothing is a day old");
    assert_eq!(count(&mut client).await, 3);
    // Whole seconds: a URL stored in this very second is not yet before "now".
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(purge(&mut client, 0).await, 3, "every URL, done or due");
    assert_eq!(count(&mut client).await, 0);
    assert_eq!(
        handed_out(&mut client).await,
        0,
        "nothing purged is handed out"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_2_6_on_the_embedded_frontier() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.path", &dir.path().display().to_string()))
        .and_then(ConfigBuilder::build)
        .expect("config");
    check_api_2_6(config).await;
}
