//! The spouts measured, their budgets, and the order they take turns in.

use squall_engine::queue::QueueSpoutConfig;

use crate::common::env_or;

/// Hosts per query and URLs per host per query: the same budget for every spout of the headline (the
/// queue spout holds `HOSTS_PER_QUERY` queues and claims up to as many per query).
pub const HOSTS_PER_QUERY: usize = 100;
/// URLs per host per query (see [`HOSTS_PER_QUERY`]).
pub const URLS_PER_HOST: usize = 10;
/// Queues the extra `queue-1000` row holds at once (claiming up to `HOSTS_PER_QUERY` per query and
/// reading `URLS_PER_HOST` URLs of each): the queue spout's best setting. With politeness on, a
/// crawler fetches at most as many hosts at once as it holds queues, so a real one holds hundreds
/// to thousands.
pub const QUEUES_HELD: usize = 1000;

/// A spout of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The aggregation spout (StormCrawler's).
    Aggregation,
    /// The collapsing spout.
    Collapsing,
    /// The hybrid spout.
    Hybrid,
    /// The queue spout at the headline's budget: 100 queues held.
    Queue,
    /// The queue spout holding `QUEUES_HELD` queues: an extra row, outside the equal-budget
    /// comparison.
    QueueHeld,
}

/// Queues held by the `queue-1000` row: `SQUALL_BENCH_QUEUES_HELD`, default 1,000.
pub fn queues_held() -> usize {
    env_or("QUEUES_HELD", QUEUES_HELD)
}

impl Kind {
    /// Every spout, in the report's order.
    pub const ALL: [Kind; 5] = [
        Kind::Aggregation,
        Kind::Collapsing,
        Kind::Hybrid,
        Kind::Queue,
        Kind::QueueHeld,
    ];

    /// URLs one read of a queue asks for: the equal budget's 10, or for the extra row the queue
    /// spout's own default (`SQUALL_BENCH_HELD_READ`), still handed out 10 at a time.
    pub fn urls_per_read(self) -> usize {
        match self {
            Kind::QueueHeld => env_or("HELD_READ", QueueSpoutConfig::new("", "").urls_per_read),
            _ => URLS_PER_HOST,
        }
    }

    /// The spouts to run: `SQUALL_BENCH_SPOUTS` (comma-separated names), default all five.
    pub fn selected() -> Vec<Kind> {
        let wanted = std::env::var("SQUALL_BENCH_SPOUTS").unwrap_or_default();
        Kind::ALL
            .into_iter()
            .filter(|k| wanted.is_empty() || wanted.split(',').any(|w| w.trim() == k.name()))
            .collect()
    }

    /// The spout's name in the settings and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Aggregation => "aggregation",
            Kind::Collapsing => "collapsing",
            Kind::Hybrid => "hybrid",
            Kind::Queue => "queue",
            Kind::QueueHeld => "queue-1000",
        }
    }

    /// The row's label in the report.
    pub fn label(self) -> String {
        match self {
            Kind::QueueHeld => format!("queue ({} held)", queues_held()),
            other => other.name().to_string(),
        }
    }

    /// Whether the spout runs at the headline's equal budget (the ratios compare only those).
    pub fn equal_budget(self) -> bool {
        self != Kind::QueueHeld
    }

    /// Queues the spout holds, for the queue spouts.
    pub fn queues(self) -> Option<usize> {
        match self {
            Kind::Queue => Some(HOSTS_PER_QUERY),
            Kind::QueueHeld => Some(queues_held()),
            _ => None,
        }
    }
}

/// The order of the spouts in run `r` (0-based): runs come in pairs, pair `r / 2` uses `kinds`
/// rotated by `r / 2` places, its first run in that order and its second in reverse (ABBA). Each
/// spout's mean position over a pair is the middle one.
pub fn order(kinds: &[Kind], r: usize) -> Vec<Kind> {
    let n = kinds.len();
    let mut order: Vec<Kind> = (0..n).map(|i| kinds[(i + r / 2) % n]).collect();
    if r % 2 == 1 {
        order.reverse();
    }
    order
}
