//! Each queue's pace, learned from what its server answers: the pure, clock-free state the
//! fetcher keeps per queue under `fetcher.pace.policy` ([`PaceKind`](super::PaceKind)).
//!
//! Every finished fetch is classified once into a [`Signal`] and handed, with its start and end
//! ([`Event`]), to the queue's state: [`Pace`] under `adaptive` (the delay doubles while the
//! server pushes back and comes back down after healthy answers), [`Block`] under `block`
//! (StormCrawler's URLFrontier back-off: each incident a hold, 60 s, doubled, up to a day).
//! `fixed` keeps no state; [`QueuePace`] is whichever the policy keeps. What a queue learned is shared through the frontier as a
//! [`LearnedPace`](crate::frontier::LearnedPace); [`PaceBook`] keeps it in this process for
//! queues the fetcher forgot. Time is passed in as values and the jitter comes from the
//! caller's random generator, so every transition can be replayed.

mod adaptive;
mod block;
mod book;
mod latency;
mod queue;
mod signal;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use adaptive::Pace;
pub use block::Block;
pub use book::{BOOK_CAPACITY, PaceBook};
pub use latency::Latency;
pub use queue::QueuePace;
pub use signal::{Event, Signal};

use super::{FetcherSettings, PacePolicy};

/// What one queue's pace is bound by: the policy's keys, and the delays the queue is configured
/// with.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// The pace keys.
    pub policy: &'a PacePolicy,
    /// The queue's configured delay: `fetcher.server.delay` (or the min delay), or its
    /// robots.txt Crawl-delay.
    pub configured: Duration,
    /// The shortest delay the pace may keep: the configured one, or `fetcher.pace.floor` when
    /// set and robots.txt gives no Crawl-delay.
    pub floor: Duration,
    /// `fetcher.server.delay`: below it, a pace is `faster`.
    pub server_delay: Duration,
}

impl<'a> Rules<'a> {
    /// The rules of a queue whose configured delay is `configured` (as the fetcher's queues
    /// compute it), `robots` telling whether robots.txt gave it a Crawl-delay: a Crawl-delay is
    /// never undercut.
    pub fn new(settings: &'a FetcherSettings, configured: Duration, robots: bool) -> Self {
        let floor = match settings.pace.floor {
            Some(floor) if !robots => floor.min(configured),
            _ => configured,
        };
        Rules {
            policy: &settings.pace,
            configured,
            floor,
            server_delay: settings.server_delay,
        }
    }

    /// The longest delay a back-off may reach: `fetcher.pace.backoff.max`, or the configured
    /// delay when that is longer (a back-off never makes a queue faster).
    pub fn ceiling(&self) -> Duration {
        self.policy.backoff_max.max(self.configured)
    }

    /// `delay` within the floor and the ceiling.
    pub fn clamp(&self, delay: Duration) -> Duration {
        delay.clamp(self.floor, self.ceiling())
    }
}

/// `duration` times `by`, saturating (a factor read from the keys is finite and not negative;
/// anything else gives the longest duration, which the caller's cap then bounds).
fn scaled(duration: Duration, by: f64) -> Duration {
    Duration::try_from_secs_f64(duration.as_secs_f64() * by).unwrap_or(Duration::MAX)
}

/// The shortest delay a back-off starts from, so that a queue with no delay still backs off.
const LEAST_BACKOFF: Duration = Duration::from_millis(100);

/// What a push-back multiplies a delay by: the factor, plus up to `jitter` of it at random (the
/// jitter only lengthens).
fn grown(delay: Duration, factor: f64, jitter: f64, rng: &mut fastrand::Rng) -> Duration {
    scaled(delay, factor * (1.0 + jitter * rng.f64()))
}
