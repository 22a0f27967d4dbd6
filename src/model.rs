//! The data that flows through a topology: URLs with metadata, their statuses, and the partition key
//! that groups them into politeness queues and frontier buckets.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use url::Url;

/// The status of a URL in the frontier, with StormCrawler's names and meanings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Known but never fetched.
    Discovered,
    /// Fetched successfully (HTTP 200 or 304).
    Fetched,
    /// A fetch failed in a way that may heal (HTTP 4xx/5xx other than redirects, timeouts, ...).
    FetchError,
    /// The server answered with a redirect; the target is recorded as an outlink.
    Redirection,
    /// Gave up on this URL (robots.txt, too many fetch errors, unusable content).
    Error,
}

impl Status {
    /// All statuses, in StormCrawler's order.
    pub const ALL: [Status; 5] = [
        Status::Discovered,
        Status::Fetched,
        Status::FetchError,
        Status::Redirection,
        Status::Error,
    ];

    /// StormCrawler's `Status.fromHTTPCode`: 200 and 304 are FETCHED, other 3xx are REDIRECTION, and
    /// anything else is FETCH_ERROR.
    pub fn from_http_code(code: u16) -> Status {
        match code {
            200 | 304 => Status::Fetched,
            300..=399 => Status::Redirection,
            _ => Status::FetchError,
        }
    }

    /// The name stored in a status index (`"FETCH_ERROR"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Discovered => "DISCOVERED",
            Status::Fetched => "FETCHED",
            Status::FetchError => "FETCH_ERROR",
            Status::Redirection => "REDIRECTION",
            Status::Error => "ERROR",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status name that is not one of StormCrawler's five.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown status {0:?} (expected DISCOVERED, FETCHED, FETCH_ERROR, REDIRECTION or ERROR)")]
pub struct UnknownStatus(pub String);

impl FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

/// Multi-valued string metadata attached to a URL, as in StormCrawler: each key holds a list of values.
///
/// Keys are kept sorted so that stored documents are stable. Cloning is cheap (the map is shared
/// until one of the copies changes), since every outlink of a page starts with the same metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Metadata(Arc<BTreeMap<String, Vec<String>>>);

impl Metadata {
    /// Empty metadata.
    pub fn new() -> Self {
        Self::default()
    }

    /// The first value of `key`, if any.
    pub fn first(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .and_then(|values| values.first())
            .map(String::as_str)
    }

    /// All values of `key` (empty when absent).
    pub fn values(&self, key: &str) -> &[String] {
        self.0.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Replaces the values of `key` with a single value.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        Arc::make_mut(&mut self.0).insert(key.into(), vec![value.into()]);
    }

    /// Replaces the values of `key`.
    pub fn set_values(&mut self, key: impl Into<String>, values: Vec<String>) {
        Arc::make_mut(&mut self.0).insert(key.into(), values);
    }

    /// Appends a value to `key`.
    pub fn add(&mut self, key: impl Into<String>, value: impl Into<String>) {
        Arc::make_mut(&mut self.0)
            .entry(key.into())
            .or_default()
            .push(value.into());
    }

    /// Removes `key` and returns its values.
    pub fn remove(&mut self, key: &str) -> Option<Vec<String>> {
        if !self.0.contains_key(key) {
            return None;
        }
        Arc::make_mut(&mut self.0).remove(key)
    }

    /// Whether `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// Iterates over keys and their values, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keeps only the keys for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        if self.0.keys().all(|k| keep(k)) {
            return;
        }
        Arc::make_mut(&mut self.0).retain(|k, _| keep(k));
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut metadata = Metadata::new();
        for (k, v) in iter {
            metadata.add(k, v);
        }
        metadata
    }
}

