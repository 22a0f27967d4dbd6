//! `adaptive`: squall's pace of one queue. The delay doubles (with jitter) while the server
//! pushes back, once per incident, and comes back down after healthy answers, to a margin above
//! the delay that drew the push-back, then, after enough calm answers, below it (probing).

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{Event, LEAST_BACKOFF, Latency, Rules, Signal, grown, scaled};
use crate::frontier::{LearnedPace, PaceCause};

/// What slow answers multiply the delay by: a mild push-back.
const SLOW_STEP: f64 = 1.25;

/// A report is worth sharing once the delay moved this share away from the last one reported.
const REPORT_MOVE: f64 = 0.25;

/// One queue's adaptive pace.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    /// From the end of one fetch to the start of the next.
    delay: Duration,
    /// The signal that set it.
    cause: PaceCause,
    /// Push-back incidents since the last healthy answer.
    strikes: u32,
    /// The delay that last drew push-back, and when.
    limit: Option<(Duration, Instant)>,
    /// Healthy answers since the delay last changed.
    calm: u32,
    /// When the last incident escalated the pace: fetches started before answer that incident.
    escalated_at: Option<Instant>,
    /// The host's answer times.
    latency: Latency,
    /// When the pace was last learned (none: only configured).
    at: Option<DateTime<Utc>>,
    /// The delay, cause and strikes last reported.
    reported: (Duration, PaceCause, u32),
}

impl Pace {
    /// A queue's pace before anything is learned: its configured delay.
    pub fn new(rules: &Rules<'_>) -> Pace {
        Pace {
            delay: rules.configured,
            cause: PaceCause::Configured,
            strikes: 0,
            limit: None,
            calm: 0,
            escalated_at: None,
            latency: Latency::default(),
            at: None,
            reported: (rules.configured, PaceCause::Configured, 0),
        }
    }

    /// Follows what one finished fetch said.
    pub fn observe(&mut self, event: &Event, rules: &Rules<'_>, rng: &mut fastrand::Rng) {
        match event.signal {
            Signal::Neutral => {}
            Signal::PushBack { .. } if event.signal.is_failure() => {
                if rules.policy.backoff_on_failures {
                    self.push_back(event, rules, rng);
                }
            }
            Signal::PushBack { .. } | Signal::RetryAfter { .. } => {
                self.push_back(event, rules, rng)
            }
            Signal::Healthy { took } => self.healthy(took, event, rules),
        }
    }

    /// The interval the queue keeps now: the delay within its floor and ceiling, and at least
    /// `fetcher.pace.latency.factor` times the recent answer time.
    pub fn interval(&self, rules: &Rules<'_>) -> Duration {
        let answers = self.latency.recent().unwrap_or_default();
        rules.clamp(self.delay.max(scaled(answers, rules.policy.latency_factor)))
    }

    /// Whether `event`'s fetch started before the last escalation: it answers that incident.
    fn answers_earlier_incident(&self, event: &Event) -> bool {
        self.escalated_at.is_some_and(|at| event.started < at)
    }

    /// A push-back (or a Retry-After): one step slower, once per incident.
    fn push_back(&mut self, event: &Event, rules: &Rules<'_>, rng: &mut fastrand::Rng) {
        if self.answers_earlier_incident(event) {
            return;
        }
        let policy = rules.policy;
        let from = self.delay.max(LEAST_BACKOFF);
        let slower = grown(from, policy.backoff_factor, policy.backoff_jitter, rng);
        self.strikes = self.strikes.saturating_add(1);
        self.escalate(slower, event, rules);
        self.cause = match event.signal {
            Signal::PushBack { cause, .. } => cause,
            _ => PaceCause::RetryAfter,
        };
    }

    /// Answers slower than the host's unloaded time: a mild push-back, no strike.
    fn slow_answers(&mut self, event: &Event, rules: &Rules<'_>) {
        let slower = scaled(self.delay.max(LEAST_BACKOFF), SLOW_STEP);
        self.escalate(slower, event, rules);
        self.cause = PaceCause::SlowAnswers;
    }

    /// The delay set to `slower` (within the ceiling), the old one kept as the limit.
    fn escalate(&mut self, slower: Duration, event: &Event, rules: &Rules<'_>) {
        self.limit = Some((self.delay, event.finished));
        self.delay = slower.min(rules.ceiling());
        self.escalated_at = Some(event.finished);
        self.calm = 0;
        self.at = Some(event.at);
    }

