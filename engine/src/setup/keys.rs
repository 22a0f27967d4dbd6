//! The `es.*` keys (also read under `opensearch.*`): where the Elasticsearch/OpenSearch frontier
//! is, which indices it uses, which spout reads it, and the queue frontier's leases.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use squall::config::{ConfigError, CrawlConfig};

use super::cluster_keys::{ClusterSettings, connect, invalid, seconds};
use super::query_keys::QuerySettings;
use crate::client::ConnectionConfig;
use crate::client::UpdateMode;
use crate::status_index::schema::{STATUS_INDEX_SHARDS, URLS_INDEX_SHARDS};
use crate::status_index::spouts::{STATUS_INDEX_SPOUTS, StatusIndexSpout, status_index_spout};

/// The prefixes the keys are read under: StormCrawler's Elasticsearch module writes `es.`, its
/// OpenSearch module `opensearch.` (the core keeps both for this crate).
pub const PREFIXES: &[&str] = &["es.", "opensearch."];

/// Keys under the prefixes that other sections read: the content indexer's (`es.indexer.*`,
/// crate::indexer) and the metrics index's (`es.metrics.*`, crate::metrics).
pub const OTHER_SECTIONS: &[&str] = &["indexer.", "metrics."];

squall::keyed_settings! {
    /// The frontier's keys, `es.*` (or `opensearch.*`; prefix left out of the names below): where
    /// the cluster is (the shared connection keys and the frontier's own), which indices, which
    /// spout and how it queries, and the queue frontier's leases. Unknown keys are refused by
    /// [`CrawlConfig::extension_except`], which checks every key against these names.
    #[derive(Debug, Clone, PartialEq)]
    pub struct IndexFrontierSettings {
        sections {
            /// `es.addresses`, `es.user`, `es.api.key`, `es.tls.ca.file`, ...: the connection
            /// keys every part of the crawler falls back to ([`ClusterSettings`]).
            shared: ClusterSettings,
            /// `es.status.addresses`, `es.status.user`, `es.status.request.timeout`, ...: the
            /// frontier's own, over the shared ones.
            "status." as StatusKeys => status: ClusterSettings,
            /// `es.status.max.buckets`, `es.status.bucket.sort.field`, ...: how the spouts query
            /// the index.
            query: QuerySettings,
        }
        /// `es.status.index.name`: the status index (the urls index with the queue spout).
        "status.index.name" => index: String = "status".to_string(),
        /// `es.status.index.shards`: primary shards of an index this crawler creates (-1:
        /// [`STATUS_INDEX_SHARDS`] for a status index, [`URLS_INDEX_SHARDS`] for a urls index).
        "status.index.shards" with "squall::settings::units::negative_is_none" =>
            shards: Option<u32> = None,
        /// `es.status.index.replicas`: replicas of an index this crawler creates.
        "status.index.replicas" => replicas: u32 = 1,
        /// `es.status.bucket.field`: the field holding the partition key.
        "status.bucket.field" => bucket_field: String = "key".to_string(),
        /// `es.status.routing.fieldname`: where the partition key is stored (StormCrawler's name
        /// for the bucket field; empty: `es.status.bucket.field`).
        "status.routing.fieldname" => routing_fieldname: String = String::new(),
        /// `es.status.routing`: route new documents by their key, not at all, or as the existing
        /// index shows.
        "status.routing" => routing: RoutingKey = RoutingKey::Auto,
        /// `es.status.spout`: which spout reads the frontier.
        "status.spout" => spout: SpoutKind = SpoutKind::AGGREGATION,
        /// `es.status.instance`: this process's share of the status index, `I/N`.
        "status.instance" => instance: String = "0/1".to_string(),
        /// `es.queues.index.name`: the queues index of the queue spout.
        "queues.index.name" => queues_index: String = "queues".to_string(),
        /// `es.queues.owner`: this process's name on its leases (empty: host name and PID).
        "queues.owner" => owner: String = String::new(),
        /// `es.queues.lease.ttl`: seconds a lease lasts without renewal.
        "queues.lease.ttl" => lease_ttl: f64 = 60.0,
        /// `es.queues.max.hold`: seconds a queue is held at most while others wait.
        "queues.max.hold" => max_hold: f64 = 30.0,
        /// `es.queues.updates`: how the queue frontier changes a queue (Painless scripts,
        /// conditional writes, or `auto`: as the engine allows).
        "queues.updates" => updates: UpdateMode = UpdateMode::Auto,
    }
}