/// Well-known metadata keys.
pub mod keys {
    /// The chain of pages that led to a URL (StormCrawler's `url.path`): the parent's URL.
    pub const URL_PATH: &str = "url.path";
    /// Distance from the seeds, as a decimal string; seeds have depth 0.
    pub const DEPTH: &str = "depth";
    /// How many consecutive fetch errors a URL has had.
    pub const FETCH_ERROR_COUNT: &str = "fetch.error.count";
    /// Why a URL ended in ERROR (`robots.txt`, `maxFetchErrors`, ...).
    pub const ERROR_CAUSE: &str = "error.cause";
    /// Human-readable detail of an error.
    pub const ERROR_MESSAGE: &str = "error.message";
    /// The HTTP status code of the last fetch.
    pub const FETCH_STATUS_CODE: &str = "fetch.statusCode";
    /// The target of a redirect.
    pub const REDIRECT_TO: &str = "_redirTo";
    /// Overrides the scheduler: minutes until the next fetch.
    pub const SCHEDULER_DELAY_MINS: &str = "scheduler.delay.mins";
    /// The address a URL's host resolved to, used by the byIP partition mode.
    pub const IP: &str = "ip";
    /// Set on URLs found in a sitemap.
    pub const IS_SITEMAP: &str = "isSitemap";
    /// On URLs found in a sitemap: the sitemap that listed them.
    pub const SITEMAP_SOURCE: &str = "sitemap.source";
    /// The ETag of the last successful fetch, sent back as `If-None-Match`.
    pub const ETAG: &str = "http.etag";
    /// The Last-Modified of the last successful fetch, sent back as `If-Modified-Since`.
    pub const LAST_MODIFIED: &str = "http.last-modified";
    /// Set when a body was cut at `http.content.limit`.
    pub const TRIMMED: &str = "http.trimmed";
    /// Set on a sitemap of which only the start was read (over the sitemap size cap, or its body
    /// cut at `http.content.limit`): the cap, the bytes read and the entries kept. Always stored.
    pub const SITEMAP_TRIMMED: &str = "sitemap.trimmed";
    /// The page's canonical URL, absolute, from its `<link rel="canonical">`: the name StormCrawler's
    /// indexers read (`indexer.canonical.name`). Set by the parser on HTML pages for parse filters
    /// and indexers; stored with the status only when `metadata.persist` lists `canonical`.
    pub const CANONICAL: &str = "canonical";
    /// `true` when the page asked not to be indexed, by `<meta name="robots">` or `X-Robots-Tag`
    /// (`noindex` or `none`). Set by the parser for parse filters and indexers; stored with the
    /// status only when `metadata.persist` lists `robots.noindex`.
    pub const NOINDEX: &str = "robots.noindex";
}

/// A URL travelling through the topology, with its metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlUrl {
    /// The URL, normalized.
    pub url: Url,
    /// Its metadata.
    pub metadata: Metadata,
}

impl CrawlUrl {
    /// A URL with empty metadata.
    pub fn new(url: Url) -> Self {
        CrawlUrl {
            url,
            metadata: Metadata::new(),
        }
    }

    /// A seed: depth 0.
    pub fn seed(url: Url) -> Self {
        let mut seed = CrawlUrl::new(url);
        seed.metadata.set(keys::DEPTH, "0");
        seed
    }

    /// The depth recorded in the metadata (0 when absent or unreadable).
    pub fn depth(&self) -> u32 {
        self.metadata
            .first(keys::DEPTH)
            .and_then(|d| d.parse().ok())
            .unwrap_or(0)
    }
}

/// How URLs are grouped into queues: StormCrawler's `partition.url.mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PartitionMode {
    /// One queue per host name (the default).
    #[default]
    #[serde(rename = "byHost")]
    ByHost,
    /// One queue per registrable domain (public suffix list), e.g. `a.example.co.uk` and
    /// `b.example.co.uk` share `example.co.uk`.
    #[serde(rename = "byDomain")]
    ByDomain,
    /// One queue per IP address: the URL's `ip` metadata, its host when that is an address, else the
    /// address the host resolves to. [`partition_key`] cannot resolve and falls back to the host
    /// name; the fetcher's queues and the status updater resolve through the crawl's resolver
    /// ([`Partitioner`](crate::fetch::Partitioner)).
    #[serde(rename = "byIP")]
    ByIp,
}

impl PartitionMode {
    /// The configuration spelling: `byHost`, `byDomain` or `byIP`.
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionMode::ByHost => "byHost",
            PartitionMode::ByDomain => "byDomain",
            PartitionMode::ByIp => "byIP",
        }
    }
}

impl FromStr for PartitionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "byHost" => Ok(PartitionMode::ByHost),
            "byDomain" => Ok(PartitionMode::ByDomain),
            "byIP" => Ok(PartitionMode::ByIp),
            other => Err(format!(
                "unknown partition mode {other:?} (expected byHost, byDomain or byIP)"
            )),
        }
    }
}

/// The key used when a URL has no host (StormCrawler's `_DEFAULT_`).
pub const DEFAULT_KEY: &str = "_DEFAULT_";

