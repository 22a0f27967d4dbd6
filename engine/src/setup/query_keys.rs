//! How the spouts query the status index: StormCrawler's `es.status.*` / `opensearch.status.*`
//! query keys, declared with `keyed_settings!` in [`QuerySettings`] (one line a key: its name, its
//! unit, its field and its default).

use std::time::Duration;

use serde_with::{As, OneOrMany, Same, formats::PreferOne};
use squall::config::ConfigError;

use crate::status_index::spouts::StatusSpoutConfig;

squall::keyed_settings! {
    /// How the spouts query the frontier; `None` and empty mean "as squall's core keys or defaults
    /// say". A section of the frontier's keys ([`IndexFrontierSettings`](super::IndexFrontierSettings)),
    /// each key written under `es.` (or `opensearch.`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct QuerySettings {
        /// `es.status.max.buckets`: queues per query, instead of `frontier.max.buckets` (-1: that
        /// key).
        "status.max.buckets" with "squall::settings::units::negative_is_none" =>
            max_buckets: Option<usize> = None,
        /// `es.status.max.urls.per.bucket`: URLs per queue per query, instead of
        /// `frontier.max.urls.per.bucket` (-1: that key).
        "status.max.urls.per.bucket" with "squall::settings::units::negative_is_none" =>
            max_urls_per_bucket: Option<usize> = None,
        /// `es.status.bucket.sort.field`: the order of the URLs within a queue (a list, or one
        /// string separated by `,`).
        "status.bucket.sort.field" with "As::<OneOrMany<Same, PreferOne>>" => bucket_sort: Vec<String> =
            vec!["nextFetchDate".to_string(), "url".to_string()],
        /// `es.status.global.sort.field`: the order of the queues (by their earliest value); `None`
        /// (the key set to "") orders them by size.
        "status.global.sort.field" with "squall::settings::units::empty_is_none" =>
            global_sort: Option<String> = Some("nextFetchDate".to_string()),
        /// `es.status.filterQuery`: Lucene query-string filters every spout query carries.
        "status.filterQuery" with "As::<OneOrMany<Same, PreferOne>>" => filter_queries: Vec<String> = Vec::new(),
        /// `es.status.sample`: the aggregation spout samples (a diversified sampler).
        "status.sample" => sample: bool = false,
        /// `es.status.query.timeout`: seconds the engine may spend on one spout query (-1: no
        /// limit).
        "status.query.timeout" with "squall::settings::units::negative_is_none" =>
            query_timeout: Option<u64> = None,
        /// `es.status.recentDate.increase`, minutes (aggregation spout; -1: none).
        "status.recentDate.increase" with "squall::settings::units::negative_is_none" =>
            recent_date_increase: Option<i64> = None,
        /// `es.status.recentDate.min.gap`, minutes (aggregation spout; -1: none).
        "status.recentDate.min.gap" with "squall::settings::units::negative_is_none" =>
            recent_date_min_gap: Option<i64> = None,
        /// `es.status.max.start.offset`: the collapsing spout's deepest page (-1: none).
        "status.max.start.offset" with "squall::settings::units::negative_is_none" =>
            max_start_offset: Option<usize> = None,
        /// `es.status.max.urls.per.reload`: the hybrid spout's per-queue query size (-1: as
        /// `es.status.max.urls.per.bucket`).
        "status.max.urls.per.reload" with "squall::settings::units::negative_is_none" =>
            max_urls_per_reload: Option<usize> = None,
    }
}

impl QuerySettings {
    /// The settings as read, checked (a count of 0 is an error naming its key) and tidied (sort
    /// fields split at `,`, every value trimmed, empty ones left out).
    pub(super) fn checked(mut self) -> Result<Self, ConfigError> {
        let counts = [
            ("es.status.max.buckets", self.max_buckets),
            ("es.status.max.urls.per.bucket", self.max_urls_per_bucket),
            ("es.status.max.urls.per.reload", self.max_urls_per_reload),
        ];
        if let Some((key, _)) = counts.iter().find(|(_, count)| *count == Some(0)) {
            return Err(ConfigError::InvalidValue {
                key: key.to_string(),
                message: "must be at least 1 (or -1 for squall's own setting)".to_string(),
            });
        }
        self.bucket_sort = trimmed(self.bucket_sort.iter().flat_map(|s| s.split(',')));
        self.filter_queries = trimmed(self.filter_queries.iter().map(String::as_str));
        Ok(self)
    }

    /// Applies these settings over a status-index spout's, whose counts are already the core's.
    pub fn apply(&self, settings: &mut StatusSpoutConfig) {
        if let Some(n) = self.max_buckets {
            settings.max_buckets = n;
        }
        if let Some(n) = self.max_urls_per_bucket {
            settings.max_urls_per_bucket = n;
            settings.max_urls_per_reload = n;
        }
        if let Some(n) = self.max_urls_per_reload {
            settings.max_urls_per_reload = n;
        }
        settings.bucket_sort = self.bucket_sort.clone();
        settings.global_sort = self.global_sort.clone();
        settings.filter_queries = self.filter_queries.clone();
        settings.sample = self.sample;
        settings.query_timeout = self.query_timeout.map(Duration::from_secs);
        settings.recent_date_increase = self.recent_date_increase;
        settings.recent_date_min_gap = self.recent_date_min_gap;
        settings.max_start_offset = self.max_start_offset;
    }
}

/// The values trimmed, empty ones left out.
fn trimmed<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    values
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(str::to_string)
        .collect()
}