impl IndexFrontierSettings {
    /// Reads the `es.*` (or `opensearch.*`) keys of `config` but the other sections'; absent keys
    /// take their defaults, unknown ones are an error with a did-you-mean.
    pub fn from_config(config: &CrawlConfig) -> Result<Self, ConfigError> {
        config.extension_except(PREFIXES, OTHER_SECTIONS)
    }
}

/// `es.status.routing`: `true`, `false`, or `auto` (as the existing index shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RoutingText", into = "RoutingText")]
pub enum RoutingKey {
    /// Documents routed by their key (`true`) or not at all (`false`).
    Set(bool),
    /// As a sample of the existing index shows.
    Auto,
}

/// How the routing key may be written: a boolean, or the text `auto` (or `true` / `false`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum RoutingText {
    /// `true` or `false`.
    Flag(bool),
    /// `auto` (or `"true"`, `"false"`).
    Text(String),
}

impl TryFrom<RoutingText> for RoutingKey {
    type Error = String;

    fn try_from(value: RoutingText) -> Result<Self, Self::Error> {
        match value {
            RoutingText::Flag(routed) => Ok(RoutingKey::Set(routed)),
            RoutingText::Text(text) => match text.as_str() {
                "auto" => Ok(RoutingKey::Auto),
                "true" => Ok(RoutingKey::Set(true)),
                "false" => Ok(RoutingKey::Set(false)),
                _ => Err(format!("expected true, false or auto, not {text:?}")),
            },
        }
    }
}

impl From<RoutingKey> for RoutingText {
    fn from(value: RoutingKey) -> Self {
        match value {
            RoutingKey::Set(routed) => RoutingText::Flag(routed),
            RoutingKey::Auto => RoutingText::Text("auto".to_string()),
        }
    }
}

/// Which spout reads the frontier (`es.status.spout`): a spout over the status index, by its name
/// in [`STATUS_INDEX_SPOUTS`] (aggregation, collapsing, hybrid), or `queue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpoutKind {
    /// A spout over StormCrawler's status index, named as in [`STATUS_INDEX_SPOUTS`].
    StatusIndex(&'static str),
    /// A urls index and a queues index with leases: any number of processes share one frontier.
    Queue,
}

impl SpoutKind {
    /// The default: a terms aggregation on the bucket field with top hits (StormCrawler's
    /// AggregationSpout).
    pub const AGGREGATION: SpoutKind = SpoutKind::StatusIndex("aggregation");

    /// The name `es.status.spout` writes.
    pub fn name(self) -> &'static str {
        match self {
            SpoutKind::StatusIndex(name) => name,
            SpoutKind::Queue => "queue",
        }
    }

    /// The spout over the status index this kind names (`None` for `queue`).
    pub fn status_index_spout(self) -> Option<&'static StatusIndexSpout> {
        match self {
            SpoutKind::StatusIndex(name) => status_index_spout(name),
            SpoutKind::Queue => None,
        }
    }

    /// The kind `name` names, if any.
    pub fn from_name(name: &str) -> Option<SpoutKind> {
        match name {
            "queue" => Some(SpoutKind::Queue),
            _ => status_index_spout(name).map(|spout| SpoutKind::StatusIndex(spout.name)),
        }
    }
}

impl Serialize for SpoutKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for SpoutKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        SpoutKind::from_name(&name).ok_or_else(|| {
            let known: Vec<&str> = STATUS_INDEX_SPOUTS.iter().map(|s| s.name).collect();
            serde::de::Error::custom(format!(
                "unknown spout `{name}`, expected one of {}, queue",
                known.join(", ")
            ))
        })
    }
}

