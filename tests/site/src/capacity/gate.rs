//! What one capacity host answers to a request: served after a latency that grows with its load,
//! or refused the way the host refuses; and the log's record of it.

use std::time::{Duration, Instant};

use crate::RequestRecord;

use super::bucket::TokenBucket;
use super::load::{LoadMeter, load_multiplier, page_factor, times};
use super::spec::{HostCapacity, OverCapacity};

/// The path every crawler asks first; answered 404 at once, outside the bucket.
pub const ROBOTS_PATH: &str = "/robots.txt";

/// What a host answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    /// Served (the page, or 404 for a path the host does not have) after `after`.
    Serve {
        /// The host-side latency: the page's unloaded time times `load`.
        after: Duration,
        /// What the host's load multiplied the page's unloaded time by (1: unloaded).
        load: f64,
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

/// One host's gate: its bucket, its arrival rate and the Retry-After window it has announced.
#[derive(Debug, Clone)]
pub struct HostGate {
    host: HostCapacity,
    bucket: TokenBucket,
    meter: LoadMeter,
    window: Option<(Instant, OverCapacity)>,
}

impl HostGate {
    /// The gate of `host`, its bucket full at `now`.
    pub fn new(host: &HostCapacity, now: Instant) -> HostGate {
        HostGate {
            host: host.clone(),
            bucket: TokenBucket::new(host.rate, host.burst, now),
            meter: LoadMeter::new(host.rate),
            window: None,
        }
    }

    /// The answer to a request for `path` arriving at `now`. Every request but `/robots.txt`
    /// counts in the arrival rate. Inside an announced Retry-After window the same refusal comes
    /// again; else a token is taken and the page served after its unloaded time times the load's
    /// multiplier ([`load_multiplier`] of the larger of the arrival rate over the capacity and the
    /// share of the bucket used); else the host refuses. Refusals take no token.
    pub fn answer(&mut self, path: &str, now: Instant) -> Answer {
        if path == ROBOTS_PATH {
            return Answer::NoRobots;
        }
        let arriving = self.meter.arrive(now) / self.host.rate.max(f64::MIN_POSITIVE);
        if let Some(again) = self.in_window(now) {
            return again;
        }
        match self.bucket.take(now) {
            Ok(used) => {
                let load = self.multiplier(arriving.max(used));
                Answer::Serve {
                    after: times(self.unloaded(path), load),
                    load,
                }
            }
            Err(_) => self.refuse(now),
        }
    }

    /// What a load of `rho` (a share of the capacity) multiplies answer times by.
    pub fn multiplier(&self, rho: f64) -> f64 {
        load_multiplier(rho, self.host.growth, self.host.knee)
    }

    /// How long the page at `path` takes unloaded.
    pub fn unloaded(&self, path: &str) -> Duration {
        times(self.host.unloaded, page_factor(path, self.host.spread))
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
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityRecord {
    /// The request, as every site of the crate logs it (its `at` is the arrival).
    pub request: RequestRecord,
    /// The host-side latency: how long the answer was held before it went out (zero for a
    /// refusal and for `/robots.txt`).
    pub served_in: Duration,
    /// What the host's load multiplied the page's unloaded time by (1 when not served).
    pub load: f64,
    /// The `Retry-After` the answer announced, if any.
    pub retry_after: Option<Duration>,
    /// Whether the answer was the host's over-capacity answer (429 or 503).
    pub over_capacity: bool,
}

impl CapacityRecord {
    /// The record of `request`, answered as `answer` says.
    pub fn of(request: RequestRecord, answer: &Answer) -> CapacityRecord {
        let (served_in, load, retry_after) = match *answer {
            Answer::Serve { after, load } => (after, load, None),
            Answer::Refuse { retry_after, .. } => (Duration::ZERO, 1.0, retry_after),
            Answer::NoRobots => (Duration::ZERO, 1.0, None),
        };
        CapacityRecord {
            request,
            served_in,
            load,
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
