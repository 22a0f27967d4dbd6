//! The fetcher's queues as a live view shows them: [`QueueBoard`] is a slot the fetcher writes a
//! [`FetcherView`] into when a reader asks for one, and that readers read whenever they like.
//!
//! A reader asks ([`QueueBoard::fresh_view`] waits a moment for the answer; [`QueueBoard::view`]
//! takes the last view and asks for the next) and the fetcher publishes at its next turn: one pass
//! over its queues per request (the busiest few are kept), and no work and no wake-up at all while
//! nobody reads.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::frontier::PaceCause;

/// How long [`QueueBoard::fresh_view`] waits for the fetcher (busy handing a page on, it answers
/// later; the reader then gets the view before).
const WAIT_AT_MOST: Duration = Duration::from_millis(200);
/// A view older than this is not a view of now.
const STALE_AFTER: Duration = Duration::from_secs(2);

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
    /// What is left of the hold the server asked for with Retry-After (or of the pace's block),
    /// when one runs.
    pub held_for: Option<Duration>,
    /// The interval the queue keeps and what set it, when its pace learned something
    /// (`fetcher.pace.policy` other than `fixed`).
    pub pace: Option<(Duration, PaceCause)>,
}

/// A queue kept slower than its configured delay by what its server answered, when it was
/// published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacedView {
    /// The partition key.
    pub key: String,
    /// The interval the queue keeps now.
    pub pace: Duration,
    /// What set it.
    pub cause: PaceCause,
    /// The delay configured for the queue (its Crawl-delay's, when robots.txt gave one).
    pub configured: Duration,
    /// Push-back incidents in a row.
    pub strikes: u32,
    /// Whether the fetcher holds the queue now; otherwise its pace waits, kept, for its next URL.
    pub held: bool,
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
    /// The queues kept furthest above their configured delay, held or kept for later, furthest
    /// first (at most the board's row count).
    pub paced: Vec<PacedView>,
    /// Queues kept above their configured delay, held or kept for later.
    pub backed_off: usize,
    /// Whether this is no view of now: nothing published yet, or the last publication is older
    /// than two seconds (the fetcher publishes only while the board is read: the first read after
    /// a quiet spell sees this, the next ones a fresh view).
    pub stale: bool,
}

/// A slot for the fetcher's [`FetcherView`]; clones share it.
#[derive(Debug, Clone)]
pub struct QueueBoard {
    shared: Arc<Shared>,
    rows: usize,
}

#[derive(Debug, Default)]
struct Shared {
    published: Mutex<Published>,
    /// Wakes the fetcher: a reader asked for a view.
    asked: Notify,
    /// Wakes the readers waiting: a view was published.
    answered: Notify,
}

#[derive(Debug, Default)]
struct Published {
    view: FetcherView,
    at: Option<Instant>,
    /// Whether a reader asked for a view since the last one was published.
    wanted: bool,
}

impl QueueBoard {
    /// A board keeping the `rows` busiest queues.
    pub fn new(rows: usize) -> Self {
        QueueBoard {
            shared: Arc::default(),
            rows,
        }
    }

    /// The last view published (empty and stale before the fetcher's first), asking the fetcher
    /// for the next: a reader that reads every so often sees the state of its last read.
    pub fn view(&self) -> FetcherView {
        let view = self.last();
        self.ask();
        view
    }

    /// A view of now: asks the fetcher and waits for its answer (at most 200 ms; then the last
    /// view, marked stale when it is older than two seconds).
    pub async fn fresh_view(&self) -> FetcherView {
        let answered = self.shared.answered.notified();
        tokio::pin!(answered);
        // Registered before asking, so that an answer given at once is not missed.
        answered.as_mut().enable();
        self.ask();
        let _ = tokio::time::timeout(WAIT_AT_MOST, answered).await;
        self.last()
    }

    /// The last view published, without asking for another.
    pub fn last(&self) -> FetcherView {
        let published = self.published();
        let mut view = published.view.clone();
        view.stale = published
            .at
            .is_none_or(|at| Instant::now().duration_since(at) > STALE_AFTER);
        view
    }

    /// How many of the busiest queues a view keeps.
    pub fn rows(&self) -> usize {
        self.rows
    }

    fn ask(&self) {
        self.published().wanted = true;
        self.shared.asked.notify_one();
    }

    fn published(&self) -> MutexGuard<'_, Published> {
        match self.shared.published.lock() {
            Ok(published) => published,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Whether a reader asked for a view since the last was published.
    pub(super) fn wanted(&self) -> bool {
        self.published().wanted
    }

    /// Resolves when a reader asks for a view (at once if one asked since the last call).
    pub(super) async fn asked(&self) {
        self.shared.asked.notified().await;
    }

    /// Publishes `view`, made at `now`, and wakes the readers waiting for it.
    pub(super) fn publish(&self, view: FetcherView, now: Instant) {
        {
            let mut published = self.published();
            published.view = view;
            published.at = Some(now);
            published.wanted = false;
        }
        self.shared.answered.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(n: usize) -> FetcherView {
        FetcherView {
            queued: n,
            ..FetcherView::default()
        }
    }

    #[test]
    fn the_fetcher_publishes_when_asked_and_a_fresh_view_is_not_stale() {
        let board = QueueBoard::new(5);
        assert!(!board.wanted(), "nobody read it: nothing to publish");
        assert!(board.view().stale, "nothing published yet");
        assert!(board.wanted(), "read: publish");
        board.publish(queued(3), Instant::now());
        assert!(!board.wanted(), "published: nothing more to do");
        let read = board.last();
        assert_eq!((read.queued, read.stale), (3, false));
        assert!(!board.wanted(), "last() asks for nothing");
    }

    #[tokio::test]
    async fn a_fresh_view_waits_for_the_fetchers_answer() {
        let board = QueueBoard::new(5);
        let fetcher = board.clone();
        let answering = tokio::spawn(async move {
            fetcher.asked().await;
            assert!(fetcher.wanted());
            fetcher.publish(queued(7), Instant::now());
        });
        let view = board.fresh_view().await;
        assert_eq!((view.queued, view.stale), (7, false));
        answering.await.expect("the fetcher's task");
    }

    #[tokio::test]
    async fn a_fresh_view_gives_up_on_a_busy_fetcher_and_says_so() {
        let board = QueueBoard::new(5);
        let three_seconds_ago = Instant::now()
            .checked_sub(Duration::from_secs(3))
            .expect("the clock runs longer than 3 s");
        board.publish(queued(2), three_seconds_ago);
        let view = board.fresh_view().await;
        assert_eq!(
            (view.queued, view.stale),
            (2, true),
            "the last view, too old"
        );
        assert!(board.wanted(), "still asked for");
    }
}
