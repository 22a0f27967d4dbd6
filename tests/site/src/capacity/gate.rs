//! What one capacity host answers to a request: served after a latency that grows with its load,
//! or refused the way the host refuses; and the log's record of it.

use std::time::{Duration, Instant};

use crate::RequestRecord;

use super::bucket::TokenBucket;
use super::spec::{HostCapacity, OverCapacity};

/// The path every crawler asks first; answered 404 at once, outside the bucket.
pub const ROBOTS_PATH: &str = "/robots.txt";

/// What a host answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    /// Served (the page, or 404 for a path the host does not have) after `after`.
    Serve {
        /// The host-side latency: `unloaded × (1 + growth·u²)`.
        after: Duration,
    },
    /// Refused at once: the host's [`OverCapacity`] answer, or the same again inside the window
    /// an earlier one announced.
    Refuse {
        /// The answer's kind.
        over: OverCapacity,
        /// The `Retry-After` sent with it: the rest of the window, in whole seconds rounded up.
        retry_after: Option<Duration>,
    },
    /// `/robots.txt`: 404 at once, no token taken.
    NoRobots,
}

/// One host's gate: its bucket and the Retry-After window it has announced.
#[derive(Debug, Clone)]
pub struct HostGate {
    host: HostCapacity,
    bucket: TokenBucket,
    window: Option<(Instant, OverCapacity)>,
}

impl HostGate {
    /// The gate of `host`, its bucket full at `now`.
    pub fn new(host: &HostCapacity, now: Instant) -> HostGate {
        HostGate {
            host: host.clone(),
            bucket: TokenBucket::new(host.rate, host.burst, now),
            window: None,
        }
    }

    /// The answer to a request for `path` arriving at `now`. Inside an announced Retry-After
    /// window the same refusal comes again; else a token is taken and the request served after
    /// `unloaded × (1 + growth·u²)`; else the host refuses. Refusals take no token.
    pub fn answer(&mut self, path: &str, now: Instant) -> Answer {
        if path == ROBOTS_PATH {
            return Answer::NoRobots;
        }
        if let Some(again) = self.in_window(now) {
            return again;
        }
        match self.bucket.take(now) {
            Ok(u) => Answer::Serve {
                after: self.latency(u),
            },
            Err(_) => self.refuse(now),
        }
    }

    /// The host's latency at depletion `u`.
    pub fn latency(&self, u: f64) -> Duration {
        let extra = (self.host.growth * u * u).max(0.0);
        self.host.unloaded + self.host.unloaded.mul_f64(extra)
    }

    /// The bucket, to look at.
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }

    /// The refusal repeated while `now` is inside the announced window.
    fn in_window(&mut self, now: Instant) -> Option<Answer> {
        let (until, over) = self.window?;
        if now >= until {
            self.window = None;
            return None;
        }
        let rest = until - now;
        let seconds = rest.as_secs() + u64::from(rest.subsec_nanos() > 0);
        Some(Answer::Refuse {
            over,
            retry_after: Some(Duration::from_secs(seconds)),
        })
    }

    /// The host's over-capacity answer, opening its Retry-After window if it announces one.
    fn refuse(&mut self, now: Instant) -> Answer {
        let over = self.host.over;
        let retry_after = over.retry_after();
        if let Some(wait) = retry_after {
            self.window = Some((now + wait, over));
        }
        Answer::Refuse { over, retry_after }
    }
}

/// One request to the capacity site, as its log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapacityRecord {
    /// The request, as every site of the crate logs it (its `at` is the arrival).
    pub request: RequestRecord,
    /// The host-side latency: how long the answer was held before it went out (zero for a
    /// refusal and for `/robots.txt`).
    pub served_in: Duration,
    /// The `Retry-After` the answer announced, if any.
    pub retry_after: Option<Duration>,
    /// Whether the answer was the host's over-capacity answer (429 or 503).
    pub over_capacity: bool,
}

impl CapacityRecord {
    /// The record of `request`, answered as `answer` says.
    pub fn of(request: RequestRecord, answer: &Answer) -> CapacityRecord {
        let (served_in, retry_after) = match *answer {
            Answer::Serve { after } => (after, None),
            Answer::Refuse { retry_after, .. } => (Duration::ZERO, retry_after),
            Answer::NoRobots => (Duration::ZERO, None),
        };
        CapacityRecord {
            request,
            served_in,
            retry_after,
            over_capacity: matches!(answer, Answer::Refuse { .. }),
        }
    }

    /// When the request arrived.
    pub fn at(&self) -> Instant {
        self.request.at
    }

    /// Whether the request was for `/robots.txt`, which the judge leaves out.
    pub fn is_robots(&self) -> bool {
        self.request.path == ROBOTS_PATH
    }
}