    /// A healthy answer: its time counted, then slower on inflated answers, else one step back
    /// toward the target. A fetch started before the last escalation tells nothing of the pace
    /// set since: it moves the delay neither way.
    fn healthy(&mut self, took: Duration, event: &Event, rules: &Rules<'_>) {
        if self.strikes > 0 {
            self.strikes = 0;
            self.at = Some(event.at);
        }
        self.latency.record(took);
        self.forget_decayed_limit(event.finished, rules);
        if self.answers_earlier_incident(event) {
            return;
        }
        if self.latency.inflated(rules.policy.latency_inflation) {
            self.slow_answers(event, rules);
        } else {
            self.recover(event, rules);
        }
    }

    /// The limit forgotten `urlfrontier.backoff.decay.secs` after the push-back that set it.
    fn forget_decayed_limit(&mut self, now: Instant, rules: &Rules<'_>) {
        let decay = rules.policy.backoff_decay;
        if self.limit.is_some_and(|(_, since)| now >= since + decay) {
            self.limit = None;
        }
    }

    /// Where healthy answers bring the delay: a margin above the limit, else the floor.
    fn target(&self, rules: &Rules<'_>) -> Duration {
        let policy = rules.policy;
        match self.limit {
            Some((limit, _)) => rules.floor.max(scaled(limit, 1.0 + policy.recovery_margin)),
            None => rules.floor,
        }
    }

    /// One step down toward the target; at the target, calm answers counted until the margin is
    /// dropped (the limit forgotten) and the delay probes lower.
    fn recover(&mut self, event: &Event, rules: &Rules<'_>) {
        let target = self.target(rules);
        if self.delay > target {
            let step = scaled(self.delay, 1.0 - rules.policy.recovery_step);
            self.delay = step.max(target);
            self.calm = 0;
            self.cause = self.cause_now(rules);
            self.at = Some(event.at);
            return;
        }
        self.delay = self.delay.max(rules.floor);
        self.calm = self.calm.saturating_add(1);
        if self.limit.is_some() && self.calm >= rules.policy.recovery_probe {
            self.limit = None;
            self.calm = 0;
        }
    }

    /// The cause of a delay reached on healthy answers.
    fn cause_now(&self, rules: &Rules<'_>) -> PaceCause {
        if self.delay < rules.server_delay {
            PaceCause::Faster
        } else if self.delay <= rules.configured {
            PaceCause::Configured
        } else {
            PaceCause::Recovering
        }
    }
}

impl Pace {
    /// The delay kept now (before the latency factor: see [`interval`](Self::interval)).
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// The signal that set the delay.
    pub fn cause(&self) -> PaceCause {
        self.cause
    }

    /// Push-back incidents since the last healthy answer.
    pub fn strikes(&self) -> u32 {
        self.strikes
    }

    /// The delay that last drew push-back, while it is remembered.
    pub fn limit(&self) -> Option<Duration> {
        self.limit.map(|(limit, _)| limit)
    }

    /// When the pace was last learned; none while it is only configured.
    pub fn at(&self) -> Option<DateTime<Utc>> {
        self.at
    }

    /// Whether the pace is the configured one with nothing learned to keep.
    pub fn is_settled(&self, rules: &Rules<'_>) -> bool {
        self.delay == rules.configured && self.limit.is_none() && self.strikes == 0
    }

    /// What the queue learned, to share; none before anything was learned.
    pub fn learned(&self) -> Option<LearnedPace> {
        Some(LearnedPace {
            delay: self.delay,
            cause: self.cause,
            strikes: self.strikes,
            limit: self.limit(),
            at: self.at?,
        })
    }

    /// What the queue learned, when it changed enough to be worth sharing since the last report:
    /// another cause, other strikes, or a delay moved by a quarter. Every back-off step is one;
    /// a settled queue reports nothing.
    pub fn report(&mut self) -> Option<LearnedPace> {
        let (delay, cause, strikes) = self.reported;
        let moved = self.delay.abs_diff(delay) >= scaled(delay, REPORT_MOVE);
        if cause == self.cause && strikes == self.strikes && !moved {
            return None;
        }
        self.reported = (self.delay, self.cause, self.strikes);
        self.learned()
    }

    /// Takes `learned` (from the frontier) when it is newer than what this queue learned, its
    /// delay within the floor and the ceiling (a guard against clock skew); `now` starts the
    /// limit's decay. Whether it was taken.
    pub fn adopt(&mut self, learned: LearnedPace, rules: &Rules<'_>, now: Instant) -> bool {
        if self.at.is_some_and(|at| learned.at <= at) {
            return false;
        }
        self.delay = rules.clamp(learned.delay);
        self.cause = learned.cause;
        self.strikes = learned.strikes;
        self.limit = learned.limit.map(|limit| (limit, now));
        self.calm = 0;
        self.escalated_at = None;
        self.at = Some(learned.at);
        self.reported = (self.delay, self.cause, self.strikes);
        true
    }
}
