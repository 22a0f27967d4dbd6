//! The `urlfrontier.*` keys: where the URLFrontier server is, which crawl to read and write, how
//! much one GetURLs call asks for, and how long calls may take.

use std::time::Duration;

use squall::config::{ConfigError, CrawlConfig, Secret};
use squall::model::PartitionMode;
use squall::settings::units;
use url::Url;

/// The prefix the keys are read under.
pub const PREFIX: &str = "urlfrontier.";

/// The port a URLFrontier server listens on unless told otherwise, used when the address has none.
pub const DEFAULT_PORT: u16 = 7071;

squall::keyed_settings! {
    /// Everything the URLFrontier client is configured with: the `urlfrontier.*` keys (StormCrawler's
    /// names where it has the key; prefix left out of the names below), one line a key.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClientSettings {
        /// `urlfrontier.address`: the server, `host:port`, `http://host:port`, or
        /// `https://host:port` for TLS (port 7071 when none is given); read as the URI tonic
        /// connects to.
        "address" => address: String = format!("127.0.0.1:{DEFAULT_PORT}"),
        /// `urlfrontier.token`: the bearer token sent with every call (gRPC metadata
        /// `authorization: Bearer <token>`), for a server that asks for one; empty: none. After
        /// [`from_config`](Self::from_config), also the token read from `urlfrontier.token.file`.
        "token" => token: Secret = Secret::default(),
        /// `urlfrontier.token.file`: a file whose first line is the token.
        "token.file" => token_file: String = String::new(),
        /// `urlfrontier.tls.ca.file`: the CA certificates (PEM) that signed the server's
        /// certificate, trusted beside the system's roots (with an `https://` address).
        "tls.ca.file" => ca_file: String = String::new(),
        /// `urlfrontier.crawlid`: the crawl read and written.
        "crawlid" => crawl_id: String = "DEFAULT".to_string(),
        /// `urlfrontier.max.buckets`: queues one GetURLs call reads from.
        "max.buckets" => max_queues: u32 = 10,
        /// `urlfrontier.max.urls.per.bucket`: URLs one GetURLs call reads per queue.
        "max.urls.per.bucket" => max_urls_per_queue: u32 = 10,
        /// `urlfrontier.delay.requestable`: whole seconds the server keeps a URL it handed out
        /// from handing it out again: a URL whose fetch failed comes back after this long.
        "delay.requestable" with "units::whole_seconds" => delay_requestable: Duration =
            Duration::from_secs(30),
        /// `urlfrontier.connect.timeout`: seconds connecting may take.
        "connect.timeout" with "units::seconds" => connect_timeout: Duration =
            Duration::from_secs(10),
        /// `urlfrontier.request.timeout`: seconds one call may take, its whole answer stream
        /// included.
        "request.timeout" with "units::seconds" => request_timeout: Duration =
            Duration::from_secs(30),
        derived {
            /// How squall partitions URLs (not a key of its own: `partition.url.mode`): the queue
            /// of a URL the server hands out without a key.
            partition: PartitionMode = PartitionMode::ByHost,
        }
    }
}

impl ClientSettings {
    /// Reads the `urlfrontier.*` keys of `config` (and its `partition.url.mode`), and checks them.
    pub fn from_config(config: &CrawlConfig) -> Result<Self, ConfigError> {
        let mut settings: ClientSettings = config.extension(&[PREFIX])?;
        let invalid = |key: &str, reason: &str| ConfigError::InvalidValue {
            key: format!("{PREFIX}{key}"),
            message: reason.to_string(),
        };
        let counts = [
            ("max.buckets", settings.max_queues),
            ("max.urls.per.bucket", settings.max_urls_per_queue),
        ];
        if let Some((key, _)) = counts.into_iter().find(|(_, value)| *value == 0) {
            return Err(invalid(key, "must be at least 1"));
        }
        let timeouts = [
            ("connect.timeout", settings.connect_timeout),
            ("request.timeout", settings.request_timeout),
        ];
        if let Some((key, _)) = timeouts.into_iter().find(|(_, value)| value.is_zero()) {
            return Err(invalid(key, "must be more than 0 seconds"));
        }
        settings.crawl_id = settings.crawl_id.trim().to_string();
        if settings.crawl_id.is_empty() {
            return Err(invalid("crawlid", "must name a crawl"));
        }
        settings.address =
            server_uri(&settings.address).map_err(|reason| invalid("address", &reason))?;
        settings.token = token(&settings).map_err(|(key, reason)| invalid(key, &reason))?;
        if !settings.ca_file.trim().is_empty() && !settings.address.starts_with("https://") {
            return Err(invalid(
                "tls.ca.file",
                "is set but urlfrontier.address is not https://",
            ));
        }
        settings.partition = config.fetcher.partition;
        Ok(settings)
    }
}

