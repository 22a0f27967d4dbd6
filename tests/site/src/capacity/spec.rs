//! What each capacity host can take, and how it says no: the spec, and the ladder of rates that
//! the benchmark serves.

use std::collections::HashMap;
use std::time::Duration;

use crate::model::SplitMix;

/// Pages `/p/N.html` per host of a [`CapacitySpec::ladder`].
pub const LADDER_PAGES: usize = 10_000;

/// Links on every page of a [`CapacitySpec::ladder`].
pub const LADDER_LINKS: usize = 4;

/// How a host answers a request it has no capacity for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverCapacity {
    /// 429 without a `Retry-After` header.
    TooMany,
    /// 429 with `Retry-After` of this many seconds.
    TooManyRetryAfter(u32),
    /// 503 with `Retry-After` of this many seconds.
    UnavailableRetryAfter(u32),
    /// 503 without a `Retry-After` header.
    Unavailable,
}

impl OverCapacity {
    /// The four kinds, in the order [`CapacitySpec::ladder`] deals them out (a Retry-After of
    /// `seconds` where the kind has one).
    pub fn kinds(seconds: u32) -> [OverCapacity; 4] {
        [
            OverCapacity::TooMany,
            OverCapacity::TooManyRetryAfter(seconds),
            OverCapacity::UnavailableRetryAfter(seconds),
            OverCapacity::Unavailable,
        ]
    }

    /// The status code of the answer: 429 or 503.
    pub fn status(self) -> u16 {
        match self {
            OverCapacity::TooMany | OverCapacity::TooManyRetryAfter(_) => 429,
            OverCapacity::UnavailableRetryAfter(_) | OverCapacity::Unavailable => 503,
        }
    }

    /// The `Retry-After` the answer announces, if any.
    pub fn retry_after(self) -> Option<Duration> {
        match self {
            OverCapacity::TooManyRetryAfter(s) | OverCapacity::UnavailableRetryAfter(s) => {
                Some(Duration::from_secs(u64::from(s)))
            }
            OverCapacity::TooMany | OverCapacity::Unavailable => None,
        }
    }
}

/// One host's hidden capacity: a token bucket, a latency that grows with the load, and its answer
/// when the bucket is empty.
#[derive(Debug, Clone, PartialEq)]
pub struct HostCapacity {
    /// The host name, e.g. `cap-007.test`.
    pub name: String,
    /// Requests per second the host takes in the long run (the bucket's refill rate).
    pub rate: f64,
    /// Requests the host takes at once from full (the bucket's size, at least 1).
    pub burst: f64,
    /// How long a page takes to serve unloaded (the middle of its pages' spread).
    pub unloaded: Duration,
    /// How much the latency grows with the load past the knee: `1 + growth·((ρ − knee)/(1 −
    /// knee))²` times the page's unloaded time, `ρ` the larger of the arrival rate over the
    /// capacity and the share of the bucket used.
    pub growth: f64,
    /// The load (a share of the capacity) up to which the latency stays flat.
    pub knee: f64,
    /// How far apart the host's pages are in unloaded time: the slowest takes `spread` times the
    /// quickest (1: all alike).
    pub spread: f64,
    /// The answer when the bucket is empty.
    pub over: OverCapacity,
}

/// A site of capacity hosts: each host, and the shape of its pages.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacitySpec {
    /// The hosts, in the order of their names.
    pub hosts: Vec<HostCapacity>,
    /// Pages `/p/N.html` per host (the home page `/` comes in addition).
    pub pages_per_host: usize,
    /// Links on each page, to pages of the same host.
    pub links_per_page: usize,
    /// The seed the ladder was drawn with.
    pub seed: u64,
}

impl CapacitySpec {
    /// `hosts` hosts `cap-000.test`, ... whose rates climb from `min` to `max` requests/s along
    /// `cᵢ = min·(max/min)^((i/(n−1))^p)`, with `p` chosen so the rates sum to `total` (the
    /// nearest sum the curve reaches when `total` is out of its range), dealt to the hosts in an
    /// order shuffled by `seed`. The over-capacity answers go round-robin over the four
    /// [`OverCapacity`] kinds, Retry-After drawn from 2–30 s, the unloaded latency from 10–40 ms;
    /// `burst = max(1, 5 s × rate)`, `growth = 2`, `knee = 0.8` (1.5 times slower at 90 % of the
    /// capacity, 3 times at 100 %), `spread = 4` (pages from half to twice the unloaded time).
    pub fn ladder(hosts: usize, min: f64, max: f64, total: f64, seed: u64) -> CapacitySpec {
        let mut rng = SplitMix::new(seed);
        let mut rates = ladder_rates(hosts, min, max, total);
        rng.shuffle(&mut rates);
        let hosts = rates
            .into_iter()
            .enumerate()
            .map(|(i, rate)| ladder_host(i, hosts, rate, &mut rng))
            .collect();
        CapacitySpec {
            hosts,
            pages_per_host: LADDER_PAGES,
            links_per_page: LADDER_LINKS,
            seed,
        }
    }

    /// The sum of the hosts' rates, in requests/s.
    pub fn total_rate(&self) -> f64 {
        self.hosts.iter().map(|h| h.rate).sum()
    }

    /// Every host name, in order.
    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }

    /// The host named `name`, if the site has it.
    pub fn host(&self, name: &str) -> Option<&HostCapacity> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// The hosts by name, for lookups in a loop.
    pub fn by_name(&self) -> HashMap<&str, &HostCapacity> {
        self.hosts.iter().map(|h| (h.name.as_str(), h)).collect()
    }
}

/// `cap-000.test`, ...: at least three digits, more when there are more hosts.
fn host_name(i: usize, hosts: usize) -> String {
    let width = hosts.saturating_sub(1).to_string().len().max(3);
    format!("cap-{i:0width$}.test")
}

/// The `i`-th of `hosts` ladder hosts, of capacity `rate`, its other traits drawn from `rng`.
fn ladder_host(i: usize, hosts: usize, rate: f64, rng: &mut SplitMix) -> HostCapacity {
    let seconds = 2 + rng.below(29) as u32;
    let unloaded = Duration::from_millis(10 + rng.below(31) as u64);
    HostCapacity {
        name: host_name(i, hosts),
        rate,
        burst: (5.0 * rate).max(1.0),
        unloaded,
        growth: 2.0,
        knee: 0.8,
        spread: 4.0,
        over: OverCapacity::kinds(seconds)[i % 4],
    }
}

/// The ladder's rates in climbing order (see [`CapacitySpec::ladder`]).
pub(crate) fn ladder_rates(hosts: usize, min: f64, max: f64, total: f64) -> Vec<f64> {
    if hosts == 1 {
        return vec![total.clamp(min, max)];
    }
    // The sum falls as p grows: bisect ln p over a range wide enough for any useful ladder.
    let (mut low, mut high) = ((1e-3f64).ln(), (1e3f64).ln());
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if rates_at(hosts, min, max, mid.exp()).iter().sum::<f64>() > total {
            low = mid;
        } else {
            high = mid;
        }
    }
    rates_at(hosts, min, max, ((low + high) / 2.0).exp())
}

/// `cᵢ = min·(max/min)^((i/(n−1))^p)` for each of `hosts` (at least 2).
fn rates_at(hosts: usize, min: f64, max: f64, p: f64) -> Vec<f64> {
    let last = (hosts.max(2) - 1) as f64;
    (0..hosts)
        .map(|i| min * (max / min).powf((i as f64 / last).powf(p)))
        .collect()
}
