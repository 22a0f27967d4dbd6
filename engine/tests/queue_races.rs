//! Races of the queue frontier found by reading the code, each pinned by a test against the real
//! node that fails without its fix.

use crate::support;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};
use squall::frontier::{BusyUrls, Spout};
use squall::frontier::{StatusStore, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::Method;
use squall_engine::client::indices::ensure_index;
use squall_engine::client::{EsClient, RequestBody};
use squall_engine::queue::schema::queues_index_body;
use squall_engine::queue::{QueueSpout, QueueSpoutConfig, QueueStatusStore};
use squall_engine::status_index::schema::KeyField;

struct Frontier {
    client: EsClient,
    urls: String,
    queues: String,
    store: QueueStatusStore,
}

impl Frontier {
    async fn new() -> Self {
        let client = support::client().await;
        let urls = support::status_index(&client, "race-urls", 1).await;
        let queues = support::unique_index("race-queues");
        ensure_index(&client, &queues, queues_index_body(1, 0, "1s"))
            .await
            .expect("queues index");
        let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
        Frontier {
            client,
            urls,
            queues,
            store,
        }
    }

    fn spout(&self, owner: &str) -> QueueSpout {
        QueueSpout::new(
            self.client.clone(),
            QueueSpoutConfig {
                owner: owner.to_string(),
                lease_ttl: Duration::from_secs(10),
                ..QueueSpoutConfig::new(&self.urls, &self.queues)
            },
        )
    }

    async fn write(&self, url: &str, status: Status, due: DateTime<Utc>) {
        let url = url::Url::parse(url).expect("url");
        let key = url.host_str().unwrap_or_default().to_string();
        let write = StatusWrite {
            url: CrawlUrl::seed(url),
            key,
            status,
            next_fetch: Some(due),
            queue: Default::default(),
        };
        let outcomes = self.store.store(vec![write]).await;
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    }

    async fn refresh(&self, index: &str) {
        self.client
            .request(Method::Post, &format!("/{index}/_refresh"), &[], None)
            .await
            .expect("refresh");
    }

    async fn set_refresh(&self, index: &str, interval: &str) {
        let body = json!({ "index": { "refresh_interval": interval } });
        self.client
            .request(
                Method::Put,
                &format!("/{index}/_settings"),
                &[],
                Some(RequestBody::Json(body)),
            )
            .await
            .expect("settings");
    }

    async fn queue(&self, key: &str) -> Value {
        let doc = support::queue_doc(&self.client, &self.queues, key)
            .await
            .expect("queue doc");
        doc["_source"].clone()
    }

    async fn url_due(&self, url: &str) -> Option<String> {
        let doc = support::url_doc(&self.client, &self.urls, url).await;
        doc["_source"]["nextFetchDate"].as_str().map(str::to_string)
    }

    async fn delete(self) {
        support::delete_index(&self.client, &self.urls).await;
        support::delete_index(&self.client, &self.queues).await;
        support::delete_index(&self.client, &format!("{}-workers", self.queues)).await;
    }
}

/// A URL written (without lowering `nextDue`) just before another process claims, reads and gives
/// back its queue, all before the urls index refreshes: the queue must still come due for it.
#[tokio::test]
async fn a_url_written_just_before_a_claim_read_and_release_is_not_stranded() {
    let frontier = Frontier::new().await;
    let now = Utc::now();
    // The queue's only URL was fetched: its queue still says "due an hour ago" (never raised by
    // writers), its URL is due tomorrow.
    frontier
        .write(
            "http://stale.test/a",
            Status::Discovered,
            now - TimeDelta::hours(1),
        )
        .await;
    frontier
        .write(
            "http://stale.test/a",
            Status::Fetched,
            now + TimeDelta::days(1),
        )
        .await;
    frontier.refresh(&frontier.urls).await;
    frontier.refresh(&frontier.queues).await;
    tokio::time::sleep(Duration::from_millis(3200)).await;

    // A new URL, due a minute ago, written while the urls index does not refresh: it does not
    // lower the queue (already due an hour ago).
    // (A refresh the node had already started when the setting changed may still land: wait it
    // out, then check that the index does not show the new URL, so that a refresh from outside
    // the spout is named as such.)
    frontier.set_refresh(&frontier.urls, "-1").await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let fresh = "http://stale.test/fresh";
    frontier
        .write(fresh, Status::Discovered, now - TimeDelta::minutes(1))
        .await;
    frontier.refresh(&frontier.queues).await;
    assert_eq!(
        support::count(&frontier.client, &frontier.urls).await,
        1,
        "set-up: the urls index was refreshed after the new URL's write, with refresh off"
    );

    // Another process claims the due queue, reads (the new URL does not show) and gives it back.
    // (It holds the queue while a write made shortly before the claim may not show, then gives
    // it back: the urls index still does not show the new URL, as after a late refresh.)
    let mut spout = frontier.spout("claimer");
    let started = std::time::Instant::now();
    loop {
        let batch = spout.next_batch(&BusyUrls::none()).await.expect("read");
        assert!(
            batch.is_empty(),
            "the new URL is not visible yet: {batch:?}"
        );
        if spout.held_keys().is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the queue is never given back"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    let queue = frontier.queue("stale.test").await;
    let next_due = queue["nextDue"].as_str().unwrap_or("null").to_string();
    let fresh_due = frontier.url_due(fresh).await.expect("fresh is stored");
    assert!(
        queue["nextDue"].is_string() && next_due <= fresh_due,
        "the queue must come due for {fresh} (due {fresh_due}); it says {next_due}: {queue}"
    );
    frontier.set_refresh(&frontier.urls, "1s").await;
    frontier.delete().await;
}

/// A page linking to a URL the frontier already knows writes it as DISCOVERED, which changes
/// nothing (create-only): its queue must not be pulled to now.
#[tokio::test]
async fn a_discovered_write_of_a_known_url_does_not_move_its_queue() {
    let frontier = Frontier::new().await;
    let tomorrow = Utc::now() + TimeDelta::days(1);
    let url = "http://known.test/page";
    frontier.write(url, Status::Fetched, tomorrow).await;
    let before = frontier.queue("known.test").await;
    frontier.write(url, Status::Discovered, Utc::now()).await;
    let after = frontier.queue("known.test").await;
    assert_eq!(
        before["nextDue"], after["nextDue"],
        "a known URL discovered again moved its queue: {before} -> {after}"
    );
    assert_eq!(
        frontier.url_due(url).await,
        before["nextDue"].as_str().map(str::to_string),
        "the URL keeps its date"
    );
    // A URL not known yet does lower it.
    frontier
        .write("http://known.test/new", Status::Discovered, Utc::now())
        .await;
    let lowered = frontier.queue("known.test").await;
    assert!(
        lowered["nextDue"].as_str() < before["nextDue"].as_str(),
        "a new URL lowers its queue: {lowered}"
    );
    frontier.delete().await;
}