/// The Elasticsearch/OpenSearch frontier's settings, typed, from the `es.*` keys.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexFrontierConfig {
    /// How to reach the cluster: the frontier's connection keys (`es.status.addresses`,
    /// `es.status.user`, `es.status.request.timeout`, ...), each else the shared one
    /// (`es.addresses`, `es.user`, ...), else its default ([`ClusterSettings`]); and
    /// `es.queues.updates`, how the queue frontier changes a queue (Painless scripts or
    /// conditional writes; `auto` asks the engine).
    pub connection: ConnectionConfig,
    /// How the spouts query the index (`es.status.max.buckets`, sort fields, sampling, ...).
    pub query: QuerySettings,
    /// `es.status.index.name`: the status index (the urls index with the queue spout).
    pub index: String,
    /// `es.status.index.shards`: primary shards of an index this crawler creates (by default
    /// [`STATUS_INDEX_SHARDS`], or [`URLS_INDEX_SHARDS`] with the queue spout).
    pub shards: u32,
    /// `es.status.index.replicas`: replicas of an index this crawler creates.
    pub replicas: u32,
    /// `es.status.bucket.field` (or `es.status.routing.fieldname`): the field holding the
    /// partition key (`key`, or a metadata field such as `metadata.hostname`).
    pub bucket_field: String,
    /// `es.status.routing`: route new documents by their key (`Some(true)`), not at all
    /// (`Some(false)`), or as a sample of the existing index shows (`None`, the default).
    pub routing: Option<bool>,
    /// `es.status.spout`: which spout reads the frontier.
    pub spout: SpoutKind,
    /// `es.status.instance`: this process's share of the status index, `I/N`, reading only its
    /// shards (the aggregation, collapsing and hybrid spouts).
    pub instance: (u32, u32),
    /// `es.queues.index.name`: the queues index of the queue spout.
    pub queues_index: String,
    /// `es.queues.owner`: this process's name on its leases (`None`: host name and PID).
    pub owner: Option<String>,
    /// `es.queues.lease.ttl`: how long a lease lasts without renewal.
    pub lease_ttl: Duration,
    /// `es.queues.max.hold`: how long this process holds a queue at most while other due queues
    /// wait for a process.
    pub max_hold: Duration,
}

impl IndexFrontierConfig {
    /// Reads and checks the `es.*` (or `opensearch.*`) keys of `config`; absent keys take their
    /// defaults, unknown ones are an error with a did-you-mean.
    pub fn from_config(config: &CrawlConfig) -> Result<Self, ConfigError> {
        let keys = IndexFrontierSettings::from_config(config)?;
        Ok(IndexFrontierConfig {
            connection: keys.connection()?,
            query: keys.query.clone().checked()?,
            bucket_field: keys.key_field()?,
            instance: instance(&keys.instance)?,
            routing: match keys.routing {
                RoutingKey::Set(routed) => Some(routed),
                RoutingKey::Auto => None,
            },
            owner: Some(keys.owner).filter(|owner| !owner.trim().is_empty()),
            lease_ttl: seconds("es.queues.lease.ttl", keys.lease_ttl, 1.0)?,
            max_hold: seconds("es.queues.max.hold", keys.max_hold, 0.001)?,
            index: keys.index,
            shards: shards(keys.shards, keys.spout)?,
            replicas: keys.replicas,
            spout: keys.spout,
            queues_index: keys.queues_index,
        })
    }
}

impl IndexFrontierSettings {
    /// How the frontier reaches the cluster: its `es.status.*` connection keys over the shared
    /// `es.*` ones ([`ClusterSettings`]'s one rule), with the update mode.
    pub(crate) fn connection(&self) -> Result<ConnectionConfig, ConfigError> {
        let mut connection = connect(&self.frontier_layers())?;
        connection.update_mode = self.updates;
        Ok(connection)
    }

