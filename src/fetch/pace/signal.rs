//! What one finished fetch tells its queue's pace: one [`Signal`], classified once.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::frontier::PaceCause;
use crate::message::{FetchFailure, FetchOutcome};

/// What a finished fetch says about its server's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Any other answer (404 and 500 included), and how long it took.
    Healthy {
        /// From the start of the request to the end of the answer.
        took: Duration,
    },
    /// The server pushed back: a status of `urlfrontier.backoff.status.codes` without
    /// Retry-After, a failed connection or a timeout.
    PushBack {
        /// Which push-back.
        cause: PaceCause,
        /// How long the answer took, when there was one.
        took: Option<Duration>,
    },
    /// A status of those codes with Retry-After: the hold the server asked for (not capped).
    RetryAfter {
        /// The Retry-After.
        hold: Duration,
    },
    /// Nothing about the server's load: a redirect, body or archive failure, a refusal, an
    /// abandoned or fenced fetch.
    Neutral,
}

impl Signal {
    /// The signal of `outcome`, a fetch that took `took`, `codes` being
    /// `urlfrontier.backoff.status.codes`.
    pub fn of(outcome: &FetchOutcome, took: Duration, codes: &[u16]) -> Signal {
        match outcome {
            FetchOutcome::Response(response) if codes.contains(&response.status_code) => {
                match response.retry_after {
                    Some(hold) => Signal::RetryAfter { hold },
                    None => Signal::PushBack {
                        cause: PaceCause::Http(response.status_code),
                        took: Some(took),
                    },
                }
            }
            FetchOutcome::Response(_) => Signal::Healthy { took },
            FetchOutcome::Failed { cause, .. } => match cause {
                FetchFailure::Connection => Signal::failure(PaceCause::Connection),
                FetchFailure::Timeout => Signal::failure(PaceCause::Timeout),
                _ => Signal::Neutral,
            },
            FetchOutcome::Abandoned { .. } => Signal::Neutral,
        }
    }

    /// A push-back without an answer.
    fn failure(cause: PaceCause) -> Signal {
        Signal::PushBack { cause, took: None }
    }

    /// Whether this is a failed connection or a timeout (which `fetcher.pace.backoff.on.failures`
    /// and `urlfrontier.backoff.on.exceptions` may leave out).
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Signal::PushBack {
                cause: PaceCause::Connection | PaceCause::Timeout,
                ..
            }
        )
    }
}

/// One finished fetch as its queue's pace sees it: its signal, when it started and ended, and
/// the wall-clock time it ended at (what a learned pace is dated with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// What the fetch said.
    pub signal: Signal,
    /// When the fetch started: one that started before the last escalation answers the same
    /// incident.
    pub started: Instant,
    /// When it ended.
    pub finished: Instant,
    /// When it ended, on the wall clock.
    pub at: DateTime<Utc>,
}
