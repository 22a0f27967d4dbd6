//! A crawl deleted with DeleteCrawl can be used again at once. An embedded frontier is locked while
//! open, and the old run's last task (a blocking query in flight) may hold it a moment after the
//! crawl stopped: a crawl reopened then was refused as "in use" (the `grpc_requests` fuzz target
//! found GetStats refused right after a DeleteCrawl of DEFAULT). Opening a crawl just closed is now
//! retried until the old run lets go.

use futures::TryStreamExt;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{
    DeleteCrawlMessage, DiscoveredUrlItem, QueueWithinCrawlParams, UrlInfo, UrlItem,
};

use crate::support::serving::{connect, embedded_config, serve};

/// Rounds of put, delete, read: the race lost about two times in three before the fix.
const ROUNDS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_crawl_is_at_once_usable_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = embedded_config(dir.path());
    let server = serve(config).await;
    let mut client = connect(&server).await;
    for round in 0..ROUNDS {
        let url = format!("http://a.test/{round}");
        let item = UrlItem {
            id: url.clone(),
            item: Some(Item::Discovered(DiscoveredUrlItem {
                info: Some(UrlInfo {
                    url,
                    ..UrlInfo::default()
                }),
            })),
            ..UrlItem::default()
        };
        let acks = client
            .put_ur_ls(futures::stream::iter([item]))
            .await
            .unwrap_or_else(|e| panic!("round {round}: PutURLs: {e}"));
        let acks: Vec<_> = acks.into_inner().try_collect().await.expect("acks");
        assert_eq!(acks.len(), 1, "round {round}");

        let deleted = client
            .delete_crawl(DeleteCrawlMessage {
                value: "DEFAULT".to_string(),
                local: false,
            })
            .await
            .unwrap_or_else(|e| panic!("round {round}: DeleteCrawl: {e}"));
        assert_eq!(deleted.into_inner().value, 1, "round {round}: the URL put");

        let stats = client
            .get_stats(QueueWithinCrawlParams {
                key: String::new(),
                crawl_id: "DEFAULT".to_string(),
                local: false,
            })
            .await
            .unwrap_or_else(|e| panic!("round {round}: GetStats right after DeleteCrawl: {e}"));
        assert_eq!(stats.into_inner().size, 0, "round {round}: an empty crawl");
    }
    server.shutdown().await;
}
