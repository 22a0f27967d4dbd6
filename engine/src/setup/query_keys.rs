//! StormCrawler's `es.*` / `opensearch.*` keys beyond where the frontier is: the connection's
//! shared addresses and credentials, and how the spouts query the status index.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use squall::config::ConfigError;

use crate::key_values::OneOrMany;
use crate::status_index::spouts::SpoutSettings;

/// The keys as written (prefix left out of the serde names), flattened into the frontier's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct QueryKeys {
    /// `es.addresses`: the nodes of every component that names none of its own.
    #[serde(rename = "addresses")]
    pub shared_addresses: OneOrMany,
    /// `es.user` / `es.password`: basic-auth credentials shared by every component.
    pub user: String,
    pub password: String,
    /// `es.status.user` / `es.status.password`: the status index's own credentials.
    #[serde(rename = "status.user")]
    pub status_user: String,
    #[serde(rename = "status.password")]
    pub status_password: String,
    /// `es.disable.tls.validation`: accept any TLS certificate.
    #[serde(rename = "disable.tls.validation")]
    pub disable_tls_validation: bool,
    /// `es.status.routing.fieldname`: where the partition key is stored.
    #[serde(rename = "status.routing.fieldname")]
    pub routing_fieldname: String,
    #[serde(rename = "status.max.buckets")]
    pub max_buckets: i64,
    #[serde(rename = "status.max.urls.per.bucket")]
    pub max_urls_per_bucket: i64,
    #[serde(rename = "status.bucket.sort.field")]
    pub bucket_sort: OneOrMany,
    #[serde(rename = "status.global.sort.field")]
    pub global_sort: String,
    #[serde(rename = "status.filterQuery")]
    pub filter_query: OneOrMany,
    #[serde(rename = "status.sample")]
    pub sample: bool,
    #[serde(rename = "status.query.timeout")]
    pub query_timeout: i64,
    #[serde(rename = "status.recentDate.increase")]
    pub recent_date_increase: i64,
    #[serde(rename = "status.recentDate.min.gap")]
    pub recent_date_min_gap: i64,
    #[serde(rename = "status.max.start.offset")]
    pub max_start_offset: i64,
    #[serde(rename = "status.max.urls.per.reload")]
    pub max_urls_per_reload: i64,
}

impl Default for QueryKeys {
    fn default() -> Self {
        QueryKeys {
            shared_addresses: OneOrMany::One(String::new()),
            user: String::new(),
            password: String::new(),
            status_user: String::new(),
            status_password: String::new(),
            disable_tls_validation: false,
            routing_fieldname: String::new(),
            max_buckets: -1,
            max_urls_per_bucket: -1,
            bucket_sort: OneOrMany::Many(vec!["nextFetchDate".to_string(), "url".to_string()]),
            global_sort: "nextFetchDate".to_string(),
            filter_query: OneOrMany::Many(Vec::new()),
            sample: false,
            query_timeout: -1,
            recent_date_increase: -1,
            recent_date_min_gap: -1,
            max_start_offset: -1,
            max_urls_per_reload: -1,
        }
    }
}

/// How the spouts query the frontier, from the keys; `None` and empty mean "as squall's core
/// keys or defaults say".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuerySettings {
    /// `es.status.max.buckets`: queues per query, instead of `frontier.max.buckets`.
    pub max_buckets: Option<usize>,
    /// `es.status.max.urls.per.bucket`: URLs per queue per query, instead of
    /// `frontier.max.urls.per.bucket`.
    pub max_urls_per_bucket: Option<usize>,
    /// `es.status.bucket.sort.field`: the order of the URLs within a queue.
    pub bucket_sort: Vec<String>,
    /// `es.status.global.sort.field`: the order of the queues (by their earliest value); `None`
    /// (the key set to "") orders them by size.
    pub global_sort: Option<String>,
    /// `es.status.filterQuery`: Lucene query-string filters every spout query carries.
    pub filter_queries: Vec<String>,
    /// `es.status.sample`: the aggregation spout samples (a diversified sampler).
    pub sample: bool,
    /// `es.status.query.timeout`: the engine-side limit of one spout query.
    pub query_timeout: Option<Duration>,
    /// `es.status.recentDate.increase`, minutes (aggregation spout).
    pub recent_date_increase: Option<i64>,
    /// `es.status.recentDate.min.gap`, minutes (aggregation spout).
    pub recent_date_min_gap: Option<i64>,
    /// `es.status.max.start.offset`: the collapsing spout's deepest page.
    pub max_start_offset: Option<usize>,
    /// `es.status.max.urls.per.reload`: the hybrid spout's per-queue query size.
    pub max_urls_per_reload: Option<usize>,
}

impl QuerySettings {
    /// Applies these settings over a status-index spout's, whose counts are already the core's.
    pub fn apply(&self, settings: &mut SpoutSettings) {
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
        settings.query_timeout = self.query_timeout;
        settings.recent_date_increase = self.recent_date_increase;
        settings.recent_date_min_gap = self.recent_date_min_gap;
        settings.max_start_offset = self.max_start_offset;
    }
}

impl QueryKeys {
    /// The typed query settings; a count of 0 is an error naming its key.
    pub fn query_settings(&self) -> Result<QuerySettings, ConfigError> {
        Ok(QuerySettings {
            max_buckets: count("es.status.max.buckets", self.max_buckets)?,
            max_urls_per_bucket: count("es.status.max.urls.per.bucket", self.max_urls_per_bucket)?,
            bucket_sort: self.bucket_sort.values(&[',']),
            global_sort: Some(self.global_sort.trim().to_string()).filter(|s| !s.is_empty()),
            filter_queries: self.filter_query.values(&[]),
            sample: self.sample,
            query_timeout: u64::try_from(self.query_timeout)
                .ok()
                .map(Duration::from_secs),
            recent_date_increase: Some(self.recent_date_increase).filter(|m| *m >= 0),
            recent_date_min_gap: Some(self.recent_date_min_gap).filter(|m| *m >= 0),
            max_start_offset: usize::try_from(self.max_start_offset).ok(),
            max_urls_per_reload: count("es.status.max.urls.per.reload", self.max_urls_per_reload)?,
        })
    }

    /// The bucket field, reconciled with `es.status.routing.fieldname`: squall keeps the partition
    /// key in one field, which both name when both are set.
    pub fn key_field(&self, bucket_field: &str) -> Result<String, ConfigError> {
        let routing = self.routing_fieldname.trim();
        if routing.is_empty() || routing == bucket_field {
            return Ok(bucket_field.to_string());
        }
        if bucket_field == "key" {
            // Only the routing field was set: it is where the key lives.
            return Ok(routing.to_string());
        }
        Err(ConfigError::InvalidValue {
            key: "es.status.routing.fieldname".to_string(),
            message: format!(
                "{routing:?} differs from es.status.bucket.field {bucket_field:?}: squall stores the \
                 partition key in one field, which the spouts group by"
            ),
        })
    }
}

/// A count where -1 (any negative) means "not set" and 0 is an error.
fn count(key: &str, value: i64) -> Result<Option<usize>, ConfigError> {
    match usize::try_from(value) {
        Ok(0) => Err(ConfigError::InvalidValue {
            key: key.to_string(),
            message: "must be at least 1 (or -1 for squall's own setting)".to_string(),
        }),
        Ok(n) => Ok(Some(n)),
        Err(_) => Ok(None),
    }
}
