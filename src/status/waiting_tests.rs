//! The updater writes a partial batch as soon as the crawl waits on it: when every URL the spout
//! runner has in flight is in the batch. Run on the embedded frontier, on tokio's paused clock, so
//! that "at once" means before the clock had to move at all (the flush interval is an hour here).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use url::Url;

use super::{StatusSettings, StatusUpdater, UpdaterContext};
use crate::frontier::EmbeddedFrontier;
use crate::message::{AckHandle, AckMessage, NoObserver, StatusUpdate};
use crate::model::{CrawlUrl, Status};
use crate::schedule::DefaultScheduler;
use crate::testing::{in_flight, settle};

const HOUR: Duration = Duration::from_secs(3600);

/// An updater over a new embedded frontier in `dir`, writing by 1,000 writes or every hour.
fn updater(dir: &std::path::Path) -> StatusUpdater {
    let settings = StatusSettings {
        batch_size: 1000,
        flush_interval: HOUR,
        use_cache: false,
        ..StatusSettings::default()
    };
    let context = UpdaterContext {
        scheduler: Arc::new(DefaultScheduler::default()),
        max_fetch_errors: 3,
        transfer_keys: Vec::new(),
        partitioner: None,
    };
    let store = Arc::new(EmbeddedFrontier::open(dir).expect("open"));
    StatusUpdater::new(store, settings, context, Arc::new(NoObserver))
}

/// The update of `path` on `a.test`, FETCHED, acked on `acks`.
fn fetched(path: &str, acks: &mpsc::UnboundedSender<AckMessage>) -> StatusUpdate {
    let url = CrawlUrl::new(Url::parse(&format!("http://a.test/{path}")).expect("url"));
    StatusUpdate {
        url: url.clone(),
        key: "a.test".into(),
        status: Status::Fetched,
        outlinks: Vec::new(),
        fetch: None,
        queue: Default::default(),
        content: None,
        ack: AckHandle::new(url, acks.clone()),
    }
}

/// How many URLs were acked so far (the updater acks a URL once its write is durable).
fn acked_so_far(acked: &mut mpsc::UnboundedReceiver<AckMessage>) -> usize {
    let mut count = 0;
    while let Ok(message) = acked.try_recv() {
        assert!(matches!(message, AckMessage::Acked(_)), "{message:?}");
        count += 1;
    }
    count
}

#[tokio::test(start_paused = true)]
async fn a_batch_holding_every_url_in_flight_is_written_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let (state, runner) = watch::channel(in_flight(2));
    let (input, output) = mpsc::channel(8);
    let (acks, mut acked) = mpsc::unbounded_channel();
    let task = tokio::spawn(updater(dir.path()).flush_when_waited_on(runner).run(output));
    let start = Instant::now();
    input.send(fetched("one", &acks)).await.expect("send");
    settle().await;
    assert_eq!(
        acked_so_far(&mut acked),
        0,
        "one of two in flight: it waits"
    );
    input.send(fetched("two", &acks)).await.expect("send");
    for _ in 0..2 {
        let ack = acked.recv().await.expect("an ack");
        assert!(matches!(ack, AckMessage::Acked(_)), "{ack:?}");
    }
    assert!(start.elapsed() < HOUR, "written before the flush interval");
    // The runner's count falling to what the batch holds also lets it go.
    state.send_replace(in_flight(3));
    input.send(fetched("three", &acks)).await.expect("send");
    input.send(fetched("four", &acks)).await.expect("send");
    settle().await;
    assert_eq!(
        acked_so_far(&mut acked),
        0,
        "two of three in flight: they wait"
    );
    state.send_replace(in_flight(2));
    for _ in 0..2 {
        let ack = acked.recv().await.expect("an ack");
        assert!(matches!(ack, AckMessage::Acked(_)), "{ack:?}");
    }
    assert!(start.elapsed() < HOUR, "written before the flush interval");
    drop(input);
    task.await.expect("the updater ends");
}

#[tokio::test(start_paused = true)]
async fn with_more_in_flight_or_no_runner_watched_a_batch_waits_for_the_interval() {
    for watched in [true, false] {
        let dir = tempfile::tempdir().expect("dir");
        let (_state, runner) = watch::channel(in_flight(5));
        let (input, output) = mpsc::channel(8);
        let (acks, mut acked) = mpsc::unbounded_channel();
        let updater = match watched {
            true => updater(dir.path()).flush_when_waited_on(runner),
            false => updater(dir.path()),
        };
        let task = tokio::spawn(updater.run(output));
        let start = Instant::now();
        input.send(fetched("one", &acks)).await.expect("send");
        let ack = acked.recv().await.expect("an ack");
        assert!(matches!(ack, AckMessage::Acked(_)), "{ack:?}");
        assert!(
            start.elapsed() >= HOUR,
            "watched {watched}: written at the interval, not after {:?}",
            start.elapsed()
        );
        drop(input);
        task.await.expect("the updater ends");
    }
}