    /// The frontier's connection keys and the shared ones they fall back to, each with its prefix.
    pub(crate) fn frontier_layers(&self) -> [(&'static str, &ClusterSettings); 2] {
        [("es.status.", &self.status), ("es.", &self.shared)]
    }

    /// The bucket field, reconciled with `es.status.routing.fieldname`: squall keeps the partition
    /// key in one field, which both name when both are set.
    fn key_field(&self) -> Result<String, ConfigError> {
        let bucket_field = &self.bucket_field;
        let routing = self.routing_fieldname.trim();
        if routing.is_empty() || routing == bucket_field {
            return Ok(bucket_field.to_string());
        }
        if bucket_field == "key" {
            // Only the routing field was set: it is where the key lives.
            return Ok(routing.to_string());
        }
        Err(invalid(
            "es.status.routing.fieldname",
            format!(
                "{routing:?} differs from es.status.bucket.field {bucket_field:?}: squall stores \
                 the partition key in one field, which the spouts group by"
            ),
        ))
    }
}

/// `es.status.index.shards`, or the default of the index `spout` reads; at least one.
fn shards(set: Option<u32>, spout: SpoutKind) -> Result<u32, ConfigError> {
    match set {
        Some(0) => Err(invalid(
            "es.status.index.shards",
            "an index needs at least one shard".to_string(),
        )),
        Some(shards) => Ok(shards),
        None if spout == SpoutKind::Queue => Ok(URLS_INDEX_SHARDS),
        None => Ok(STATUS_INDEX_SHARDS),
    }
}

fn instance(value: &str) -> Result<(u32, u32), ConfigError> {
    value
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)))
        .filter(|(i, n)| *n > 0 && i < n)
        .ok_or_else(|| {
            invalid(
                "es.status.instance",
                format!("{value:?} is not I/N with I < N"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use squall::config::ConfigBuilder;

    fn addresses(config: &IndexFrontierConfig) -> Vec<&str> {
        crate::testing::addresses(&config.connection)
    }

    fn read(keys: &[&str]) -> Result<IndexFrontierConfig, ConfigError> {
        IndexFrontierConfig::from_config(&crate::testing::config_of(keys)?)
    }

    /// Reading `keys` fails, the error naming `key`; the error's text.
    fn refused_naming(keys: &[&str], key: &str) -> String {
        crate::testing::refused_naming(read, keys, key)
    }

    #[test]
    fn defaults_match_stormcrawler() {
        let config = read(&[]).expect("defaults");
        assert_eq!(addresses(&config), ["http://127.0.0.1:9200/"]);
        assert_eq!(config.index, "status");
        assert_eq!(config.bucket_field, "key");
        assert_eq!(config.routing, None);
        assert_eq!(config.spout, SpoutKind::AGGREGATION);
        assert_eq!(config.instance, (0, 1));
        assert_eq!(config.lease_ttl, Duration::from_secs(60));
        assert_eq!(config.shards, STATUS_INDEX_SHARDS);
    }

    #[test]
    fn a_urls_index_takes_fewer_shards_than_a_status_index_unless_told() {
        assert_eq!(STATUS_INDEX_SHARDS, 10, "StormCrawler's index script");
        assert_eq!(read(&["es.status.spout=queue"]).expect("queue").shards, 2);
        let told = read(&["es.status.spout=queue", "es.status.index.shards=10"]).expect("10");
        assert_eq!(told.shards, 10);
        let unset = read(&["es.status.spout=collapsing", "es.status.index.shards=-1"]);
        assert_eq!(unset.expect("-1").shards, STATUS_INDEX_SHARDS);
        refused_naming(&["es.status.index.shards=0"], "es.status.index.shards");
    }

    #[test]
    fn keys_are_read_under_either_prefix_in_their_units() {
        let config = read(&[
            "es.status.addresses=http://a:9200;http://b:9200",
            "opensearch.status.spout=queue",
            "es.status.routing=false",
            "es.status.instance=1/3",
            "es.queues.lease.ttl=2.5",
            "es.queues.owner=worker-7",
            "es.queues.updates=conditional",
        ])
        .expect("valid");
        assert_eq!(addresses(&config), ["http://a:9200/", "http://b:9200/"]);
        assert_eq!(config.spout, SpoutKind::Queue);
        assert_eq!(config.routing, Some(false));
        assert_eq!(config.instance, (1, 3));
        assert_eq!(config.lease_ttl, Duration::from_millis(2500));
        assert_eq!(config.owner.as_deref(), Some("worker-7"));
        assert_eq!(config.connection.update_mode, UpdateMode::Conditional);
        let listed = read(&["es.status.addresses=[http://a:9200, http://b:9200]"]).expect("list");
        assert_eq!(listed.connection.addresses.len(), 2);
    }

    #[test]
    fn the_shipped_example_lists_every_key_with_its_default() {
        crate::testing::assert_example_lists::<IndexFrontierSettings>(PREFIXES, OTHER_SECTIONS);
    }

    #[test]
    fn stormcrawler_spout_keys_apply_and_its_other_keys_are_set_aside() {
        let yaml = "config:\n  opensearch.addresses: \"http://localhost:9200\"\n  \
                    opensearch.status.routing.fieldname: key\n  \
                    opensearch.status.max.buckets: 50\n  opensearch.status.max.urls.per.bucket: 2\n  \
                    opensearch.status.bucket.sort.field:\n   - nextFetchDate\n   - url\n  \
                    opensearch.status.global.sort.field: \"\"\n  opensearch.status.sample: true\n  \
                    opensearch.status.query.timeout: 20\n  opensearch.status.filterQuery: \"-(key:a.test)\"\n  \
                    opensearch.status.recentDate.increase: 5\n  opensearch.status.bulkActions: 500\n  \
                    opensearch.status.flushInterval: \"5s\"\n  opensearch.user: u\n  \
                    topology.workers: 1\n  http.agent.name: test\n";
        let config = ConfigBuilder::new()
            .yaml_str(yaml)
            .and_then(ConfigBuilder::build)
            .expect("StormCrawler's keys load");
        assert_eq!(
            config.ignored_keys,
            [
                "opensearch.status.bulkActions",
                "opensearch.status.flushInterval",
                "topology.workers"
            ]
        );
        let index = IndexFrontierConfig::from_config(&config).expect("valid");
        assert_eq!(addresses(&index), ["http://localhost:9200/"]);
        assert_eq!(index.connection.user.as_deref(), Some("u"));
        assert_eq!(index.bucket_field, "key");
        let query = &index.query;
        assert_eq!(
            (query.max_buckets, query.max_urls_per_bucket),
            (Some(50), Some(2))
        );
        assert_eq!(query.bucket_sort, ["nextFetchDate", "url"]);
        assert_eq!(query.global_sort, None);
        assert!(query.sample);
        assert_eq!(query.query_timeout, Some(20));
        assert_eq!(query.filter_queries, ["-(key:a.test)"]);
        assert_eq!(query.recent_date_increase, Some(5));
        assert_eq!(query.recent_date_min_gap, None);
    }

    #[test]
    fn the_routing_field_and_the_bucket_field_name_one_field() {
        let alone = read(&["es.status.routing.fieldname=metadata.hostname"]).expect("alone");
        assert_eq!(alone.bucket_field, "metadata.hostname");
        let err = read(&[
            "es.status.routing.fieldname=metadata.hostname",
            "es.status.bucket.field=metadata.domain",
        ])
        .expect_err("two fields");
        assert!(
            err.to_string().contains("es.status.routing.fieldname"),
            "{err}"
        );
        refused_naming(&["es.status.max.buckets=0"], "es.status.max.buckets");
        let shared = read(&["es.addresses=http://a:9200"]).expect("shared");
        assert_eq!(addresses(&shared), ["http://a:9200/"]);
        let own = read(&[
            "es.addresses=http://a:9200",
            "es.status.addresses=http://b:9200",
        ]);
        assert_eq!(addresses(&own.expect("own")), ["http://b:9200/"]);
    }

    #[test]
    fn keys_are_checked_even_for_the_embedded_frontier() {
        let config = ConfigBuilder::new()
            .set("http.agent.name=test")
            .and_then(|b| b.set("es.status.indx.name=x"))
            .and_then(ConfigBuilder::build)
            .expect("the core keeps es.* keys");
        let opened = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(crate::setup::open(&config));
        let Err(error) = opened else {
            panic!("a typo in an es.* key passed");
        };
        assert!(error.to_string().contains("es.status.indx.name"), "{error}");
    }

    #[test]
    fn bad_values_and_typos_name_the_key() {
        refused_naming(&["es.status.addresses=http://[::1"], "es.status.addresses");
        refused_naming(&["es.status.instance=3/2"], "es.status.instance");
        refused_naming(&["es.queues.lease.ttl=0.5"], "es.queues.lease.ttl");
        let err = refused_naming(&["es.status.routing=sometimes"], "es.status.routing");
        assert!(
            err.to_string().contains("expected true, false or auto"),
            "{err}"
        );
        refused_naming(&["es.status.spout=scroll"], "es.status.spout");
        let err = read(&["es.status.indx.name=x"]).expect_err("typo");
        assert!(
            err.to_string()
                .contains("did you mean `es.status.index.name`"),
            "{err}"
        );
    }

    /// Each key of the crate has one default: the value each settings type holds when the key is
    /// absent (its `Default`, written as a file writes it) is the one examples/opensearch-conf.yaml
    /// documents, and the file documents every key.
    #[test]
    fn each_key_has_one_default_the_example_documents() {
        use squall::settings::{documented_defaults, undocumented_defaults};
        let text = include_str!("../../../examples/opensearch-conf.yaml");
        let types = [
            ("es.", documented_defaults::<IndexFrontierSettings>()),
            (
                "es.indexer.",
                documented_defaults::<crate::indexer::ContentIndexSettings>(),
            ),
            (
                "es.metrics.",
                documented_defaults::<crate::metrics::MetricsIndexSettings>(),
            ),
        ];
        let mut wrong = Vec::new();
        for (prefix, defaults) in &types {
            assert!(!defaults.is_empty(), "{prefix}: no keys");
            wrong.extend(undocumented_defaults(defaults, text, prefix));
        }
        assert!(
            wrong.is_empty(),
            "examples/opensearch-conf.yaml and the defaults differ:\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn a_bad_value_in_a_section_names_its_key() {
        for (setting, key) in [
            (
                "es.status.request.timeout=soon",
                "es.status.request.timeout",
            ),
            ("es.addresses={a: 1}", "es.addresses"),
            ("opensearch.status.user=[a, b]", "es.status.user"),
            ("es.status.max.buckets=many", "es.status.max.buckets"),
        ] {
            let err = read(&[setting]).expect_err(setting);
            assert!(
                matches!(&err, ConfigError::InvalidValue { key: named, .. } if named == key),
                "{setting}: {err:?}"
            );
        }
    }
}
