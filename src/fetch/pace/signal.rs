//! What one finished fetch tells its queue's pace: one [`Signal`], classified once.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::frontier::PaceCause;
use crate::message::{FetchFailure, FetchOutcome};

/// What a finished fetch says about its server's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// A 429, a 503 or a status of those codes, with Retry-After: the hold the server asked for
    /// (not capped).
    RetryAfter {
        /// The Retry-After.
        hold: Duration,
    },
    /// Nothing about the server's load: a body or archive failure, a refusal, an abandoned or
    /// fenced fetch, a 429 or 503 outside the codes without Retry-After.
    #[default]
    Neutral,
}

impl Signal {
    /// The signal of `outcome`, a fetch that took `took`, `codes` being
    /// `urlfrontier.backoff.status.codes`. A 429 or 503 with Retry-After is a hold whatever the
    /// codes (the fetcher holds it: [`holds`](Signal::holds)); without, one outside the codes says
    /// nothing (it is never a healthy answer).
    pub fn of(outcome: &FetchOutcome, took: Duration, codes: &[u16]) -> Signal {
        match outcome {
            FetchOutcome::Response(response) => {
                let status = response.status_code;
                match response.retry_after {
                    Some(hold) if Signal::holds(status, codes) => Signal::RetryAfter { hold },
                    _ if codes.contains(&status) => Signal::PushBack {
                        cause: PaceCause::Http(status),
                        took: Some(took),
                    },
                    _ if matches!(status, 429 | 503) => Signal::Neutral,
                    _ => Signal::Healthy { took },
                }
            }
            FetchOutcome::Failed { cause, .. } => match cause {
                FetchFailure::Connection => Signal::failure(PaceCause::Connection),
                FetchFailure::Timeout => Signal::failure(PaceCause::Timeout),
                _ => Signal::Neutral,
            },
            FetchOutcome::Abandoned { .. } => Signal::Neutral,
        }
    }

    /// Whether an answer of `status` with Retry-After holds its queue: a 429 or 503, or any of
    /// `codes` (`urlfrontier.backoff.status.codes`).
    pub fn holds(status: u16, codes: &[u16]) -> bool {
        matches!(status, 429 | 503) || codes.contains(&status)
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
