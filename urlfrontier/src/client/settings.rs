//! The `urlfrontier.*` keys: where the URLFrontier server is, which crawl to read and write, how
//! much one GetURLs call asks for, and how long calls may take.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use squall::config::{ConfigError, CrawlConfig};
use squall::model::PartitionMode;
use url::Url;

/// The prefix the keys are read under.
pub const PREFIX: &str = "urlfrontier.";

/// The port a URLFrontier server listens on unless told otherwise, used when the address has none.
pub const DEFAULT_PORT: u16 = 7071;

/// The keys as written (prefix left out of the serde names), in the keys' units. StormCrawler's
/// names where it has the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Keys {
    address: String,
    crawlid: String,
    #[serde(rename = "max.buckets")]
    max_buckets: u32,
    #[serde(rename = "max.urls.per.bucket")]
    max_urls_per_bucket: u32,
    #[serde(rename = "delay.requestable")]
    delay_requestable: u32,
    #[serde(rename = "connect.timeout")]
    connect_timeout: f64,
    #[serde(rename = "request.timeout")]
    request_timeout: f64,
}

impl Default for Keys {
    fn default() -> Self {
        Keys {
            address: format!("127.0.0.1:{DEFAULT_PORT}"),
            crawlid: "DEFAULT".to_string(),
            max_buckets: 10,
            max_urls_per_bucket: 10,
            delay_requestable: 30,
            connect_timeout: 10.0,
            request_timeout: 30.0,
        }
    }
}

/// Everything the URLFrontier client is configured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSettings {
    /// The server's address as a URI, `http://host:port` (`urlfrontier.address`, written
    /// `host:port` or `http://host:port`; port 7071 when none is given). TLS is not supported.
    pub address: String,
    /// The crawl read and written (`urlfrontier.crawlid`).
    pub crawl_id: String,
    /// Queues one GetURLs call reads from (`urlfrontier.max.buckets`).
    pub max_queues: u32,
    /// URLs one GetURLs call reads per queue (`urlfrontier.max.urls.per.bucket`).
    pub max_urls_per_queue: u32,
    /// How long the server keeps a URL it handed out from handing it out again
    /// (`urlfrontier.delay.requestable`, whole seconds): a URL whose fetch failed comes back
    /// after this long.
    pub delay_requestable: Duration,
    /// How long connecting may take (`urlfrontier.connect.timeout`).
    pub connect_timeout: Duration,
    /// How long one call may take, its whole answer stream included
    /// (`urlfrontier.request.timeout`).
    pub request_timeout: Duration,
    /// How squall partitions URLs (`partition.url.mode`): the queue of a URL the server hands out
    /// without a key.
    pub partition: PartitionMode,
}

impl ClientSettings {
    /// Reads the `urlfrontier.*` keys of `config` (and its `partition.url.mode`).
    pub fn from_config(config: &CrawlConfig) -> Result<Self, ConfigError> {
        let keys: Keys = config.extension(&[PREFIX])?;
        let invalid = |key: &str, reason: String| ConfigError::InvalidValue {
            key: format!("{PREFIX}{key}"),
            message: reason,
        };
        let seconds = |key: &str, value: f64| {
            Duration::try_from_secs_f64(value)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| invalid(key, format!("{value} is not a positive number of seconds")))
        };
        for (key, value) in [
            ("max.buckets", keys.max_buckets),
            ("max.urls.per.bucket", keys.max_urls_per_bucket),
        ] {
            if value == 0 {
                return Err(invalid(key, "must be at least 1".to_string()));
            }
        }
        let crawl_id = keys.crawlid.trim().to_string();
        if crawl_id.is_empty() {
            return Err(invalid("crawlid", "must name a crawl".to_string()));
        }
        Ok(ClientSettings {
            address: server_uri(&keys.address).map_err(|reason| invalid("address", reason))?,
            crawl_id,
            max_queues: keys.max_buckets,
            max_urls_per_queue: keys.max_urls_per_bucket,
            delay_requestable: Duration::from_secs(u64::from(keys.delay_requestable)),
            connect_timeout: seconds("connect.timeout", keys.connect_timeout)?,
            request_timeout: seconds("request.timeout", keys.request_timeout)?,
            partition: config.partition,
        })
    }
}

