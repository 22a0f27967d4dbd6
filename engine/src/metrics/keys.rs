//! The metrics index's keys: `es.metrics.*` (also read under `opensearch.metrics.*`), and Storm's
//! `topology.metrics.consumer.register`, whose StormCrawler `MetricsConsumer` entry turns the
//! index on (its `argument`, a date format, names one index a day; its `whitelist` and `blacklist`
//! choose metrics by name).

use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use squall::config::{ConfigError, CrawlConfig};

use crate::client::ConnectionConfig;
use crate::setup::{ClusterSettings, IndexFrontierSettings, connect};

/// The prefixes the keys are read under.
pub const PREFIXES: &[&str] = &["es.metrics.", "opensearch.metrics."];
/// Storm's list of metrics consumers.
pub const CONSUMERS_KEY: &str = "topology.metrics.consumer.register";

squall::keyed_settings! {
    /// The metrics index's keys, `es.metrics.*` (or `opensearch.metrics.*`; prefix left out of
    /// the names below).
    #[derive(Debug, Clone, PartialEq)]
    pub struct MetricsIndexSettings {
        sections {
            /// `es.metrics.addresses`, `es.metrics.user`, ...: the metrics index's own connection
            /// keys, each else the frontier's ([`ClusterSettings`]): by default the metrics go
            /// where the frontier is.
            connection: ClusterSettings,
        }
        /// `es.metrics.index.name`: the index (one a day with the consumer's date format).
        "index.name" => index: String = "metrics".to_string(),
        /// `es.metrics.interval`: seconds between two writes, 1 to 3600.
        "interval" => interval: f64 = 10.0,
        /// `es.metrics.enabled`: whether to write (none: when a StormCrawler `MetricsConsumer` is
        /// registered in `topology.metrics.consumer.register`).
        "enabled" => enabled: Option<bool> = None,
    }
}

/// One entry of `topology.metrics.consumer.register`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Consumer {
    class: String,
    argument: Option<String>,
    whitelist: Vec<String>,
    blacklist: Vec<String>,
}

/// The metrics index's settings, typed.
#[derive(Debug, Clone)]
pub struct MetricsIndexConfig {
    /// How to reach the cluster: the metrics index's connection keys (`es.metrics.addresses`,
    /// `es.metrics.user`, ...), each else the frontier's (`es.status.*`, else `es.*`).
    pub connection: ConnectionConfig,
    /// `es.metrics.index.name` (default `metrics`).
    pub index: String,
    /// The consumer's `argument`: a date format (Java's, `yyyy-MM-dd`) read as chrono's; the
    /// index of a day is `<index>-<date>`.
    pub date_format: Option<String>,
    /// `es.metrics.interval`: seconds between two writes (default 10).
    pub interval: Duration,
    /// The consumer's `whitelist`: only names matching one of these are written (none: all).
    pub whitelist: Vec<Regex>,
    /// The consumer's `blacklist`: names matching one of these are not written.
    pub blacklist: Vec<Regex>,
}

impl MetricsIndexConfig {
    /// The metrics index's settings, when it is on: `es.metrics.enabled: true`, or (without
    /// that key) a StormCrawler `MetricsConsumer` among `topology.metrics.consumer.register`.
    pub fn from_config(config: &CrawlConfig) -> Result<Option<Self>, ConfigError> {
        let keys: MetricsIndexSettings = config.extension(PREFIXES)?;
        let consumers: Vec<Consumer> = config.extension_key(CONSUMERS_KEY)?.unwrap_or_default();
        let consumer = consumers
            .into_iter()
            .find(|c| is_metrics_consumer(&c.class));
        if !keys.enabled.unwrap_or(consumer.is_some()) {
            return Ok(None);
        }
        let consumer = consumer.unwrap_or_default();
        let interval = Duration::try_from_secs_f64(keys.interval)
            .ok()
            .filter(|d| *d >= Duration::from_secs(1) && *d <= Duration::from_secs(3600))
            .ok_or_else(|| invalid("es.metrics.interval", "must be 1 to 3600 seconds"))?;
        let date_format = consumer
            .argument
            .as_deref()
            .map(java_date_format)
            .transpose()
            .map_err(|message| invalid(CONSUMERS_KEY, &message))?;
        Ok(Some(MetricsIndexConfig {
            connection: connection(config, &keys)?,
            index: keys.index,
            date_format,
            interval,
            whitelist: patterns(&consumer.whitelist)?,
            blacklist: patterns(&consumer.blacklist)?,
        }))
    }

    /// Whether a metric of this name is written.
    pub fn wants(&self, name: &str) -> bool {
        (self.whitelist.is_empty() || self.whitelist.iter().any(|p| p.is_match(name)))
            && !self.blacklist.iter().any(|p| p.is_match(name))
    }

    /// The index a point made at `time` goes to.
    pub fn index_at(&self, time: &chrono::DateTime<chrono::Utc>) -> String {
        match &self.date_format {
            Some(format) => format!("{}-{}", self.index, time.format(format)),
            None => self.index.clone(),
        }
    }
}

/// StormCrawler's metrics consumers for its Elasticsearch and OpenSearch modules (any package).
fn is_metrics_consumer(class: &str) -> bool {
    class.ends_with(".metrics.MetricsConsumer")
        && (class.contains("opensearch") || class.contains("elasticsearch"))
}

