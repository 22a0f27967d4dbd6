//! Each stage's settings from its section of the configuration, for the stages whose settings
//! type is not yet the section itself: the conversions live here, on the configuration's side, so
//! that no stage imports `config`.

use super::{FrontierConfig, IndexerConfig, SpoutConfig};
use crate::frontier::QueryLimits;
use crate::index::{DocumentSettings, MappingEntry, MappingError, MetadataFilter};
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

impl IndexerConfig {
    /// The indexed document's settings from the `indexer.*` keys; a bad mapping entry or filter
    /// is an error with the key it is in.
    pub fn document_settings(&self) -> Result<DocumentSettings, (&'static str, MappingError)> {
        let mapping = self
            .md_mapping
            .iter()
            .map(|entry| MappingEntry::parse(entry))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| ("indexer.md.mapping", error))?;
        let filter =
            MetadataFilter::parse(&self.md_filter).map_err(|e| ("indexer.md.filter", e))?;
        Ok(DocumentSettings {
            url_field: self.url_field.clone(),
            text_field: self.text_field.clone(),
            text_max_chars: self.text_max_chars,
            canonical_key: self.canonical_key.clone(),
            mapping,
            filter,
            ignore_empty_fields: self.ignore_empty_fields,
        })
    }
}
