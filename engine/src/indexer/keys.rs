//! The content indexer's keys, `es.indexer.*` (also read under `opensearch.indexer.*`), as
//! StormCrawler's Elasticsearch and OpenSearch `IndexerBolt` names them.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use squall::config::{ConfigError, CrawlConfig};

use crate::client::ConnectionConfig;
use crate::client::indices::parse_time_value;
use crate::setup::{ClusterSettings, IndexFrontierSettings, connect};

/// The prefixes the keys are read under.
pub const PREFIXES: &[&str] = &["es.indexer.", "opensearch.indexer."];

squall::keyed_settings! {
    /// The content indexer's keys, `es.indexer.*` (or `opensearch.indexer.*`; prefix left out of
    /// the names below).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ContentIndexSettings {
        sections {
            /// `es.indexer.addresses`, `es.indexer.user`, `es.indexer.api.key`, ...: the content
            /// index's own connection keys, each else the shared `es.*` one ([`ClusterSettings`]).
            connection: ClusterSettings,
        }
        /// `es.indexer.index.name`: the content index, created with StormCrawler's
        /// `indexer.mapping` when missing.
        "index.name" => index: String = "content".to_string(),
        /// `es.indexer.create`: write documents create-only instead of overwriting them.
        "create" => create: bool = false,
        /// `es.indexer.bulkActions`: documents sent in one bulk request.
        "bulkActions" => bulk_actions: usize = 50,
        /// `es.indexer.flushInterval`: how long a partial bulk waits (`2s`, `500ms`, or seconds).
        "flushInterval" => flush_interval: TimeValue = TimeValue::Text("5s".to_string()),
        /// `es.indexer.concurrentRequests`: accepted as StormCrawler files set it (squall sends one
        /// bulk at a time per crawler).
        "concurrentRequests" => concurrent_requests: u32 = 1,
        /// `es.indexer.sniff`: accepted as StormCrawler files set it (squall uses the nodes
        /// listed).
        "sniff" => sniff: bool = true,
        /// `es.indexer.pipeline`: the ingest pipeline documents go through (empty: none).
        "pipeline" => pipeline: String = String::new(),
    }
}

/// A duration as StormCrawler writes it (`"2s"`, `"500ms"`), or a number of seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TimeValue {
    /// A number of seconds.
    Seconds(f64),
    /// A time with its unit, as Elasticsearch writes it.
    Text(String),
}

/// The content indexer's settings, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentIndexConfig {
    /// How to reach the cluster: the content index's connection keys (`es.indexer.addresses`,
    /// where `localhost` means `http://localhost:9200`, `es.indexer.user`, ...), each else the
    /// shared `es.*` one ([`ClusterSettings`]).
    pub connection: ConnectionConfig,
    /// `es.indexer.index.name`: the content index, created with StormCrawler's `indexer.mapping`
    /// when missing.
    pub index: String,
    /// `es.indexer.create`: write documents create-only (a page already indexed is kept as it is)
    /// instead of overwriting them.
    pub create: bool,
    /// `es.indexer.bulkActions`: documents sent in one bulk request.
    pub bulk_actions: usize,
    /// `es.indexer.flushInterval`: a partial bulk is sent after this long.
    pub flush_interval: Duration,
    /// `es.indexer.pipeline`: the ingest pipeline documents go through (`None`: none).
    pub pipeline: Option<String>,
}

