//! The typed configuration of each stage, in real units: durations as [`Duration`], "no limit" and
//! "never" as `None`. Each field's doc names the key it comes from.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::header::HeaderMap;

use crate::protocol::{ProxySettings, SiteCredentials};

/// The HTTP protocol (`http.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// `http.timeout`: a whole fetch, body included.
    pub timeout: Duration,
    /// `http.connect.timeout`: establishing a connection.
    pub connect_timeout: Duration,
    /// `http.content.limit`: body bytes kept per page (`None`: no limit).
    pub content_limit: Option<usize>,
    /// `http.allow.redirects`: follow redirects within a fetch instead of recording REDIRECTION.
    pub allow_redirects: bool,
    /// `http.max.redirects`: redirects followed in one fetch when they are followed.
    pub max_redirects: usize,
    /// `http.refuse.private.addresses`: never connect to private, loopback or link-local addresses.
    pub refuse_private_addresses: bool,
    /// `http.dns.cache.ttl`: how long a DNS answer is reused.
    pub dns_cache_ttl: Duration,
    /// `http.proxy`, `http.proxy.*`: the proxy every request goes through (`None`: direct).
    pub proxy: Option<ProxySettings>,
    /// `http.custom.headers`: headers sent with every request (values marked sensitive).
    pub custom_headers: HeaderMap,
    /// `http.use.cookies`: keep the cookies servers set and send them back.
    pub use_cookies: bool,
    /// `http.basicauth.*`: HTTP Basic credentials for every host or for some.
    pub credentials: SiteCredentials,
}

/// Which protocol fetches which URL scheme (`protocol.schemes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolConfig {
    /// Scheme (lowercase) to protocol name: `http` is built in (it serves `http` and `https` by
    /// default); other names are registered with
    /// [`CrawlerBuilder::named_protocol`](crate::topology::CrawlerBuilder::named_protocol).
    pub schemes: BTreeMap<String, String>,
}

/// The parser (`parser.*`, `parsefilter.*`, `redirections.allowed`, `sitemap.discovery`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParserConfig {
    /// `parser.emitOutlinks`: whether parsed links become DISCOVERED URLs.
    pub emit_outlinks: bool,
    /// `parser.emitOutlinks.max.per.page`: outlinks kept per page (`None`: no limit).
    pub max_outlinks_per_page: Option<usize>,
    /// `parser.text.max.bytes`: visible text kept per page for filters and indexers (0: none).
    pub text_max_bytes: usize,
    /// `parsefilter.css`: metadata key to the CSS selectors whose matches' values it receives.
    pub extract_css: BTreeMap<String, Vec<String>>,
    /// `parsefilter.xpath`: metadata key to the XPath expressions whose values it receives.
    pub extract_xpath: BTreeMap<String, Vec<String>>,
    /// `redirections.allowed`: whether a redirect's target becomes a DISCOVERED URL.
    pub redirections_allowed: bool,
    /// `sitemap.discovery`: robots.txt `Sitemap:` lines are followed and sitemaps parsed.
    pub sitemap_discovery: bool,
    /// `parsefilters.config.file`: a StormCrawler `parsefilters.json`.
    pub parse_filters_file: Option<String>,
    /// `jsoup.filters.config.file`: a StormCrawler `jsoupfilters.json`.
    pub jsoup_filters_file: Option<String>,
}

/// Metadata carried from page to outlink and kept with statuses (`metadata.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataConfig {
    /// `metadata.transfer`: keys copied from a page to its outlinks (and persisted).
    pub transfer: Vec<String>,
    /// `metadata.persist`: keys stored with a URL's status (trailing `*` wildcards allowed).
    pub persist: Vec<String>,
    /// `metadata.track.path`: record `url.path` (the page a link was found on).
    pub track_path: bool,
    /// `metadata.track.depth`: record `depth` (distance from the seeds).
    pub track_depth: bool,
}

