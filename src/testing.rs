//! Helpers the unit tests of every module share.

use url::Url;

/// `text` as a URL; a test's own URLs are valid.
pub(crate) fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}

/// The spout runner's state with `count` URLs in flight, as the batching stages' tests publish it.
pub(crate) fn in_flight(count: usize) -> crate::message::RunnerState {
    crate::message::RunnerState {
        in_flight: count,
        ..Default::default()
    }
}

/// Lets the tasks under test run as far as they can without tokio's paused clock moving.
pub(crate) async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}
