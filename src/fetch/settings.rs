//! The fetcher's settings: its `fetcher.*` keys, read straight from the configuration (each field
//! names its key, and `Default` holds each key's default), with the pace keys as a section of
//! their own ([`PacePolicy`]).

use std::num::NonZeroU32;
use std::time::Duration;

use crate::model::PartitionMode;
use crate::protocol::HttpContext;
use crate::settings::{KeyedSettings, at_least_one, keyed_settings, units};
use serde::{Deserialize, Serialize};

/// Which pace a queue keeps (`fetcher.pace.policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PaceKind {
    /// The configured delay (with robots.txt's Crawl-delay and Retry-After holds), whatever the
    /// server answers.
    Fixed,
    /// squall's, the default: the delay grows when the server pushes back (429 or 503 without
    /// Retry-After, refusals, timeouts, slower answers) and comes back down after healthy answers,
    /// never under `fetcher.pace.floor`.
    #[default]
    Adaptive,
    /// StormCrawler's URLFrontier back-off: each push-back blocks the queue, 60 s the first time,
    /// doubled per new incident, up to a day (the `urlfrontier.backoff.*` keys).
    Block,
}

keyed_settings! {
    /// How each queue's pace follows what its server answers: the `fetcher.pace.*` keys, and
    /// StormCrawler's `urlfrontier.backoff.*` and `urlfrontier.max.retry.after` with the meaning
    /// they have there. A section of [`FetcherSettings`], read under its full key names.
    #[derive(Debug, Clone, PartialEq)]
    pub section struct PacePolicy {
        /// `fetcher.pace.policy`: `adaptive` (the default: backs off on push-back and recovers
        /// after healthy answers), `fixed` (the configured delay whatever the server answers) or
        /// `block` (StormCrawler's URLFrontier back-off curve).
        "fetcher.pace.policy" => policy: PaceKind = PaceKind::Adaptive,
        /// `fetcher.pace.floor`: seconds; the shortest delay `adaptive` may reach on a healthy
        /// host, at most `fetcher.server.delay`. -1: `fetcher.server.delay` (or
        /// `fetcher.server.min.delay` with several fetches a queue): never faster than configured.
        /// A robots.txt Crawl-delay is never undercut.
        "fetcher.pace.floor" with "units::seconds_or_none" => floor: Option<Duration> = None,
        /// `fetcher.pace.backoff.max`: seconds, at least `fetcher.server.delay`; the longest delay
        /// `adaptive` backs off to. With a zero delay (`fetcher.server.min.delay` 0), the first
        /// back-off starts from 100 ms.
        "fetcher.pace.backoff.max" with "units::seconds" => backoff_max: Duration =
            Duration::from_secs(300),
        /// `fetcher.pace.backoff.on.failures`: whether connection failures and timeouts back a
        /// queue off under `adaptive` (`block` follows `urlfrontier.backoff.on.exceptions`).
        "fetcher.pace.backoff.on.failures" => backoff_on_failures: bool = true,
        /// `fetcher.pace.recovery.step`: the share (0 to 1, both excluded) the delay comes down by
        /// after every second healthy answer.
        "fetcher.pace.recovery.step" => recovery_step: f64 = 0.1,
        /// `fetcher.pace.recovery.margin`: how far above the delay that last drew push-back or
        /// slow answers the recovery stops (0.4: a host's load at 70 % of what drew it). A
        /// push-back comes once a host's bucket is empty, from a pace 10 to 50 % over what it
        /// takes: 70 % of that is about what it takes, and slow answers then step it back. The
        /// `pace` benchmark's adaptive row at 0.1: 0.91 of its ideal, 1.10 % refused, p95 answer
        /// time 2.07 times unloaded (median host); at 0.25: 0.93-0.94, 0.34-0.39 %, 1.62-1.65; at
        /// 0.5 (with the evidence test of slow answers): 0.89, 0.07 %, 1.01; 0.4 with a step down
        /// every second answer: see `DESCENT` in `fetch/pace/adaptive.rs`.
        "fetcher.pace.recovery.margin" => recovery_margin: f64 = 0.4,
        /// `fetcher.pace.recovery.probe`: healthy answers kept at that margin before the delay
        /// comes down one recovery step further, probing what the host can take; at least 1.
        "fetcher.pace.recovery.probe" => recovery_probe: u32 = 100,
        /// `fetcher.pace.latency.factor`: the delay is at least this many times the host's recent
        /// answer time (Heritrix's delay factor). 0: off.
        "fetcher.pace.latency.factor" => latency_factor: f64 = 1.0,
        /// `fetcher.pace.latency.inflation`: a slow-down of answers by this factor over the host's
        /// usual time is load: evidence of it (each answer's doublings over the usual time, less
        /// half this factor's, summed) slows the pace by half, up to eight times the configured
        /// delay; three such steps in a row take the answers for the host's own. Answers within
        /// 5 ms of the usual time count as usual. 0: off; else at least 1.
        "fetcher.pace.latency.inflation" => latency_inflation: f64 = 1.5,
        /// `urlfrontier.backoff.status.codes`: the HTTP statuses that are push-back (without
        /// Retry-After) or a hold (with it).
        "urlfrontier.backoff.status.codes" with "units::status_codes" => status_codes: Vec<u16> =
            vec![429, 503],
        /// `urlfrontier.backoff.factor`: what each new incident multiplies the delay (`adaptive`)
        /// or the block (`block`) by; under 1 reads as 1, as StormCrawler reads it.
        "urlfrontier.backoff.factor" => backoff_factor: f64 = 2.0,
        /// `urlfrontier.backoff.jitter`: the random share (0.1: up to 10 %) added to each back-off
        /// and block, so that queues backed off together do not come back together. 0: none.
        "urlfrontier.backoff.jitter" => backoff_jitter: f64 = 0.1,
        /// `urlfrontier.backoff.decay.secs`: seconds of quiet after which an incident is
        /// forgotten: `adaptive` forgets the delay that drew it, `block` its escalation (counted
        /// from the end of the block).
        "urlfrontier.backoff.decay.secs" with "units::seconds" => backoff_decay: Duration =
            Duration::from_secs(1800),
        /// `urlfrontier.backoff.base.secs`: seconds; `block`'s first block. 0: no block on
        /// push-back, Retry-After still honoured.
        "urlfrontier.backoff.base.secs" with "units::seconds" => backoff_base: Duration =
            Duration::from_secs(60),
        /// `urlfrontier.backoff.max.secs`: seconds; `block`'s longest block.
        "urlfrontier.backoff.max.secs" with "units::seconds" => backoff_max_block: Duration =
            Duration::from_secs(86400),
        /// `urlfrontier.backoff.on.exceptions`: whether connection failures and timeouts are
        /// incidents under `block`.
        "urlfrontier.backoff.on.exceptions" => backoff_on_exceptions: bool = false,
        /// `urlfrontier.max.retry.after`: seconds; the longest Retry-After hold honoured under
        /// `block`. -1: no cap. (`fetcher.max.retry.after` caps it under the other two.)
        "urlfrontier.max.retry.after" with "units::seconds_or_none" => max_retry_after_block: Option<Duration> =
            Some(Duration::from_secs(86400)),
    }
}

