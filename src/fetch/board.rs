//! The fetcher's queues as a live view shows them: [`QueueBoard`] is a slot the fetcher writes a
//! [`FetcherView`] into at most once a second while someone reads it, and that a status page reads
//! whenever it likes.
//!
//! Publishing costs one pass over the queues a second (the busiest few are kept), and nothing when
//! no board is attached or nobody read it in the last ten seconds; reading costs a lock and a copy
//! of a few rows.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// How often the fetcher publishes.
const PUBLISH_EVERY: Duration = Duration::from_secs(1);
/// The fetcher publishes while the board was read within this long.
const READ_WITHIN: Duration = Duration::from_secs(10);

/// One queue of the fetcher, when it was published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueView {
    /// The partition key (host, domain or IP).
    pub key: String,
    /// URLs waiting in the queue.
    pub queued: usize,
    /// Fetches of the queue in progress.
    pub in_flight: usize,
    /// How long until the queue may start its next fetch (zero: it may now).
    pub next_fetch_in: Duration,
    /// The delay between two fetches robots.txt (Crawl-delay) or the frontier asked for, when one did.
    pub crawl_delay: Option<Duration>,
    /// What is left of the hold the server asked for with Retry-After, when one runs.
    pub held_for: Option<Duration>,
}

/// The fetcher's queues, when it was published.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetcherView {
    /// URLs waiting over all queues.
    pub queued: usize,
    /// Queues known to the fetcher (waiting URLs, fetches in flight, or a delay still running).
    pub queues: usize,
    /// Fetches in progress.
    pub active: usize,
    /// The queues holding the most URLs, most first (at most the board's row count).
    pub busiest: Vec<QueueView>,
    /// The waiting queue that may fetch soonest, and in how long, when one waits for its delay.
    pub next_wake: Option<(String, Duration)>,
    /// Whether this is no view of now: nothing published yet, or the last publication is older
    /// than two seconds (the fetcher publishes only while the board is read: the first read after
    /// a quiet spell sees this, the next ones a fresh view).
    pub stale: bool,
}

/// A slot for the fetcher's [`FetcherView`]; clones share it.
#[derive(Debug, Clone)]
pub struct QueueBoard {
    shared: Arc<Mutex<Published>>,
    rows: usize,
}

#[derive(Debug, Default)]
struct Published {
    view: FetcherView,
    at: Option<Instant>,
    read: Option<Instant>,
}

impl QueueBoard {
    /// A board keeping the `rows` busiest queues.
    pub fn new(rows: usize) -> Self {
        QueueBoard {
            shared: Arc::default(),
            rows,
        }
    }

    /// The last view published (empty before the fetcher's first); the fetcher publishes within
    /// a second of a read, and every second while reads go on.
    pub fn view(&self) -> FetcherView {
        let mut published = match self.shared.lock() {
            Ok(published) => published,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = Instant::now();
        published.read = Some(now);
        let mut view = published.view.clone();
        view.stale = published
            .at
            .is_none_or(|at| now.duration_since(at) > 2 * PUBLISH_EVERY);
        view
    }

    /// How many of the busiest queues a view keeps.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Whether the board was read lately and a second has passed since the last publication.
    pub(super) fn due(&self, now: Instant) -> bool {
        let Ok(published) = self.shared.lock() else {
            return false;
        };
        let read_lately = published
            .read
            .is_some_and(|read| now.duration_since(read) < READ_WITHIN);
        read_lately
            && published
                .at
                .is_none_or(|at| now.duration_since(at) >= PUBLISH_EVERY)
    }

    /// Publishes `view`, made at `now`.
    pub(super) fn publish(&self, view: FetcherView, now: Instant) {
        if let Ok(mut published) = self.shared.lock() {
            published.view = view;
            published.at = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fetcher_publishes_once_read_and_a_fresh_view_is_not_stale() {
        let board = QueueBoard::new(5);
        let start = Instant::now();
        assert!(!board.due(start), "nobody read it: nothing to publish");
        assert!(board.view().stale, "nothing published yet");
        let now = Instant::now();
        assert!(board.due(now), "read: publish");
        let view = FetcherView {
            queued: 3,
            ..FetcherView::default()
        };
        board.publish(view, now);
        assert!(!board.due(now), "published within the second");
        let read = board.view();
        assert_eq!((read.queued, read.stale), (3, false));
    }
}
