//! The queues a live view lists as paced by their server: those whose pace keeps them above their
//! configured delay, held by the fetcher or kept in its book for when they come back.

use std::time::Duration;

use super::{HostQueues, queue_delay, queue_rules};
use crate::fetch::board::PacedView;
use crate::fetch::pace::QueuePace;
use crate::fetch::settings::FetcherSettings;

impl HostQueues {
    /// The `rows` queues kept furthest above their configured delay (by the ratio of the two),
    /// furthest first, and how many are above it in all. One pass over the queues and the book.
    pub(super) fn paced(&self, rows: usize) -> (Vec<PacedView>, usize) {
        let held = self
            .queues
            .iter()
            .map(|(key, queue)| (key.as_str(), &queue.pace, queue.crawl_delay, true));
        // A kept pace's queue has no Crawl-delay known now: it is read as configured without one.
        let kept = self
            .paces
            .kept()
            .map(|(key, pace)| (key, pace, None, false));
        let mut paced: Vec<PacedView> = held
            .chain(kept)
            .filter_map(|(key, pace, crawl_delay, held)| {
                above_configured(&self.settings, key, pace, crawl_delay, held)
            })
            .collect();
        let backed_off = paced.len();
        paced.sort_by(|a, b| {
            ratio(b)
                .total_cmp(&ratio(a))
                .then_with(|| a.key.cmp(&b.key))
        });
        paced.truncate(rows);
        (paced, backed_off)
    }
}

/// The view of a queue whose pace keeps it above its configured delay; `None` for any other.
fn above_configured(
    settings: &FetcherSettings,
    key: &str,
    pace: &QueuePace,
    crawl_delay: Option<Duration>,
    held: bool,
) -> Option<PacedView> {
    let rules = queue_rules(settings, crawl_delay);
    let learned = pace.learned(&rules)?;
    let interval = pace.interval(&rules);
    let configured = queue_delay(settings, crawl_delay);
    (interval > configured).then(|| PacedView {
        key: key.to_string(),
        pace: interval,
        cause: learned.cause,
        configured,
        strikes: learned.strikes,
        held,
    })
}

/// How far above its configured delay a queue is kept.
fn ratio(view: &PacedView) -> f64 {
    view.pace.as_secs_f64() / view.configured.as_secs_f64().max(0.001)
}