/// The metrics index's connection: its keys over the frontier's, which are over the shared ones
/// (one rule, [`ClusterSettings`]); the frontier's update mode.
fn connection(
    config: &CrawlConfig,
    keys: &MetricsIndexSettings,
) -> Result<ConnectionConfig, ConfigError> {
    let frontier = IndexFrontierSettings::from_config(config)?;
    let [status, shared] = frontier.frontier_layers();
    let mut connection = connect(&[("es.metrics.", &keys.connection), status, shared])?;
    connection.update_mode = frontier.updates;
    Ok(connection)
}

fn patterns(list: &[String]) -> Result<Vec<Regex>, ConfigError> {
    list.iter()
        .map(|p| Regex::new(p).map_err(|e| invalid(CONSUMERS_KEY, &format!("{p:?}: {e}"))))
        .collect()
}

/// A Java `SimpleDateFormat` of dates and times (`yyyy-MM-dd`, `yyyy.MM.dd.HH`) as chrono's.
fn java_date_format(java: &str) -> Result<String, String> {
    let mut out = String::new();
    let chars: Vec<char> = java.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&d| d == c).count();
        let piece = match (c, run) {
            ('y', 4) => "%Y",
            ('y', 2) => "%y",
            ('M', 2) => "%m",
            ('d', 2) => "%d",
            ('H', 2) => "%H",
            ('m', 2) => "%M",
            ('s', 2) => "%S",
            (c, _) if c.is_ascii_alphabetic() => {
                return Err(format!(
                    "the date format {java:?} has {:?}: use yyyy, yy, MM, dd, HH, mm, ss",
                    c.to_string().repeat(run)
                ));
            }
            ('%', _) => "%%",
            _ => {
                out.extend(std::iter::repeat_n(c, run));
                i += run;
                continue;
            }
        };
        out.push_str(piece);
        i += run;
    }
    Ok(out)
}

fn invalid(key: &str, message: &str) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.to_string(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall::config::ConfigBuilder;

    fn read(yaml: &str) -> Result<Option<MetricsIndexConfig>, ConfigError> {
        let config = ConfigBuilder::new()
            .yaml_str(&format!("config:\n  http.agent.name: test\n{yaml}"))
            .and_then(ConfigBuilder::build)?;
        MetricsIndexConfig::from_config(&config)
    }

    #[test]
    fn off_unless_a_metrics_consumer_is_registered_or_it_is_enabled() {
        assert!(read("").expect("valid").is_none());
        let logging = "  topology.metrics.consumer.register:\n    - class: \"org.apache.storm.metric.LoggingMetricsConsumer\"\n";
        assert!(read(logging).expect("valid").is_none());
        let enabled = read("  es.metrics.enabled: true\n").expect("valid");
        assert_eq!(enabled.expect("on").index, "metrics");
    }

    #[test]
    fn the_archetypes_consumer_with_its_argument_and_lists_is_read() {
        let yaml = "  opensearch.metrics.index.name: \"crawl-metrics\"\n  topology.metrics.consumer.register:\n    - class: \"org.apache.stormcrawler.opensearch.metrics.MetricsConsumer\"\n      parallelism.hint: 1\n      argument: \"yyyy-MM-dd\"\n      whitelist:\n        - \"fetcher_counter\"\n      blacklist:\n        - \"bytes\"\n";
        let config = read(yaml).expect("valid").expect("on");
        let day = chrono::DateTime::parse_from_rfc3339("2026-12-05T10:00:00Z")
            .expect("date")
            .with_timezone(&chrono::Utc);
        assert_eq!(config.index_at(&day), "crawl-metrics-2026-12-05");
        assert!(config.wants("fetcher_counter.fetched"));
        assert!(!config.wants("fetcher_counter.bytes_fetched"));
        assert!(!config.wants("num_queues"));
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = read("  es.metrics.enabled: true\n  es.metrics.interval: 0\n").expect_err("zero");
        assert!(bad.to_string().contains("es.metrics.interval"), "{bad}");
        let yaml = "  topology.metrics.consumer.register:\n    - class: \"org.apache.stormcrawler.opensearch.metrics.MetricsConsumer\"\n      argument: \"EEE-dd\"\n";
        let bad = read(yaml).expect_err("day names");
        assert!(bad.to_string().contains(CONSUMERS_KEY), "{bad}");
        let typo = read("  es.metrics.index.nme: x\n").expect_err("typo");
        assert!(typo.to_string().contains("es.metrics.index.name"), "{typo}");
    }

    #[test]
    fn the_shipped_example_lists_every_key_with_its_default() {
        crate::testing::assert_example_lists::<MetricsIndexSettings>(PREFIXES, &[]);
    }

    #[test]
    fn the_metrics_go_where_the_frontier_is_unless_told_otherwise() {
        let addresses = |config: &MetricsIndexConfig| -> Vec<String> {
            let addresses = config.connection.addresses.iter();
            addresses.map(|a| a.to_string()).collect()
        };
        let frontier = "  es.metrics.enabled: true\n  es.status.addresses: http://frontier:9200\n  \
                        es.status.user: crawler\n  es.status.request.timeout: 5\n";
        let config = read(frontier).expect("valid").expect("on");
        assert_eq!(addresses(&config), ["http://frontier:9200/"]);
        assert_eq!(config.connection.user.as_deref(), Some("crawler"));
        assert_eq!(config.connection.timeout, Duration::from_secs(5));
        let own = format!("{frontier}  es.metrics.addresses: metrics-node\n");
        let config = read(&own).expect("valid").expect("on");
        assert_eq!(addresses(&config), ["http://metrics-node:9200/"]);
        let shared = "  es.metrics.enabled: true\n  es.addresses: http://shared:9200\n";
        let config = read(shared).expect("valid").expect("on");
        assert_eq!(addresses(&config), ["http://shared:9200/"]);
    }
}