impl ContentIndexConfig {
    /// Reads and checks the `es.indexer.*` (or `opensearch.indexer.*`) keys; absent keys take
    /// their defaults, unknown ones are an error with a did-you-mean. `concurrentRequests` and
    /// `sniff` are accepted as StormCrawler files set them: squall sends one bulk at a time per
    /// crawler and uses the nodes listed.
    pub fn from_config(config: &CrawlConfig) -> Result<Self, ConfigError> {
        let keys: ContentIndexSettings = config.extension(PREFIXES)?;
        let invalid = |key: &str, message: &str| ConfigError::InvalidValue {
            key: key.to_string(),
            message: message.to_string(),
        };
        let shared = IndexFrontierSettings::from_config(config)?.shared;
        let connection = connect(&[("es.indexer.", &keys.connection), ("es.", &shared)])?;
        if keys.bulk_actions == 0 {
            return Err(invalid("es.indexer.bulkActions", "must be at least 1"));
        }
        let flush_interval = match &keys.flush_interval {
            TimeValue::Seconds(seconds) => Duration::try_from_secs_f64(*seconds).ok(),
            TimeValue::Text(text) => parse_time_value(text),
        }
        .filter(|d| *d <= Duration::from_secs(3600))
        .ok_or_else(|| {
            invalid(
                "es.indexer.flushInterval",
                "must be a time such as 2s or 500ms, at most one hour",
            )
        })?;
        Ok(ContentIndexConfig {
            connection,
            index: keys.index,
            create: keys.create,
            bulk_actions: keys.bulk_actions,
            flush_interval,
            pipeline: Some(keys.pipeline).filter(|p| !p.trim().is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{addresses, assert_example_lists, config_of};

    fn read(settings: &[&str]) -> Result<ContentIndexConfig, ConfigError> {
        ContentIndexConfig::from_config(&config_of(settings)?)
    }

    #[test]
    fn stormcrawlers_archetype_values_are_read() {
        let config = read(&[
            "opensearch.indexer.addresses=localhost",
            "opensearch.indexer.index.name=content",
            "opensearch.indexer.create=false",
            "opensearch.indexer.bulkActions=100",
            "opensearch.indexer.flushInterval=2s",
            "opensearch.indexer.concurrentRequests=1",
            "opensearch.indexer.sniff=true",
        ])
        .expect("valid");
        assert_eq!(
            config
                .connection
                .addresses
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>(),
            ["http://localhost:9200/"]
        );
        assert_eq!(config.bulk_actions, 100);
        assert_eq!(config.flush_interval, Duration::from_secs(2));
        assert_eq!(config.pipeline, None);
        let numbers = read(&["es.indexer.flushInterval=0.5", "es.indexer.pipeline=p"])
            .expect("seconds as a number");
        assert_eq!(numbers.flush_interval, Duration::from_millis(500));
        assert_eq!(numbers.pipeline.as_deref(), Some("p"));
    }

    /// Reading `settings` fails, the error naming `key`.
    fn refused_naming(settings: &[&str], key: &str) {
        crate::testing::refused_naming(read, settings, key);
    }

    #[test]
    fn bad_values_and_typos_name_the_key() {
        refused_naming(
            &["es.indexer.flushInterval=soon"],
            "es.indexer.flushInterval",
        );
        refused_naming(&["es.indexer.bulkActions=0"], "es.indexer.bulkActions");
        refused_naming(&["es.indexer.index.nme=x"], "es.indexer.index.name");
        refused_naming(
            &["es.indexer.addresses=http://[::1"],
            "es.indexer.addresses",
        );
    }

    #[test]
    fn the_frontier_leaves_the_indexer_keys_alone() {
        let config = config_of(&["es.indexer.index.name=pages"]).expect("config");
        crate::setup::IndexFrontierConfig::from_config(&config).expect("frontier keys valid");
    }

    #[test]
    fn the_shipped_example_lists_every_key_with_its_default() {
        assert_example_lists::<ContentIndexSettings>(PREFIXES, &[]);
    }

    #[test]
    fn the_connection_keys_fall_back_to_the_shared_ones() {
        let config = read(&["es.addresses=http://shared:9200", "es.user=crawler"]).expect("valid");
        assert_eq!(addresses(&config.connection), ["http://shared:9200/"]);
        assert_eq!(config.connection.user.as_deref(), Some("crawler"));
        let config =
            read(&["es.indexer.addresses=node", "es.indexer.request.timeout=2"]).expect("valid");
        assert_eq!(addresses(&config.connection), ["http://node:9200/"]);
        assert_eq!(config.connection.timeout, Duration::from_secs(2));
        let none = read(&[]).expect("defaults");
        assert_eq!(
            none.connection.addresses[0].as_str(),
            "http://127.0.0.1:9200/"
        );
    }

    #[test]
    fn the_content_index_has_credentials_of_its_own() {
        let config = read(&[
            "es.user=frontier",
            "opensearch.indexer.user=indexer",
            "es.indexer.password=secret",
        ])
        .expect("valid");
        assert_eq!(config.connection.user.as_deref(), Some("indexer"));
        assert_eq!(config.connection.password.as_deref(), Some("secret"));
    }
}