impl PacePolicy {
    /// The first key whose value makes no sense, and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let step = self.recovery_step;
        if !(step > 0.0 && step < 1.0) {
            let reason = "must be between 0 and 1, both excluded";
            return Err(("fetcher.pace.recovery.step", reason.to_string()));
        }
        at_least("urlfrontier.backoff.jitter", self.backoff_jitter, 0.0)?;
        at_least("urlfrontier.backoff.factor", self.backoff_factor, 0.0)?;
        if self.recovery_probe == 0 {
            let reason = "must be at least 1 (healthy answers before probing lower)";
            return Err(("fetcher.pace.recovery.probe", reason.to_string()));
        }
        at_least("fetcher.pace.recovery.margin", self.recovery_margin, 0.0)?;
        at_least("fetcher.pace.latency.factor", self.latency_factor, 0.0)?;
        let inflation = self.latency_inflation;
        if inflation != 0.0 {
            at_least("fetcher.pace.latency.inflation", inflation, 1.0)
                .map_err(|(key, _)| (key, "must be 0 (off) or at least 1".to_string()))?;
        }
        Ok(())
    }
}

impl PacePolicy {
    /// What each new incident multiplies a delay or a block by: `urlfrontier.backoff.factor`,
    /// 1 when it is under 1 (StormCrawler's reading).
    pub fn factor(&self) -> f64 {
        self.backoff_factor.max(1.0)
    }
}

/// `value` refused, naming `key`, unless it is a finite number of at least `least`.
fn at_least(key: &'static str, value: f64, least: f64) -> Result<(), (&'static str, String)> {
    if value.is_finite() && value >= least {
        Ok(())
    } else {
        Err((key, format!("must be a number of at least {least}")))
    }
}