/// When URLs are due again (`fetchInterval.*`, `max.fetch.errors`). Intervals count in whole
/// minutes, as StormCrawler's do; a part of a minute set in code counts as a whole one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleConfig {
    /// `fetchInterval.default`: after FETCHED or REDIRECTION (`None`: never again).
    pub default: Option<Duration>,
    /// `fetchInterval.fetch.error`: after FETCH_ERROR (`None`: never again).
    pub fetch_error: Option<Duration>,
    /// `fetchInterval.error`: after ERROR (`None`: never again).
    pub error: Option<Duration>,
    /// Custom intervals by metadata, from keys such as `fetchInterval.isFeed=true` or
    /// `fetchInterval.FETCH_ERROR.isFeed=true`, in the order given.
    pub custom: Vec<(String, Option<Duration>)>,
    /// `max.fetch.errors`: consecutive fetch errors after which FETCH_ERROR becomes ERROR.
    pub max_fetch_errors: u32,
}

/// The status updater (`status.updater.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusConfig {
    /// `status.updater.batch.size`: writes sent to the store together.
    pub batch_size: usize,
    /// `status.updater.flush.interval`: a partial batch is written after this long.
    pub flush_interval: Duration,
    /// `status.updater.use.cache` and `status.updater.cache.spec`: the bounds of the outlink
    /// cache; `None` when it is off.
    pub outlink_cache: Option<crate::status::CacheSpec>,
}

/// The spout runner (`spout.*`, `topology.max.spout.pending`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoutConfig {
    /// `spout.ttl.purgatory`: how long an acked or failed URL is not emitted again.
    pub ttl_purgatory: Duration,
    /// `spout.min.delay.queries`: after a query that brought nothing new, before the next one.
    pub min_delay_queries: Duration,
    /// `spout.max.delay.queries`: a query runs after this long even if URLs are buffered.
    pub max_delay_queries: Duration,
    /// `topology.max.spout.pending`: URLs emitted and not yet acked or failed, per spout
    /// instance.
    pub max_pending: usize,
    /// `spout.parallelism`: spout instances (a StormCrawler flux's spout `parallelism`). Each has
    /// the per-instance budget: `max_pending` and the frontier's buckets and URLs per bucket. A
    /// status index is read by that many spouts, each over its share of the shards; the other
    /// frontiers read the whole budget at once.
    pub parallelism: usize,
    /// `spout.reset.fetchdate.after`: how often the status-index spouts' query date goes back to
    /// now; `None`: never.
    pub reset_fetch_date_after: Option<Duration>,
}

/// The topology as a whole (`topology.shutdown.timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyConfig {
    /// `topology.shutdown.timeout`: how long a graceful stop may take before it is cut short.
    pub shutdown_timeout: Duration,
}

/// Which frontier, and how much one query reads (`frontier.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontierConfig {
    /// `frontier.kind`: `embedded` (a directory on local disk, the default), `opensearch` (an
    /// Elasticsearch or OpenSearch cluster, configured by the `es.*` keys that `squall-engine`
    /// reads) or `urlfrontier` (a URLFrontier server, configured by the `urlfrontier.*` keys that
    /// `squall-urlfrontier` reads).
    pub kind: FrontierKind,
    /// `frontier.path`: the embedded frontier's directory.
    pub path: PathBuf,
    /// `frontier.max.buckets`: queues (hosts) read per frontier query.
    pub max_buckets: usize,
    /// `frontier.max.urls.per.bucket`: due URLs read per queue per frontier query.
    pub max_urls_per_bucket: usize,
}

/// Where the frontier lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrontierKind {
    /// A directory on local disk: [`EmbeddedFrontier`](crate::frontier::EmbeddedFrontier).
    #[default]
    Embedded,
    /// An Elasticsearch or OpenSearch cluster (the `squall-engine` crate).
    Opensearch,
    /// A URLFrontier server, over gRPC (the `squall-urlfrontier` crate's client).
    Urlfrontier,
}
