//! The indexer writes a partial batch as soon as the crawl waits on it: when every URL the spout
//! runner has in flight is in the batch. Run with a real file store on tokio's paused clock, so
//! that "at once" means before the store's flush interval (a second) had passed.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use url::Url;

use super::{ContentIndexer, IndexerSettings, JsonLinesStore};
use crate::message::{AckHandle, NoObserver, PageContent, StatusUpdate};
use crate::model::{CrawlUrl, Status};
use crate::testing::{in_flight, settle};

/// The file store's flush interval (its default batching).
const INTERVAL: Duration = Duration::from_secs(1);

/// An indexer writing to a JSON-lines file in `dir`.
fn indexer(dir: &std::path::Path) -> ContentIndexer {
    let store = JsonLinesStore::open(&dir.join("content.jsonl")).expect("open");
    ContentIndexer::new(
        Arc::new(store),
        IndexerSettings::default(),
        Arc::new(NoObserver),
    )
}

/// A fetched page of `a.test` with content to index.
fn fetched(path: &str) -> StatusUpdate {
    let url = CrawlUrl::new(Url::parse(&format!("http://a.test/{path}")).expect("url"));
    let (acks, _acked) = mpsc::unbounded_channel();
    StatusUpdate {
        url: url.clone(),
        key: "a.test".into(),
        status: Status::Fetched,
        outlinks: Vec::new(),
        fetch: None,
        queue: Default::default(),
        content: Some(PageContent {
            title: Some(format!("page {path}")),
            text: Some("text".into()),
        }),
        ack: AckHandle::new(url, acks),
    }
}

#[tokio::test(start_paused = true)]
async fn a_batch_holding_every_url_in_flight_is_written_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let (_state, runner) = watch::channel(in_flight(2));
    let (input, indexer_input) = mpsc::channel(8);
    let (indexer_output, mut passed_on) = mpsc::channel(8);
    let task = tokio::spawn(
        indexer(dir.path())
            .flush_when_waited_on(runner)
            .run(indexer_input, indexer_output),
    );
    let start = Instant::now();
    input.send(fetched("one")).await.expect("send");
    settle().await;
    assert!(
        passed_on.try_recv().is_err(),
        "one of two in flight: it waits"
    );
    input.send(fetched("two")).await.expect("send");
    for _ in 0..2 {
        let update = passed_on.recv().await.expect("passed on once written");
        assert_eq!(update.status, Status::Fetched);
    }
    assert!(
        start.elapsed() < INTERVAL,
        "written before the flush interval"
    );
    let written = std::fs::read_to_string(dir.path().join("content.jsonl")).expect("read");
    assert_eq!(written.lines().count(), 2, "{written}");
    drop(input);
    task.await.expect("the indexer ends");
}

#[tokio::test(start_paused = true)]
async fn with_more_in_flight_or_no_runner_watched_a_batch_waits_for_the_interval() {
    for watched in [true, false] {
        let dir = tempfile::tempdir().expect("dir");
        let (_state, runner) = watch::channel(in_flight(5));
        let (input, indexer_input) = mpsc::channel(8);
        let (indexer_output, mut passed_on) = mpsc::channel(8);
        let indexer = match watched {
            true => indexer(dir.path()).flush_when_waited_on(runner),
            false => indexer(dir.path()),
        };
        let task = tokio::spawn(indexer.run(indexer_input, indexer_output));
        let start = Instant::now();
        input.send(fetched("one")).await.expect("send");
        passed_on.recv().await.expect("passed on once written");
        assert!(
            start.elapsed() >= INTERVAL,
            "watched {watched}: written at the interval, not after {:?}",
            start.elapsed()
        );
        drop(input);
        task.await.expect("the indexer ends");
    }
}