/// `host:port` or `http://host:port` as the URI tonic connects to, `http://host:port`.
fn server_uri(address: &str) -> Result<String, String> {
    let address = address.trim();
    let written = if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    let url = Url::parse(&written).map_err(|error| format!("`{address}`: {error}"))?;
    if url.scheme() != "http" {
        return Err(format!(
            "`{address}`: only plaintext gRPC is supported, write host:port or http://host:port"
        ));
    }
    let Some(host) = url.host_str() else {
        return Err(format!("`{address}` names no host"));
    };
    if !matches!(url.path(), "" | "/") || url.query().is_some() {
        return Err(format!(
            "`{address}`: a server address has no path or query"
        ));
    }
    let port = url.port().unwrap_or(DEFAULT_PORT);
    Ok(format!("http://{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(yaml: &str) -> CrawlConfig {
        let text = format!("http.agent.name: test\n{yaml}");
        CrawlConfig::from_yaml_str(&text).expect("config")
    }

    #[test]
    fn defaults_are_stormcrawlers() {
        let settings = ClientSettings::from_config(&config("")).expect("settings");
        assert_eq!(settings.address, "http://127.0.0.1:7071");
        assert_eq!(settings.crawl_id, "DEFAULT");
        assert_eq!((settings.max_queues, settings.max_urls_per_queue), (10, 10));
        assert_eq!(settings.delay_requestable, Duration::from_secs(30));
        assert_eq!(settings.partition, PartitionMode::ByHost);
    }

    #[test]
    fn addresses_are_read_as_host_port_or_http_uris() {
        let read = |address: &str| server_uri(address);
        assert_eq!(read("frontier:7071").as_deref(), Ok("http://frontier:7071"));
        assert_eq!(
            read("http://[::1]:9000/").as_deref(),
            Ok("http://[::1]:9000")
        );
        assert_eq!(read(" localhost ").as_deref(), Ok("http://localhost:7071"));
        assert!(read("https://frontier:443").is_err_and(|e| e.contains("plaintext")));
        assert!(read("http://frontier:7071/api").is_err_and(|e| e.contains("path")));
        assert!(read("").is_err());
    }

    #[test]
    fn keys_are_read_and_checked() {
        let settings = ClientSettings::from_config(&config(
            "urlfrontier.address: http://10.0.0.5:8080\nurlfrontier.crawlid: news\n\
             urlfrontier.max.buckets: 3\nurlfrontier.delay.requestable: 5\n\
             urlfrontier.request.timeout: 2.5\npartition.url.mode: byDomain\n",
        ))
        .expect("settings");
        assert_eq!(settings.address, "http://10.0.0.5:8080");
        assert_eq!(settings.crawl_id, "news");
        assert_eq!(settings.max_queues, 3);
        assert_eq!(settings.delay_requestable, Duration::from_secs(5));
        assert_eq!(settings.request_timeout, Duration::from_millis(2500));
        assert_eq!(settings.partition, PartitionMode::ByDomain);
        let error = |yaml: &str| {
            ClientSettings::from_config(&config(yaml))
                .expect_err(yaml)
                .to_string()
        };
        assert!(error("urlfrontier.adress: x:1\n").contains("urlfrontier.address"));
        assert!(error("urlfrontier.max.buckets: 0\n").contains("urlfrontier.max.buckets"));
        assert!(error("urlfrontier.crawlid: ' '\n").contains("urlfrontier.crawlid"));
        assert!(error("urlfrontier.connect.timeout: 0\n").contains("urlfrontier.connect.timeout"));
        assert!(error("urlfrontier.address: 'https://x:1'\n").contains("urlfrontier.address"));
    }

    #[test]
    fn the_shipped_example_lists_every_key_with_its_default() {
        let text = include_str!("../../../examples/urlfrontier-conf.yaml");
        if let Err(error) = squall::config::check_example::<Keys>(text, &[PREFIX], &[]) {
            panic!("examples/urlfrontier-conf.yaml: {error}");
        }
    }
}