keyed_settings! {
    /// Politeness and concurrency settings of the fetcher: the `fetcher.*` keys.
    #[derive(Debug, Clone, PartialEq)]
    pub struct FetcherSettings {
        sections {
            /// The pace keys: `fetcher.pace.*`, `urlfrontier.backoff.*`,
            /// `urlfrontier.max.retry.after`.
            pace: PacePolicy,
        }
        /// `fetcher.server.delay`: seconds from the end of one fetch to the start of the next on a
        /// queue.
        "fetcher.server.delay" with "units::seconds" => server_delay: Duration =
            Duration::from_secs(1),
        /// `fetcher.server.min.delay`: seconds; the delay used instead when a queue allows several
        /// fetches at once.
        "fetcher.server.min.delay" with "units::seconds" => server_min_delay: Duration =
            Duration::ZERO,
        /// `fetcher.server.delay.force`: keep `fetcher.server.delay` when robots.txt asks for less.
        "fetcher.server.delay.force" => server_delay_force: bool = false,
        /// `fetcher.threads.per.queue`: fetches at once on one queue.
        "fetcher.threads.per.queue" => threads_per_queue: usize = 1,
        /// `fetcher.threads.number`: fetches at once over all queues.
        "fetcher.threads.number" => threads_number: usize = 50,
        /// `fetcher.max.urls.in.queues`: URLs waiting in the fetcher's queues before it stops
        /// taking more. -1: no limit of its own (`topology.max.spout.pending` still bounds them).
        "fetcher.max.urls.in.queues" with "units::count_or_unlimited" => max_urls_in_queues: usize =
            2000,
        /// `fetcher.max.crawl.delay`: seconds; a robots.txt Crawl-delay above this gives the URL
        /// ERROR...
        "fetcher.max.crawl.delay" with "units::seconds" => max_crawl_delay: Duration =
            Duration::from_secs(30),
        /// `fetcher.max.crawl.delay.force`: ...unless this is set: then the delay is capped at
        /// `fetcher.max.crawl.delay`.
        "fetcher.max.crawl.delay.force" => max_crawl_delay_force: bool = false,
        /// `fetcher.max.retry.after`: seconds; the longest Retry-After hold honoured on 429 and
        /// 503.
        "fetcher.max.retry.after" with "units::seconds" => max_retry_after: Duration =
            Duration::from_secs(300),
        /// `fetcher.max.fetches.per.second`: a cap over all queues; 0 for none.
        "fetcher.max.fetches.per.second" with "units::zero_is_none" => max_fetches_per_second: Option<NonZeroU32> =
            None,
        /// `partition.url.mode`: how URLs are grouped into queues, `byHost`, `byDomain` or `byIP`
        /// (the parser keys outlinks and the frontier its queues the same way).
        "partition.url.mode" => partition: PartitionMode = PartitionMode::ByHost,
        derived {
            /// On stop, how long fetches already started may take to finish before they are cut
            /// short: not a key of its own, half of `topology.shutdown.timeout`.
            stop_grace: Duration = Duration::from_secs(10),
        }
    }
}

impl FetcherSettings {
    /// The delay a queue keeps when robots.txt says nothing: `fetcher.server.delay`, or
    /// `fetcher.server.min.delay` when a queue allows several fetches at once.
    pub fn base_delay(&self) -> Duration {
        if self.threads_per_queue > 1 {
            self.server_min_delay
        } else {
            self.server_delay
        }
    }

    /// The shortest delay the adaptive pace may reach on a queue without a robots.txt
    /// Crawl-delay: `fetcher.pace.floor` when set (never above [`base_delay`](Self::base_delay)),
    /// else the base delay itself: never faster than configured.
    pub fn pace_floor(&self) -> Duration {
        let base = self.base_delay();
        self.pace.floor.map_or(base, |floor| floor.min(base))
    }

    /// Idle connections the HTTP client keeps per host: one for each fetch a queue may run at once
    /// (`fetcher.threads.per.queue`), and at least [`HttpContext::MIN_IDLE_PER_HOST`] (a few for
    /// robots.txt).
    pub fn idle_connections_per_host(&self) -> usize {
        self.threads_per_queue.max(HttpContext::MIN_IDLE_PER_HOST)
    }
}

impl KeyedSettings for FetcherSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        at_least_one(&[
            ("fetcher.threads.per.queue", self.threads_per_queue),
            ("fetcher.threads.number", self.threads_number),
            ("fetcher.max.urls.in.queues", self.max_urls_in_queues),
        ])?;
        self.pace.check()?;
        if self.pace.backoff_max < self.server_delay {
            let reason = "is under fetcher.server.delay: a back-off would never slow a queue down";
            return Err(("fetcher.pace.backoff.max", reason.to_string()));
        }
        match self.pace.floor {
            Some(floor) if floor > self.server_delay => Err((
                "fetcher.pace.floor",
                "is above fetcher.server.delay: raise fetcher.server.delay to slow down"
                    .to_string(),
            )),
            _ => Ok(()),
        }
    }
}