/// The token written in `urlfrontier.token` or read from `urlfrontier.token.file` (not both); the
/// failing key and why (never the token).
fn token(settings: &ClientSettings) -> Result<Secret, (&'static str, String)> {
    let written = settings.token.0.trim();
    let file = settings.token_file.trim();
    match (written.is_empty(), file.is_empty()) {
        (_, true) => Ok(Secret(written.to_string())),
        (false, false) => Err((
            "token",
            "is set together with urlfrontier.token.file".into(),
        )),
        (true, false) => Secret::from_file(file).map_err(|e| ("token.file", e.to_string())),
    }
}

/// `host:port`, `http://host:port` or `https://host:port` as the URI tonic connects to.
fn server_uri(address: &str) -> Result<String, String> {
    let address = address.trim();
    let written = if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    let url = Url::parse(&written).map_err(|error| format!("`{address}`: {error}"))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "`{address}`: write host:port, http://host:port or https://host:port (TLS)"
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
    Ok(format!("{scheme}://{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's settings from a configuration of `yaml` (with an agent name), or why not.
    fn read(yaml: &str) -> Result<ClientSettings, ConfigError> {
        let config = squall::config::ConfigBuilder::new()
            .set("http.agent.name=test")?
            .yaml_str(yaml)?
            .build()?;
        ClientSettings::from_config(&config)
    }

    #[test]
    fn defaults_are_stormcrawlers() {
        let settings = read("").expect("settings");
        assert_eq!(settings.address, "http://127.0.0.1:7071");
        assert_eq!(settings.crawl_id, "DEFAULT");
        assert_eq!((settings.max_queues, settings.max_urls_per_queue), (10, 10));
        assert_eq!(settings.delay_requestable, Duration::from_secs(30));
        assert_eq!(settings.partition, PartitionMode::ByHost);
    }

    #[test]
    fn addresses_are_read_as_host_port_or_http_uris() {
        let read = server_uri;
        assert_eq!(read("frontier:7071").as_deref(), Ok("http://frontier:7071"));
        assert_eq!(
            read("http://[::1]:9000/").as_deref(),
            Ok("http://[::1]:9000")
        );
        assert_eq!(read(" localhost ").as_deref(), Ok("http://localhost:7071"));
        assert_eq!(
            read("https://frontier").as_deref(),
            Ok("https://frontier:7071")
        );
        assert!(read("ftp://frontier:21").is_err_and(|e| e.contains("https://")));
        assert!(read("http://frontier:7071/api").is_err_and(|e| e.contains("path")));
        assert!(read("").is_err());
    }

    #[test]
    fn keys_are_read_and_checked() {
        let settings = read(
            "urlfrontier.address: http://10.0.0.5:8080\nurlfrontier.crawlid: news\n\
             urlfrontier.max.buckets: 3\nurlfrontier.delay.requestable: 5\n\
             urlfrontier.request.timeout: 2.5\npartition.url.mode: byDomain\n",
        )
        .expect("settings");
        assert_eq!(settings.address, "http://10.0.0.5:8080");
        assert_eq!(settings.crawl_id, "news");
        assert_eq!(settings.max_queues, 3);
        assert_eq!(settings.delay_requestable, Duration::from_secs(5));
        assert_eq!(settings.request_timeout, Duration::from_millis(2500));
        assert_eq!(settings.partition, PartitionMode::ByDomain);
        let error = |yaml: &str| read(yaml).expect_err(yaml).to_string();
        assert!(error("urlfrontier.adress: x:1\n").contains("urlfrontier.address"));
        assert!(error("urlfrontier.max.buckets: 0\n").contains("urlfrontier.max.buckets"));
        assert!(error("urlfrontier.crawlid: ' '\n").contains("urlfrontier.crawlid"));
        assert!(error("urlfrontier.connect.timeout: 0\n").contains("urlfrontier.connect.timeout"));
        assert!(error("urlfrontier.address: 'grpc://x:1'\n").contains("urlfrontier.address"));
        assert!(error("urlfrontier.tls.ca.file: ca.pem\n").contains("urlfrontier.tls.ca.file"));
        let both = "urlfrontier.token: abc\nurlfrontier.token.file: /nonexistent\n";
        assert!(error(both).contains("urlfrontier.token"));
        assert!(!error(both).contains("abc"));
    }

    #[test]
    fn the_shipped_example_lists_every_key_with_its_default() {
        let text = include_str!("../../../examples/urlfrontier-conf.yaml");
        if let Err(error) = squall::config::check_example::<ClientSettings>(text, &[PREFIX], &[]) {
            panic!("examples/urlfrontier-conf.yaml: {error}");
        }
    }

    /// Each `urlfrontier.*` key has one default: the value [`ClientSettings`] holds when the key is
    /// absent is the one examples/urlfrontier-conf.yaml documents, and the file documents every
    /// key.
    #[test]
    fn each_key_has_one_default_the_example_documents() {
        let text = include_str!("../../../examples/urlfrontier-conf.yaml");
        let defaults = squall::settings::documented_defaults::<ClientSettings>();
        assert_eq!(
            defaults.len(),
            10,
            "every key is listed, partition is not a key"
        );
        let wrong = squall::settings::undocumented_defaults(&defaults, text, PREFIX);
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
