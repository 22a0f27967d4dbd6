//! `adaptive`: squall's pace of one queue. The delay doubles (with jitter) while the server
//! pushes back, once per incident, and comes back down after healthy answers, to a margin above
//! the interval that drew the push-back, then, after enough calm answers, lower by a recovery step
//! at a time (probing). Answers slower than the host's usual time (see
//! [`Latency`]) step the delay up by half, up to a bound; three such steps in a row with no calm
//! stretch between them take the answers for the host's own instead of our load.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::{Event, LEAST_BACKOFF, Latency, Rules, Signal, grown, scaled};
use crate::frontier::{LearnedPace, PaceCause};

/// What slow answers multiply the delay by: half a push-back's doubling. Found slow once its
/// answers are 1.5 to 2 times slower than usual, a host under a load model like the capacity
/// site's is 90 to 95 % loaded: two thirds of that is back under its knee.
const SLOW_STEP: f64 = 1.5;

/// Slow answers alone never take the delay past this many times the configured one (a real
/// push-back may): enough for a host that takes a fifth of the configured pace.
const SLOW_BOUND: f64 = 8.0;

/// The bound of slow answers for a queue configured with almost no delay.
const SLOW_LEAST_BOUND: Duration = Duration::from_secs(1);

/// Slow-answer steps in a row (with no calm stretch at the target between them) after which
/// answers still slower than usual are taken for the host's own: its usual time is set anew.
const SLOW_RUN: u32 = 3;

/// Healthy answers after a slow-answer step before slow answers count again.
const SETTLE: u32 = 8;

/// Calm answers at the target that end a run of slow-answer steps.
const RUN_ENDS: u32 = 16;

/// Healthy answers per recovery step down toward the target: a host's load shows in its answers
/// only some seconds after it grows (the capacity site measures it over 5-25 s), and a step every
/// answer reached a target over a Retry-After host's capacity before any answer showed it. In the
/// replay of the `pace` benchmark's site, two (with a margin of 0.4 for 0.5) gave at the 0.25 s
/// floor 0.84-0.85 of one fetch at a time and a p95 of 1.23-1.30 times unloaded over every answer,
/// for 0.83-0.84 and 1.35-1.36; at the 1 s floor 0.88-0.89 and 1.26-1.42 for 0.88-0.89 and
/// 1.29-1.45.
const DESCENT: u32 = 2;

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
    /// The interval that last drew push-back, and when.
    limit: Option<(Duration, Instant)>,
    /// Answers still to come before slow answers count again, after a slow-answer step.
    settling: u32,
    /// The run of slow-answer steps going on, if any.
    slow_run: Option<SlowRun>,
    /// Healthy answers since the delay last changed.
    calm: u32,
    /// When the last incident escalated the pace: fetches started before answer that incident.
    escalated_at: Option<Instant>,
    /// The host's answer times.
    latency: Latency,
    /// When the pace was last learned (none: only configured).
    at: Option<DateTime<Utc>>,
    /// What was last reported.
    reported: Reported,
}

/// Slow-answer steps taken in a row: past `SLOW_RUN` of them the answers are the host's own, and
/// the limit goes back to the one before the run.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SlowRun {
    /// Steps taken.
    steps: u32,
    /// The limit before the run.
    before: Option<(Duration, Instant)>,
}

/// The delay, cause, strikes and limit last reported.
type Reported = (Duration, PaceCause, u32, Option<Duration>);

