//! The spout's settings: its `spout.*` keys and `topology.max.spout.pending`, read straight from
//! the configuration (each field names its key, and `Default` holds each key's default).

use std::time::Duration;

use crate::settings::{KeyedSettings, at_least_one, keyed_settings, units};

keyed_settings! {
    /// How the spouts query the frontier and how many URLs they keep in flight.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SpoutSettings {
        /// `spout.ttl.purgatory`: seconds an acked or failed URL is not emitted again.
        "spout.ttl.purgatory" with "units::seconds" => ttl_purgatory: Duration =
            Duration::from_secs(30),
        /// `spout.min.delay.queries`: milliseconds after a frontier query that brought nothing new
        /// before the next one (an answer with new URLs is followed by the next query as soon as
        /// the fetcher has taken them; an ack or a host's fetcher queue running dry can bring it
        /// forward).
        "spout.min.delay.queries" with "units::millis" => min_delay_queries: Duration =
            Duration::from_millis(2000),
        /// `spout.max.delay.queries`: milliseconds after which a new query runs even if URLs are
        /// buffered.
        "spout.max.delay.queries" with "units::millis" => max_delay_queries: Duration =
            Duration::from_millis(20000),
        /// `topology.max.spout.pending`: URLs emitted and not yet acked or failed, per spout
        /// instance.
        "topology.max.spout.pending" => max_pending: usize = 2000,
        /// `spout.parallelism`: spout instances (a StormCrawler flux's spout `parallelism`). Each
        /// has the per-instance budget: `max_pending` and the frontier's buckets and URLs per
        /// bucket. A status index is read by that many spouts, each over its share of the shards;
        /// the other frontiers read the whole budget at once.
        "spout.parallelism" => parallelism: usize = 1,
        /// `spout.reset.fetchdate.after`: seconds after which the status-index spouts' query date
        /// goes back to now (StormCrawler's AggregationSpout and CollapsingSpout); -1: never.
        "spout.reset.fetchdate.after" with "units::seconds_or_never" => reset_fetch_date_after: Option<Duration> =
            Some(Duration::from_secs(120)),
    }
}

impl SpoutSettings {
    /// URLs the spout runner keeps emitted and not yet acked or failed, at most: the pending
    /// budget of all the spout's instances together (`topology.max.spout.pending` ×
    /// `spout.parallelism`).
    pub fn pending_budget(&self) -> usize {
        self.max_pending.saturating_mul(self.parallelism)
    }
}

impl KeyedSettings for SpoutSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.min_delay_queries < Duration::from_millis(10) {
            return Err((
                "spout.min.delay.queries",
                "must be at least 10 (milliseconds)".to_string(),
            ));
        }
        at_least_one(&[
            ("topology.max.spout.pending", self.max_pending),
            ("spout.parallelism", self.parallelism),
        ])
    }
}
