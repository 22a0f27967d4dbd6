//! Each stage's settings from its section of the configuration, for the stages whose settings
//! type is not yet the section itself: the conversions live here, on the configuration's side, so
//! that no stage imports `config`.

use super::{FrontierConfig, SpoutConfig};
use crate::frontier::QueryLimits;
use crate::spout::RunnerSettings;

impl SpoutConfig {
    /// The runner's settings the `spout.*` keys and `topology.max.spout.pending` give: the pending
    /// budget is the instances' together (`topology.max.spout.pending` × `spout.parallelism`).
    pub fn runner_settings(&self) -> RunnerSettings {
        RunnerSettings {
            min_delay: self.min_delay_queries,
            max_delay: self.max_delay_queries,
            purgatory_ttl: self.ttl_purgatory,
            max_pending: self.max_pending.saturating_mul(self.parallelism),
            idle_after_empty_queries: 2,
        }
    }
}

impl FrontierConfig {
    /// The limits of one query, set by `frontier.max.buckets` and `frontier.max.urls.per.bucket`.
    pub fn query_limits(&self) -> QueryLimits {
        QueryLimits {
            max_buckets: self.max_buckets,
            max_urls_per_bucket: self.max_urls_per_bucket,
        }
    }
}