impl Pace {
    /// A queue's pace before anything is learned: its configured delay.
    pub fn new(rules: &Rules<'_>) -> Pace {
        Pace {
            delay: rules.configured,
            cause: PaceCause::Configured,
            strikes: 0,
            limit: None,
            settling: 0,
            slow_run: None,
            calm: 0,
            escalated_at: None,
            latency: Latency::default(),
            at: None,
            reported: (rules.configured, PaceCause::Configured, 0, None),
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

    /// A push-back (or a Retry-After): one step slower than the interval in force (which the
    /// answer time may have set above the delay), once per incident; that interval is the limit.
    /// The answers held back while evidence of slow answers built were given under that load:
    /// they never join the host's usual ones.
    fn push_back(&mut self, event: &Event, rules: &Rules<'_>, rng: &mut fastrand::Rng) {
        if self.answers_earlier_incident(event) {
            return;
        }
        let policy = rules.policy;
        let drew = self.interval(rules);
        let slower = grown(
            drew.max(LEAST_BACKOFF),
            policy.factor(),
            policy.backoff_jitter,
            rng,
        );
        self.strikes = self.strikes.saturating_add(1);
        self.limit = Some((drew, event.finished));
        self.latency.clear_evidence();
        self.settling = 0;
        self.slow_run = None;
        self.escalate(slower, event, rules);
        self.cause = match event.signal {
            Signal::PushBack { cause, .. } => cause,
            _ => PaceCause::RetryAfter,
        };
    }

    /// Answers slower than the host's usual time: a step of `SLOW_STEP`, no strike, up to
    /// `SLOW_BOUND` times the configured delay; the interval that drew them is the limit. After
    /// `SLOW_RUN` steps in a row, the answers are taken for the host's own instead: its usual
    /// time is set anew and the limit goes back to the one before the run.
    fn slow_answers(&mut self, event: &Event, rules: &Rules<'_>) {
        self.latency.clear_evidence();
        let run = self.slow_run.unwrap_or(SlowRun {
            steps: 0,
            before: self.limit,
        });
        if run.steps >= SLOW_RUN {
            self.latency.rebase();
            self.limit = run.before;
            self.slow_run = None;
            return;
        }
        let bound = scaled(rules.configured, SLOW_BOUND).max(SLOW_LEAST_BOUND);
        if self.delay >= bound {
            return;
        }
        let drew = self.interval(rules);
        let slower = scaled(drew.max(LEAST_BACKOFF), SLOW_STEP).min(bound.max(drew));
        self.slow_run = Some(SlowRun {
            steps: run.steps + 1,
            ..run
        });
        self.settling = SETTLE;
        self.limit = Some((drew, event.finished));
        self.escalate(slower, event, rules);
        self.cause = PaceCause::SlowAnswers;
    }

    /// The delay set to `slower` (within the ceiling).
    fn escalate(&mut self, slower: Duration, event: &Event, rules: &Rules<'_>) {
        self.delay = slower.min(rules.ceiling());
        self.escalated_at = Some(event.finished);
        self.calm = 0;
        self.date(event.at);
    }

    /// Dates the pace `at`, never earlier than it already is.
    fn date(&mut self, at: DateTime<Utc>) {
        self.at = Some(self.at.map_or(at, |known| known.max(at)));
    }

    /// A healthy answer: its time counted, then slower on inflated answers, else one step back
    /// toward the target. A fetch started before the last escalation tells nothing of the pace
    /// set since: it moves the delay neither way.
    fn healthy(&mut self, took: Duration, event: &Event, rules: &Rules<'_>) {
        self.latency.record(took, rules.policy.latency_inflation);
        self.forget_decayed_limit(event.finished, rules);
        if self.answers_earlier_incident(event) {
            return;
        }
        if self.strikes > 0 {
            self.strikes = 0;
            self.date(event.at);
        }
        if self.settling_slow_step() {
            return;
        }
        if self.latency.inflated(rules.policy.latency_inflation) {
            self.slow_answers(event, rules);
        } else {
            self.recover(event, rules);
        }
    }

    /// Counts a healthy answer against the wait after a slow-answer step: whether it still
    /// waits.
    fn settling_slow_step(&mut self) -> bool {
        if self.settling == 0 {
            return false;
        }
        self.settling -= 1;
        true
    }

    /// The limit forgotten `urlfrontier.backoff.decay.secs` after the push-back that set it.
    fn forget_decayed_limit(&mut self, now: Instant, rules: &Rules<'_>) {
        let decay = rules.policy.backoff_decay;
        let decayed = |since: Instant| since.checked_add(decay).is_none_or(|end| now >= end);
        if self.limit.is_some_and(|(_, since)| decayed(since)) {
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

    /// One step down toward the target every `DESCENT` healthy answers; at the target, calm
    /// answers counted until the delay probes lower (the limit lowered by a recovery step,
    /// forgotten once the target under it is the floor). Calm answers at the target end a run of
    /// slow-answer steps.
    fn recover(&mut self, event: &Event, rules: &Rules<'_>) {
        let target = self.target(rules);
        if self.delay > target || self.delay < rules.floor {
            self.calm = self.calm.saturating_add(1);
            if self.delay > target && self.calm < DESCENT {
                return;
            }
            let step = scaled(self.delay, 1.0 - rules.policy.recovery_step);
            self.delay = step.max(target).max(rules.floor);
            self.calm = 0;
            self.cause = self.cause_now(rules);
            self.date(event.at);
            return;
        }
        self.calm = self.calm.saturating_add(1);
        if self.calm >= RUN_ENDS {
            self.slow_run = None;
        }
        if self.calm >= rules.policy.recovery_probe {
            self.calm = 0;
            self.probe_lower(rules);
        }
    }

    /// Lowers the limit by one recovery step; forgets it once the target under it is the floor.
    fn probe_lower(&mut self, rules: &Rules<'_>) {
        let Some((limit, since)) = self.limit else {
            return;
        };
        let margin = rules.policy.recovery_margin;
        let lower = scaled(limit, 1.0 - rules.policy.recovery_step);
        self.limit = (scaled(lower, 1.0 + margin) > rules.floor).then_some((lower, since));
    }

    /// The cause of a delay reached on healthy answers.
    fn cause_now(&self, rules: &Rules<'_>) -> PaceCause {
        if self.delay < rules.configured {
            PaceCause::Faster
        } else if self.delay == rules.configured {
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
        let (delay, cause, strikes, limit) = self.reported;
        let moved = self.delay.abs_diff(delay) >= scaled(delay, REPORT_MOVE);
        let same = cause == self.cause && strikes == self.strikes && limit == self.limit();
        if same && !moved {
            return None;
        }
        let learned = self.learned()?;
        self.reported = self.now_reported();
        Some(learned)
    }

    /// What a report would say now.
    fn now_reported(&self) -> Reported {
        (self.delay, self.cause, self.strikes, self.limit())
    }

    /// Takes `learned` (from the frontier) when it is newer than what this queue learned. Its date
    /// is taken as `wall` at the latest (a clock ahead of ours does not win for ever), its delay
    /// within the floor and the ceiling, and it ages: its limit decays from when it was learned,
    /// and past `urlfrontier.backoff.decay.secs` the limit and strikes are forgotten and the delay
    /// halves for every decay it aged. `now` is `wall` on this process's monotonic clock. Whether
    /// it was taken.
    pub fn adopt(
        &mut self,
        learned: LearnedPace,
        rules: &Rules<'_>,
        now: Instant,
        wall: DateTime<Utc>,
    ) -> bool {
        let at = learned.at.min(wall);
        if self.at.is_some_and(|known| at <= known) {
            return false;
        }
        let age = (wall - at).to_std().unwrap_or_default();
        let decay = rules.policy.backoff_decay;
        let fresh = learned.decays(decay, wall) == 0;
        self.delay = rules.clamp(learned.aged_delay(decay, wall));
        self.cause = learned.cause;
        self.strikes = if fresh { learned.strikes } else { 0 };
        let since = now.checked_sub(age).unwrap_or(now);
        self.limit = learned.limit.filter(|_| fresh).map(|limit| (limit, since));
        self.settling = 0;
        self.slow_run = None;
        self.calm = 0;
        self.escalated_at = None;
        self.at = Some(at);
        self.reported = self.now_reported();
        true
    }
}
