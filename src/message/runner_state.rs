//! What the spout runner publishes of its state ([`RunnerState`]), and how a stage that holds a
//! batch (the status updater, the content indexer) waits on it: for its next update, for its
//! batch's flush interval, or for the runner's count of URLs in flight to change, since a batch
//! that holds every URL in flight is what the crawl waits on and is written at once.

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// What the runner is doing, published for progress displays and for `--until-idle`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunnerState {
    /// URLs emitted and not yet acked or failed.
    pub in_flight: usize,
    /// URLs read from the frontier and not yet emitted.
    pub buffered: usize,
    /// URLs emitted so far.
    pub emitted: u64,
    /// URLs acked so far.
    pub acked: u64,
    /// URLs failed so far.
    pub failed: u64,
    /// Nothing is due, buffered, in flight, or failed and waiting to be tried again.
    pub idle: bool,
}

/// What woke a batching stage.
pub(crate) enum Wake<T> {
    /// An update, or `None` when the input closed.
    Update(Option<Box<T>>),
    /// The oldest update of the batch has waited the flush interval.
    Due,
    /// The runner's state changed (`false`: the runner is gone).
    Runner(bool),
}

/// The next of: an update on `input`, the `deadline`, a change of `runner`'s state (watched only
/// while `batch_waits`, a batch being held).
pub(crate) async fn next_wake<T>(
    input: &mut mpsc::Receiver<T>,
    deadline: Option<Instant>,
    runner: &mut Option<watch::Receiver<RunnerState>>,
    batch_waits: bool,
) -> Wake<T> {
    let due = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    let changed = async {
        match runner {
            Some(runner) if batch_waits => runner.changed().await.is_ok(),
            _ => std::future::pending().await,
        }
    };
    tokio::select! {
        update = input.recv() => Wake::Update(update.map(Box::new)),
        () = due => Wake::Due,
        alive = changed => Wake::Runner(alive),
    }
}

/// Whether a batch of `held` URLs holds every URL the runner has in flight (no runner: never).
pub(crate) fn waited_on(runner: Option<&watch::Receiver<RunnerState>>, held: usize) -> bool {
    runner.is_some_and(|runner| held > 0 && held >= runner.borrow().in_flight)
}