/// The partition key of a URL: the one function that fetch queues, the status `key` field and the
/// frontier's queues all use, so that politeness and frontier buckets always agree.
///
/// Keys are lowercase. A URL without a host gets [`DEFAULT_KEY`].
pub fn partition_key(url: &Url, metadata: &Metadata, mode: PartitionMode) -> String {
    let Some(host) = url.host_str() else {
        return DEFAULT_KEY.to_string();
    };
    let host = host.to_ascii_lowercase();
    match mode {
        PartitionMode::ByHost => host,
        PartitionMode::ByDomain => registrable_domain(&host).unwrap_or(host),
        PartitionMode::ByIp => metadata
            .first(keys::IP)
            .map(str::to_string)
            .or_else(|| host_address(url).map(|ip| ip.to_string()))
            .unwrap_or(host),
    }
}

/// The host of `url` when it is an IP address.
pub fn host_address(url: &Url) -> Option<std::net::IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(ip.into()),
        url::Host::Ipv6(ip) => Some(ip.into()),
        url::Host::Domain(_) => None,
    }
}

/// The registrable domain ("paid-level domain") of a host name, from the public suffix list.
///
/// `None` for IP addresses and for hosts that are themselves a public suffix.
pub fn registrable_domain(host: &str) -> Option<String> {
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    let domain = psl::domain(host.as_bytes())?;
    std::str::from_utf8(domain.as_bytes())
        .ok()
        .map(str::to_string)
}

/// Whether metadata key `key` is named by a list of patterns (a trailing `*` matches any suffix).
pub fn key_matches(patterns: &[String], key: &str) -> bool {
    patterns
        .iter()
        .any(|pattern| match pattern.strip_suffix('*') {
            Some(prefix) => key.starts_with(prefix),
            None => pattern == key,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::url;

    #[test]
    fn http_codes_map_to_statuses_like_stormcrawler() {
        assert_eq!(Status::from_http_code(200), Status::Fetched);
        assert_eq!(Status::from_http_code(304), Status::Fetched);
        assert_eq!(Status::from_http_code(301), Status::Redirection);
        assert_eq!(Status::from_http_code(307), Status::Redirection);
        assert_eq!(Status::from_http_code(404), Status::FetchError);
        assert_eq!(Status::from_http_code(503), Status::FetchError);
        assert_eq!(Status::from_http_code(204), Status::FetchError);
    }

    #[test]
    fn status_names_round_trip() {
        for status in Status::ALL {
            assert_eq!(status.as_str().parse::<Status>(), Ok(status));
            let json = serde_json::to_string(&status).expect("serialize");
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
        assert!("FETCHING".parse::<Status>().is_err());
    }

    #[test]
    fn partition_keys_by_host_domain_and_ip() {
        let u = url("https://News.BBC.co.uk/a");
        let mut md = Metadata::new();
        assert_eq!(
            partition_key(&u, &md, PartitionMode::ByHost),
            "news.bbc.co.uk"
        );
        assert_eq!(partition_key(&u, &md, PartitionMode::ByDomain), "bbc.co.uk");
        assert_eq!(
            partition_key(&u, &md, PartitionMode::ByIp),
            "news.bbc.co.uk"
        );
        md.set(keys::IP, "10.1.2.3");
        assert_eq!(partition_key(&u, &md, PartitionMode::ByIp), "10.1.2.3");
        let ip = url("http://127.0.0.1:8080/");
        assert_eq!(
            partition_key(&ip, &md, PartitionMode::ByDomain),
            "127.0.0.1"
        );
        let no_host = url("mailto:someone@example.com");
        assert_eq!(
            partition_key(&no_host, &md, PartitionMode::ByHost),
            DEFAULT_KEY
        );
    }

    #[test]
    fn metadata_is_multi_valued() {
        let mut md: Metadata = [("a", "1"), ("a", "2"), ("b", "x")].into_iter().collect();
        assert_eq!(md.values("a"), ["1", "2"]);
        assert_eq!(md.first("b"), Some("x"));
        md.set("a", "3");
        assert_eq!(md.values("a"), ["3"]);
        assert_eq!(md.remove("b"), Some(vec!["x".to_string()]));
        assert!(!md.contains("b"));
        let json = serde_json::to_value(&md).expect("serialize");
        assert_eq!(json, serde_json::json!({ "a": ["3"] }));
    }
}
