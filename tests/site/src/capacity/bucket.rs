//! A token bucket, pure: the time is passed in, so the same calls give the same answers.

use std::time::{Duration, Instant};

/// The bucket had no whole token: how long until it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Empty {
    /// The wait until the next whole token.
    pub wait: Duration,
}

/// A token bucket of `burst` tokens refilled at `rate` tokens per second. It starts full.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket at `now`. A `burst` under 1 is taken as 1, so a token can always come.
    pub fn new(rate: f64, burst: f64, now: Instant) -> TokenBucket {
        let burst = burst.max(1.0);
        TokenBucket {
            rate: rate.max(0.0),
            burst,
            tokens: burst,
            at: now,
        }
    }

    /// The tokens in the bucket at `now` (a time before the last one seen counts as that one).
    pub fn tokens(&self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        (self.tokens + elapsed * self.rate).min(self.burst)
    }

    /// How drained the bucket is at `now`: `u = 1 − tokens/burst`, 0 when full.
    pub fn depletion(&self, now: Instant) -> f64 {
        1.0 - self.tokens(now) / self.burst
    }

    /// Takes a token at `now`: the bucket's depletion before the take (0 for a full bucket), or
    /// [`Empty`] with the wait for the next token, and then nothing is taken.
    pub fn take(&mut self, now: Instant) -> Result<f64, Empty> {
        let now = now.max(self.at);
        let tokens = self.tokens(now);
        self.tokens = tokens;
        self.at = now;
        if tokens < 1.0 {
            let wait = if self.rate > 0.0 {
                Duration::try_from_secs_f64((1.0 - tokens) / self.rate).unwrap_or(Duration::MAX)
            } else {
                Duration::MAX
            };
            return Err(Empty { wait });
        }
        let depletion = self.depletion(now);
        self.tokens -= 1.0;
        Ok(depletion)
    }
}
