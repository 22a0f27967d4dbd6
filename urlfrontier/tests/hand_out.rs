//! How soon squall's URLFrontier server hands out what a client put, as a client sees it: a crawl
//! ID never used before, PutURLs of URLs of new hosts, then GetURLs every 20 ms until they come;
//! and a URL handed out with `delay_requestable` 2 s and never put back, asked for every 20 ms
//! after its delay until it comes again. On the embedded frontier, and on the queue frontier on the
//! real node (started by `scripts/opensearch start`; `OPENSEARCH_URL` points elsewhere).
//!
//! The waits are printed (median and worst of the trials), not asserted: a deadline only keeps a
//! server that never hands out from hanging the suite, and fails the test.

use std::time::{Duration, Instant};

use crate::support::serving::{connect, serve};
use futures::TryStreamExt;
use squall::config::{ConfigBuilder, CrawlConfig};
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{DiscoveredUrlItem, GetParams, UrlInfo, UrlItem, get_params};
use tonic::transport::Channel;

type Client = UrlFrontierClient<Channel>;

const TRIALS: usize = 5;
const DEADLINE: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(20);

async fn put(client: &mut Client, crawl: &str, urls: &[String]) {
    let items: Vec<UrlItem> = urls
        .iter()
        .map(|url| UrlItem {
            creation_date: 0,
            id: url.clone(),
            item: Some(Item::Discovered(DiscoveredUrlItem {
                info: Some(UrlInfo {
                    url: url.clone(),
                    crawl_id: crawl.to_string(),
                    ..UrlInfo::default()
                }),
            })),
        })
        .collect();
    let acks = client
        .put_ur_ls(futures::stream::iter(items))
        .await
        .expect("PutURLs");
    let acks: Vec<_> = acks.into_inner().try_collect().await.expect("acks");
    assert_eq!(acks.len(), urls.len(), "one ack per URL");
}

async fn get(client: &mut Client, crawl: &str, hold_secs: u32) -> Vec<UrlInfo> {
    let ask = GetParams {
        max_urls_per_queue: 0,
        max_queues: 0,
        key: String::new(),
        delay_requestable: hold_secs,
        item: Some(get_params::Item::CrawlId(crawl.to_string())),
    };
    let got = client.get_ur_ls(ask).await.expect("GetURLs");
    got.into_inner().try_collect().await.expect("URLs")
}

/// Asks every [`POLL`] until something comes; how long that took.
async fn until_handed_out(client: &mut Client, crawl: &str, hold_secs: u32) -> Duration {
    let started = Instant::now();
    loop {
        if !get(client, crawl, hold_secs).await.is_empty() {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < DEADLINE,
            "nothing handed out in crawl {crawl} within {DEADLINE:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

fn summary(waits: &mut [Duration]) -> String {
    waits.sort();
    format!(
        "median {:.3} s, worst {:.3} s over {} trials",
        waits[waits.len() / 2].as_secs_f64(),
        waits[waits.len() - 1].as_secs_f64(),
        waits.len()
    )
}

async fn measure(name: &str, config: CrawlConfig) {
    let server = serve(config).await;
    let mut client = connect(&server).await;
    let run = format!("{}{}", std::process::id(), chrono::Utc::now().timestamp());
    let (mut put_waits, mut lapse_waits) = (Vec::new(), Vec::new());
    for trial in 0..TRIALS {
        let crawl = format!("handout{run}t{trial}");
        let urls: Vec<String> = (0..3)
            .map(|h| format!("https://h{h}-{crawl}.example/page"))
            .collect();
        put(&mut client, &crawl, &urls).await;
        put_waits.push(until_handed_out(&mut client, &crawl, 2).await);
        // Held 2 s from that answer, never put back: asked for again once the hold ended.
        let handed = Instant::now();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let lapsed = handed.elapsed().saturating_sub(Duration::from_secs(2));
        lapse_waits.push(lapsed + until_handed_out(&mut client, &crawl, 60).await);
    }
    eprintln!(
        "{name}: a URL put, handed out after {}; a lapsed URL, handed out again {} after its \
         delay_requestable ended",
        summary(&mut put_waits),
        summary(&mut lapse_waits)
    );
    server.shutdown().await;
}

fn builder() -> ConfigBuilder {
    ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .expect("agent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_put_and_urls_lapsed_are_handed_out_on_the_embedded_frontier() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = builder()
        .set_text("frontier.path", &dir.path().display().to_string())
        .and_then(ConfigBuilder::build)
        .expect("config");
    measure("embedded frontier", config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_put_and_urls_lapsed_are_handed_out_on_the_queue_frontier() {
    let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
    let suffix = format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp());
    let config = builder()
        .set_text("frontier.kind", "opensearch")
        .and_then(|b| b.set_text("es.status.addresses", &url))
        .and_then(|b| b.set_text("es.status.spout", "queue"))
        .and_then(|b| b.set_text("es.status.index.name", &format!("uf-handout-urls-{suffix}")))
        .and_then(|b| {
            b.set_text(
                "es.queues.index.name",
                &format!("uf-handout-queues-{suffix}"),
            )
        })
        .and_then(ConfigBuilder::build)
        .expect("config");
    measure("queue frontier", config).await;
    let cleanup = reqwest::Client::new()
        .delete(format!("{url}/uf-handout-*{suffix}*"))
        .send()
        .await;
    if let Err(error) = cleanup {
        eprintln!("the test indices could not be deleted: {error}");
    }
}
