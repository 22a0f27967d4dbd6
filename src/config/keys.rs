//! The keys of a config file, as StormCrawler names them, with their defaults and checks.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_norway::Value;

use super::http_access::{ProxyKeys, Secret, custom_headers, site_credentials};
use super::sections::{
    FrontierConfig, FrontierKind, HttpConfig, MetadataConfig, ParserConfig, ProtocolConfig,
    ScheduleConfig, SpoutConfig, StatusConfig, TopologyConfig,
};
use super::{ConfigError, CrawlConfig};
use crate::model::PartitionMode;
use crate::protocol::BasicCredentials;
use crate::status::CacheSpec;

/// Declares [`ConfigKeys`] from one line per key: its name in a file, its field, type and default.
macro_rules! config_keys {
    ($($(#[$doc:meta])* $key:literal => $field:ident: $type:ty = $default:expr;)*) => {
        /// The configuration as written: one field per StormCrawler-style key, in the units of the
        /// key (seconds, milliseconds or minutes, `-1` for "none"). [`ConfigKeys::into_config`]
        /// checks it and turns it into the typed [`CrawlConfig`]. Field docs give the key.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct ConfigKeys {
            $($(#[$doc])* #[serde(rename = $key)] pub $field: $type,)*
        }

        impl Default for ConfigKeys {
            fn default() -> Self {
                ConfigKeys { $($field: $default,)* }
            }
        }
    };
}

config_keys! {
    /// `http.timeout`: milliseconds for a whole fetch (connect, headers and body), as in
    /// StormCrawler.
    "http.timeout" => http_timeout: f64 = 30000.0;
    /// `http.connect.timeout`: seconds to establish a connection.
    "http.connect.timeout" => http_connect_timeout: f64 = 10.0;
    /// `http.content.limit`: bytes of body kept per page; longer bodies are truncated. -1: no limit.
    "http.content.limit" => http_content_limit: i64 = 10 * 1024 * 1024;
    /// `http.allow.redirects`: follow redirects within a fetch instead of recording REDIRECTION.
    "http.allow.redirects" => http_allow_redirects: bool = false;
    /// `http.max.redirects`: redirects followed in one fetch when they are followed.
    "http.max.redirects" => http_max_redirects: usize = 5;
    /// `http.refuse.private.addresses`: never connect to private, loopback or link-local addresses.
    "http.refuse.private.addresses" => http_refuse_private_addresses: bool = false;
    /// `http.dns.cache.ttl`: seconds a DNS answer is reused.
    "http.dns.cache.ttl" => http_dns_cache_ttl: f64 = 300.0;
    /// `http.proxy`: the proxy as one URL, `http://user:password@host:port` or
    /// `socks5://host:port`; when given, the `http.proxy.*` parts are not read. Empty: none.
    "http.proxy" => http_proxy: Secret = Secret::default();
    /// `http.proxy.host`: send every request, robots.txt included, through this proxy. Empty: none.
    "http.proxy.host" => http_proxy_host: String = String::new();
    /// `http.proxy.port`: the proxy's port.
    "http.proxy.port" => http_proxy_port: u16 = 8080;
    /// `http.proxy.type`: `HTTP` or `SOCKS` (SOCKS5; the proxy resolves the host names).
    "http.proxy.type" => http_proxy_type: String = "HTTP".to_string();
    /// `http.proxy.user`: the user the proxy asks for (`Proxy-Authorization: Basic`). Empty: none.
    "http.proxy.user" => http_proxy_user: String = String::new();
    /// `http.proxy.pass`: that user's password.
    "http.proxy.pass" => http_proxy_pass: Secret = Secret::default();
    /// `http.custom.headers`: `Name=value` headers sent with every request.
    "http.custom.headers" => http_custom_headers: Vec<String> = Vec::new();
    /// `http.use.cookies`: keep the cookies servers set in the crawl's cookie jar and send them back
    /// to the sites they belong to.
    "http.use.cookies" => http_use_cookies: bool = false;
    /// `http.basicauth.user`: HTTP Basic credentials sent to every host (without its own in
    /// `http.basicauth.hosts`). Empty: none.
    "http.basicauth.user" => http_basicauth_user: String = String::new();
    /// `http.basicauth.password`: the password of `http.basicauth.user`.
    "http.basicauth.password" => http_basicauth_password: Secret = Secret::default();
    /// `http.basicauth.hosts`: host name -> `{user, password}`, HTTP Basic credentials sent to
    /// that host only.
    "http.basicauth.hosts" => http_basicauth_hosts: BTreeMap<String, BasicCredentials> =
        BTreeMap::new();
    /// `sitemap.discovery`: robots.txt `Sitemap:` lines become DISCOVERED URLs, and sitemaps are parsed.
    "sitemap.discovery" => sitemap_discovery: bool = true;
    /// `protocol.schemes`: which protocol fetches each URL scheme, by name: `http` is built in, other
    /// names are registered with `CrawlerBuilder::named_protocol`.
    "protocol.schemes" => protocol_schemes: BTreeMap<String, String> =
        pairs(&[("http", "http"), ("https", "http")]);
    /// `partition.url.mode`: `byHost`, `byDomain` or `byIP`.
    "partition.url.mode" => partition_url_mode: PartitionMode = PartitionMode::ByHost;
    /// `parsefilters.config.file`: a StormCrawler `parsefilters.json`, whose parse filters run
    /// after those of `jsoup.filters.config.file`. Empty: none.
    "parsefilters.config.file" => parsefilters_config_file: String = String::new();
    /// `jsoup.filters.config.file`: a StormCrawler `jsoupfilters.json` (XPathFilter,
    /// LinkParseFilter), whose filters run after `parsefilter.css` and `parsefilter.xpath`. Empty:
    /// none.
    "jsoup.filters.config.file" => jsoup_filters_config_file: String = String::new();
    /// `parser.emitOutlinks`: whether parsed links become DISCOVERED URLs.
    "parser.emitOutlinks" => parser_emit_outlinks: bool = true;
    /// `parser.emitOutlinks.max.per.page`: outlinks kept per page. -1: no limit.
    "parser.emitOutlinks.max.per.page" => parser_emit_outlinks_max_per_page: i64 = 5000;
    /// `parser.text.max.bytes`: visible text kept per page for parse filters and indexers; 0: none.
    "parser.text.max.bytes" => parser_text_max_bytes: usize = 0;
    /// `parsefilter.css`: metadata keys, each with a CSS selector or a list of them; what every
    /// match gives (its text content, or with `selector@name` its attribute `name`) is added to
    /// the key, as `squall::parse::ExtractFilter` does. Checked when the crawler is built.
    #[serde(deserialize_with = "expressions_by_key")]
    "parsefilter.css" => parsefilter_css: BTreeMap<String, Vec<String>> = BTreeMap::new();
    /// `parsefilter.xpath`: metadata keys, each with an XPath 1.0 expression or a list of them;
    /// what every match gives (a node's string value, or the string, number or boolean computed)
    /// is added to the key, after the values of `parsefilter.css`.
    #[serde(deserialize_with = "expressions_by_key")]
    "parsefilter.xpath" => parsefilter_xpath: BTreeMap<String, Vec<String>> = BTreeMap::new();
    /// `redirections.allowed`: whether a redirect's target becomes a DISCOVERED URL.
    "redirections.allowed" => redirections_allowed: bool = true;
    /// `fetchInterval.default`: minutes before a FETCHED or REDIRECTION URL is due again. -1: never.
    "fetchInterval.default" => fetch_interval_default: i64 = 1440;
    /// `fetchInterval.fetch.error`: minutes before a FETCH_ERROR URL is due again. -1: never.
    "fetchInterval.fetch.error" => fetch_interval_fetch_error: i64 = 120;
    /// `fetchInterval.error`: minutes before an ERROR URL is due again. -1: never.
    "fetchInterval.error" => fetch_interval_error: i64 = -1;
    /// `max.fetch.errors`: consecutive fetch errors after which FETCH_ERROR becomes ERROR.
    "max.fetch.errors" => max_fetch_errors: u32 = 3;
    /// `metadata.transfer`: metadata keys copied from a page to its outlinks (and persisted).
    "metadata.transfer" => metadata_transfer: Vec<String> = Vec::new();
    /// `metadata.persist`: metadata keys stored with a URL's status (trailing `*` wildcards allowed).
    "metadata.persist" => metadata_persist: Vec<String> =
        strings(&["_redirTo", "error.cause", "error.source", "isSitemap", "isFeed"]);
    /// `metadata.track.path`: record `url.path` (the page an outlink was found on).
    "metadata.track.path" => metadata_track_path: bool = true;
    /// `metadata.track.depth`: record `depth` (distance from the seeds).
    "metadata.track.depth" => metadata_track_depth: bool = true;
    /// `spout.ttl.purgatory`: seconds an acked or failed URL is not emitted again.
    "spout.ttl.purgatory" => spout_ttl_purgatory: f64 = 30.0;
    /// `spout.min.delay.queries`: milliseconds after a frontier query that brought nothing new before
    /// the next one (an answer with new URLs is followed by the next query as soon as the fetcher has
    /// taken them; an ack or a host's fetcher queue running dry can bring it forward).
    "spout.min.delay.queries" => spout_min_delay_queries: u64 = 2000;
    /// `spout.max.delay.queries`: milliseconds after which a new query runs even if URLs are buffered.
    "spout.max.delay.queries" => spout_max_delay_queries: u64 = 20000;
    /// `spout.reset.fetchdate.after`: seconds after which the status-index spouts' query date goes
    /// back to now (StormCrawler's AggregationSpout and CollapsingSpout); -1: never.
    "spout.reset.fetchdate.after" => spout_reset_fetchdate_after: i64 = 120;
    /// `topology.max.spout.pending`: URLs emitted and not yet acked or failed, per spout instance.
    "topology.max.spout.pending" => topology_max_spout_pending: usize = 2000;
    /// `spout.parallelism`: spout instances, each with the budget of the keys above and of the
    /// frontier's (buckets, URLs per bucket): a StormCrawler flux's spout `parallelism`.
    "spout.parallelism" => spout_parallelism: usize = 1;
    /// `topology.shutdown.timeout`: seconds a graceful stop may take before it is cut short.
    "topology.shutdown.timeout" => topology_shutdown_timeout: f64 = 30.0;
    /// `status.updater.batch.size`: status writes sent to the store together.
    "status.updater.batch.size" => status_updater_batch_size: usize = 200;
    /// `status.updater.flush.interval`: seconds before a partial batch is written anyway.
    "status.updater.flush.interval" => status_updater_flush_interval: f64 = 1.0;
    /// `status.updater.use.cache`: leave out the DISCOVERED writes of URLs this process wrote lately
    /// (an outlink seen again is neither written nor looked up again).
    "status.updater.use.cache" => status_updater_use_cache: bool = true;
    /// `status.updater.cache.spec`: the bounds of that cache, as a Caffeine spec
    /// (`maximumSize=N`, `expireAfterAccess=D`, `expireAfterWrite=D`; D such as 30s, 10m, 1h, 1d).
    "status.updater.cache.spec" => status_updater_cache_spec: String = "maximumSize=10000,expireAfterAccess=1h".to_string();
    /// `frontier.kind`: `embedded`, `opensearch` or `urlfrontier`.
    "frontier.kind" => frontier_kind: FrontierKind = FrontierKind::Embedded;
    /// `frontier.path`: the embedded frontier's directory.
    "frontier.path" => frontier_path: PathBuf = PathBuf::from("squall-frontier");
    /// `frontier.max.buckets`: queues (hosts) read per frontier query.
    "frontier.max.buckets" => frontier_max_buckets: usize = 1000;
    /// `frontier.max.urls.per.bucket`: due URLs read per queue per frontier query.
    "frontier.max.urls.per.bucket" => frontier_max_urls_per_bucket: usize = 2;
}

impl ConfigKeys {
    /// Checks what only the keys as written can show: durations in seconds that are negative, not
    /// numbers, or beyond a year (the typed configuration's own checks follow in `into_config`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let seconds = [
            ("http.timeout", self.http_timeout / 1000.0),
            ("http.connect.timeout", self.http_connect_timeout),
            ("http.dns.cache.ttl", self.http_dns_cache_ttl),
            ("spout.ttl.purgatory", self.spout_ttl_purgatory),
            ("topology.shutdown.timeout", self.topology_shutdown_timeout),
            (
                "status.updater.flush.interval",
                self.status_updater_flush_interval,
            ),
        ];
        // A year is far beyond any sensible setting and well within what timers can hold.
        const YEAR: f64 = 365.0 * 24.0 * 3600.0;
        match seconds
            .iter()
            .find(|(_, value)| !value.is_finite() || !(0.0..=YEAR).contains(value))
        {
            Some((key, _)) => Err(ConfigError::InvalidValue {
                key: key.to_string(),
                message: "must be a number of seconds from 0 to one year".to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Checks the values and turns them into the typed configuration, the sections of the stages
    /// that read their own keys and the keys other crates read left at their defaults (the
    /// builder sets them, then checks the whole); `custom` holds the custom `fetchInterval.*` keys
    /// (in minutes, negative for never).
    pub(super) fn into_config(
        self,
        custom: Vec<(String, i64)>,
    ) -> Result<CrawlConfig, ConfigError> {
        self.validate()?;
        Ok(CrawlConfig {
            http: self.http()?,
            robots: Default::default(),
            fetcher: Default::default(),
            parser: self.parser(),
            indexer: Default::default(),
            schedule: self.schedule(custom),
            status: self.status()?,
            spout: self.spout(),
            topology: TopologyConfig {
                shutdown_timeout: seconds(self.topology_shutdown_timeout),
            },
            partition: self.partition_url_mode,
            agent: Default::default(),
            protocols: ProtocolConfig {
                schemes: self.protocol_schemes,
            },
            filters: Default::default(),
            metadata: MetadataConfig {
                transfer: self.metadata_transfer,
                persist: self.metadata_persist,
                track_path: self.metadata_track_path,
                track_depth: self.metadata_track_depth,
            },
            frontier: FrontierConfig {
                kind: self.frontier_kind,
                path: self.frontier_path,
                max_buckets: self.frontier_max_buckets,
                max_urls_per_bucket: self.frontier_max_urls_per_bucket,
            },
            warc: Default::default(),
            extensions: Default::default(),
            ignored_keys: Vec::new(),
            config_dirs: Vec::new(),
        })
    }

    fn http(&self) -> Result<HttpConfig, ConfigError> {
        let proxy = ProxyKeys {
            url: &self.http_proxy.0,
            host: &self.http_proxy_host,
            port: self.http_proxy_port,
            kind: &self.http_proxy_type,
            user: &self.http_proxy_user,
            password: &self.http_proxy_pass.0,
        };
        Ok(HttpConfig {
            timeout: seconds(self.http_timeout / 1000.0),
            connect_timeout: seconds(self.http_connect_timeout),
            content_limit: usize::try_from(self.http_content_limit).ok(),
            allow_redirects: self.http_allow_redirects,
            max_redirects: self.http_max_redirects,
            refuse_private_addresses: self.http_refuse_private_addresses,
            dns_cache_ttl: seconds(self.http_dns_cache_ttl),
            proxy: proxy.settings()?,
            custom_headers: custom_headers(&self.http_custom_headers)?,
            use_cookies: self.http_use_cookies,
            credentials: site_credentials(
                &self.http_basicauth_user,
                &self.http_basicauth_password.0,
                &self.http_basicauth_hosts,
            )?,
        })
    }

    fn parser(&self) -> ParserConfig {
        ParserConfig {
            emit_outlinks: self.parser_emit_outlinks,
            max_outlinks_per_page: usize::try_from(self.parser_emit_outlinks_max_per_page).ok(),
            text_max_bytes: self.parser_text_max_bytes,
            extract_css: self.parsefilter_css.clone(),
            extract_xpath: self.parsefilter_xpath.clone(),
            redirections_allowed: self.redirections_allowed,
            sitemap_discovery: self.sitemap_discovery,
            parse_filters_file: non_empty(&self.parsefilters_config_file),
            jsoup_filters_file: non_empty(&self.jsoup_filters_config_file),
        }
    }

    fn schedule(&self, custom: Vec<(String, i64)>) -> ScheduleConfig {
        ScheduleConfig {
            default: minutes(self.fetch_interval_default),
            fetch_error: minutes(self.fetch_interval_fetch_error),
            error: minutes(self.fetch_interval_error),
            custom: custom
                .into_iter()
                .map(|(key, m)| (key, minutes(m)))
                .collect(),
            max_fetch_errors: self.max_fetch_errors,
        }
    }

    fn status(&self) -> Result<StatusConfig, ConfigError> {
        let cache = CacheSpec::parse(&self.status_updater_cache_spec).map_err(|error| {
            ConfigError::InvalidValue {
                key: "status.updater.cache.spec".to_string(),
                message: error.to_string(),
            }
        })?;
        Ok(StatusConfig {
            batch_size: self.status_updater_batch_size,
            flush_interval: seconds(self.status_updater_flush_interval),
            outlink_cache: self.status_updater_use_cache.then_some(cache),
        })
    }

    fn spout(&self) -> SpoutConfig {
        SpoutConfig {
            ttl_purgatory: seconds(self.spout_ttl_purgatory),
            min_delay_queries: Duration::from_millis(self.spout_min_delay_queries),
            max_delay_queries: Duration::from_millis(self.spout_max_delay_queries),
            max_pending: self.topology_max_spout_pending,
            parallelism: self.spout_parallelism,
            reset_fetch_date_after: u64::try_from(self.spout_reset_fetchdate_after)
                .ok()
                .map(Duration::from_secs),
        }
    }
}

/// A map from metadata key to one expression or a list of them (`parsefilter.*`).
fn expressions_by_key<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, Vec<String>>, D::Error> {
    let map = BTreeMap::<String, Expressions>::deserialize(deserializer)?;
    Ok(map.into_iter().map(|(key, list)| (key, list.0)).collect())
}

/// One expression, or a list of them.
struct Expressions(Vec<String>);

impl<'de> Deserialize<'de> for Expressions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrMany;

        impl<'de> serde::de::Visitor<'de> for OneOrMany {
            type Value = Vec<String>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an expression or a list of expressions")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Vec<String>, E> {
                Ok(vec![text.to_string()])
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vec<String>, A::Error> {
                let mut list = Vec::new();
                while let Some(text) = seq.next_element::<String>()? {
                    list.push(text);
                }
                Ok(list)
            }
        }

        deserializer.deserialize_any(OneOrMany).map(Expressions)
    }
}

/// A file name given by a key, unless it is blank.
fn non_empty(name: &str) -> Option<String> {
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// A map of owned strings, for defaults.
fn pairs(items: &[(&str, &str)]) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// A list of owned strings, for defaults.
fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

/// Seconds already checked to be finite and within a year.
fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or(Duration::ZERO)
}

/// Minutes as StormCrawler writes them: negative means never.
fn minutes(value: i64) -> Option<Duration> {
    u64::try_from(value)
        .ok()
        .map(|m| Duration::from_secs(m.saturating_mul(60)))
}

/// The keys a YAML example file sets under `prefix` (without it), in file order: one `key: value`
/// per line, as the shipped example files write them.
pub fn listed_keys(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix(prefix)?.split_once(':'))
        .map(|(key, _)| key.to_string())
        .collect()
}

/// The serde names of the fields of a struct of keys, from its default value, in field order: the
/// keys a section read with [`CrawlConfig::extension`](super::CrawlConfig::extension) knows (without
/// their prefix), e.g. to check that an example file lists them all.
pub fn field_names<T: Serialize + Default>() -> Vec<String> {
    match serde_norway::to_value(T::default()) {
        Ok(Value::Mapping(mapping)) => mapping
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}
