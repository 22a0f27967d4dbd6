//! The protocol seam: what fetches a URL, chosen by the URL's scheme.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use url::Url;

use super::http::HttpClient;
use crate::message::{FetchFailure, FetchOutcome, FetchRecord};
use crate::model::Metadata;

/// Fetches URLs of some schemes: HTTP(S) over [`HttpClient`], or your own (a headless browser,
/// files, an archive).
///
/// The fetcher keeps politeness (one queue per host, delays, Retry-After holds), robots.txt (for
/// `http` and `https` URLs, always read over HTTP) and fencing; a protocol only fetches. Answer
/// with HTTP-like status codes (200 found, 304 unchanged, 404 missing, 3xx with a `location`), as
/// the parser and the status updater decide statuses from them; a failure with no answer is
/// [`FetchOutcome::Failed`], with FETCH_ERROR when it may heal.
///
/// # Adding a protocol
///
/// Implement this trait, register it for its scheme with [`CrawlerBuilder::protocol`] (or
/// [`Protocols::register`] for a [`FetcherBolt`] of your own), and let the scheme through the URL
/// filter (`urlfilter.schemes`). This crawler reads a site kept in memory under `mem:` URLs:
///
/// ```
/// use std::sync::Arc;
/// use squall::async_trait;
/// use squall::config::ConfigBuilder;
/// use squall::protocol::Protocol;
/// use squall::frontier::{EmbeddedFrontier, QueryLimits};
/// use squall::message::{FetchOutcome, FetchRecord, FetchedResponse};
/// use squall::model::{Metadata, Status};
/// use squall::topology::{CrawlerBuilder, RunLimits};
/// use squall::Url;
///
/// /// Pages by path; any other path is a 404.
/// struct Memory(Vec<(&'static str, &'static str)>);
///
/// #[async_trait]
/// impl Protocol for Memory {
///     async fn fetch(&self, url: &Url, _metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
///         let page = self.0.iter().find(|(path, _)| *path == url.path());
///         let (status_code, body) = page.map_or((404, ""), |(_, body)| (200, *body));
///         let now = squall::chrono::Utc::now();
///         let record = FetchRecord {
///             started: now,
///             finished: now,
///             http_status: Some(status_code),
///             error: None,
///             bytes: body.len() as u64,
///             protocol: "mem",
///         };
///         let response = FetchedResponse {
///             status_code,
///             content_type: Some("text/html".to_string()),
///             location: None,
///             robots_tag: Vec::new(),
///             etag: None,
///             last_modified: None,
///             retry_after: None,
///             final_url: None,
///             body: body.into(),
///             truncated: false,
///         };
///         (record, FetchOutcome::Response(Box::new(response)))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let site = Memory(vec![("/", "<a href='/about'>about</a>"), ("/about", "hello")]);
/// let config = ConfigBuilder::new()
///     .set("http.agent.name=docs-example")?
///     .set("urlfilter.schemes=[mem]")?
///     .set("fetcher.server.delay=0")?
///     .set("spout.min.delay.queries=20")?
///     .build()?;
/// let dir = tempfile::tempdir()?;
/// let frontier = EmbeddedFrontier::open(dir.path())?;
/// let crawler = CrawlerBuilder::new(config)
///     .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
///     .protocol("mem", Arc::new(site))
///     .build()?;
/// crawler.inject(["mem://site/"]).await;
/// let summary = crawler.run(RunLimits::until_idle()).await;
/// assert_eq!(summary.pages, 2);
/// let about = frontier.lookup("mem://site/about")?;
/// assert_eq!(about.map(|stored| stored.status), Some(Status::Fetched));
/// # Ok(()) }
/// ```
///
/// [`CrawlerBuilder::protocol`]: crate::topology::CrawlerBuilder::protocol
/// [`FetcherBolt`]: crate::fetch::FetcherBolt
#[async_trait]
pub trait Protocol: Send + Sync {
    /// Fetches `url`; `metadata` holds conditional-request hints (ETag, Last-Modified) from an
    /// earlier fetch.
    async fn fetch(&self, url: &Url, metadata: &Metadata) -> (FetchRecord, FetchOutcome);

    /// Why this protocol refuses to fetch `url` at all (e.g. a private address), if it does: the URL
    /// then gets ERROR with this cause, and no request is made (robots.txt included).
    async fn refusal(&self, url: &Url) -> Option<Refusal> {
        let _ = url;
        None
    }

    /// Whether this protocol fetches `url` (with its `metadata`) or leaves it to the scheme's
    /// fallback, HTTP for `http` and `https` (a browser that renders only some hosts). Every URL by
    /// default.
    fn accepts(&self, url: &Url, metadata: &Metadata) -> bool {
        let _ = (url, metadata);
        true
    }
}

/// Why a protocol will not fetch a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Recorded as the URL's `error.cause`.
    pub cause: FetchFailure,
    /// A human-readable message.
    pub message: String,
}

#[async_trait]
impl Protocol for HttpClient {
    async fn fetch(&self, url: &Url, metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
        HttpClient::fetch(self, url, metadata).await
    }

    async fn refusal(&self, url: &Url) -> Option<Refusal> {
        if let Some(message) = HttpClient::scheme_refusal(url) {
            return Some(Refusal {
                cause: FetchFailure::UnsupportedScheme,
                message,
            });
        }
        HttpClient::refusal(self, url).await.map(|message| Refusal {
            cause: FetchFailure::PrivateAddress,
            message,
        })
    }
}

/// The protocols of a fetcher, by URL scheme (compared case-insensitively).
///
/// [`Protocols::http`] maps `http` and `https` to an [`HttpClient`], which is also their fallback;
/// [`register`](Protocols::register) adds or replaces one. A URL whose protocol declines it
/// ([`Protocol::accepts`]) goes to its scheme's fallback, and its fallback's
/// [`refusal`](Protocol::refusal) applies too. A URL whose scheme has no protocol gets ERROR
/// (`error.cause` `unsupported_scheme`).
#[derive(Clone, Default)]
pub struct Protocols {
    by_scheme: HashMap<String, Arc<dyn Protocol>>,
    fallback: HashMap<String, Arc<dyn Protocol>>,
}

impl Protocols {
    /// No protocol at all.
    pub fn new() -> Self {
        Protocols::default()
    }

    /// `http` and `https` fetched with `client`, which is also their fallback.
    pub fn http(client: HttpClient) -> Self {
        let client: Arc<dyn Protocol> = Arc::new(client);
        let mut protocols = Protocols::new();
        for scheme in ["http", "https"] {
            protocols.register(scheme, Arc::clone(&client));
            protocols.fallback(scheme, Arc::clone(&client));
        }
        protocols
    }

    /// Fetches the URLs of `scheme` that its protocol declines with `protocol`.
    pub fn fallback(
        &mut self,
        scheme: impl Into<String>,
        protocol: Arc<dyn Protocol>,
    ) -> &mut Self {
        let scheme = scheme.into().to_ascii_lowercase();
        self.fallback.insert(scheme, protocol);
        self
    }

    /// Fetches URLs of `scheme` with `protocol`, instead of what did before.
    pub fn register(
        &mut self,
        scheme: impl Into<String>,
        protocol: Arc<dyn Protocol>,
    ) -> &mut Self {
        let scheme = scheme.into().to_ascii_lowercase();
        self.by_scheme.insert(scheme, protocol);
        self
    }

    /// The protocol for `scheme`, if there is one.
    pub fn for_scheme(&self, scheme: &str) -> Option<&Arc<dyn Protocol>> {
        self.by_scheme.get(&scheme.to_ascii_lowercase())
    }

    /// The protocol that fetches `url`: its scheme's, unless that one declines the URL and the
    /// scheme has a fallback.
    pub fn for_url(&self, url: &Url, metadata: &Metadata) -> Option<&Arc<dyn Protocol>> {
        let protocol = self.for_scheme(url.scheme())?;
        if protocol.accepts(url, metadata) {
            return Some(protocol);
        }
        self.fallback_for(url.scheme()).or(Some(protocol))
    }

    /// The fallback of `scheme`, if it has one.
    pub fn fallback_for(&self, scheme: &str) -> Option<&Arc<dyn Protocol>> {
        self.fallback.get(&scheme.to_ascii_lowercase())
    }
}

impl From<HttpClient> for Protocols {
    fn from(client: HttpClient) -> Self {
        Protocols::http(client)
    }
}

impl<S: Into<String>> Extend<(S, Arc<dyn Protocol>)> for Protocols {
    fn extend<I: IntoIterator<Item = (S, Arc<dyn Protocol>)>>(&mut self, protocols: I) {
        for (scheme, protocol) in protocols {
            self.register(scheme, protocol);
        }
    }
}

impl std::fmt::Debug for Protocols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut schemes: Vec<&String> = self.by_scheme.keys().collect();
        schemes.sort();
        f.debug_struct("Protocols")
            .field("schemes", &schemes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{HttpContext, HttpSettings};

    struct Nothing;

    #[async_trait]
    impl Protocol for Nothing {
        async fn fetch(&self, _url: &Url, _metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
            unreachable!("never fetched in these tests")
        }
    }

    fn client(refuse_private_addresses: bool) -> HttpClient {
        let config = HttpSettings {
            refuse_private_addresses,
            ..HttpSettings::default()
        };
        HttpClient::new(&config, &HttpContext::new(&config)).expect("client")
    }

    #[test]
    fn http_serves_http_and_https_and_register_adds_or_replaces() {
        let mut protocols = Protocols::http(client(false));
        assert!(protocols.for_scheme("http").is_some());
        assert!(protocols.for_scheme("HTTPS").is_some());
        assert!(protocols.for_scheme("file").is_none());
        protocols.register("File", Arc::new(Nothing));
        assert!(protocols.for_scheme("file").is_some());
        assert_eq!(
            format!("{protocols:?}"),
            r#"Protocols { schemes: ["file", "http", "https"] }"#
        );
    }

    /// Accepts only URLs whose metadata has `render`.
    struct Picky;

    #[async_trait]
    impl Protocol for Picky {
        async fn fetch(&self, _url: &Url, _metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
            unreachable!("never fetched in these tests")
        }

        fn accepts(&self, _url: &Url, metadata: &Metadata) -> bool {
            metadata.first("render").is_some()
        }
    }

    #[test]
    fn a_declined_url_goes_to_the_schemes_fallback() {
        let mut protocols = Protocols::http(client(false));
        let picky: Arc<dyn Protocol> = Arc::new(Picky);
        protocols.register("https", Arc::clone(&picky));
        let url = Url::parse("https://a.test/").expect("url");
        let mut marked = Metadata::default();
        marked.set("render", "true");
        let chosen = protocols.for_url(&url, &marked).expect("a protocol");
        assert!(
            Arc::ptr_eq(chosen, &picky),
            "an accepted URL stays with its protocol"
        );
        let chosen = protocols
            .for_url(&url, &Metadata::default())
            .expect("a protocol");
        assert!(!Arc::ptr_eq(chosen, &picky), "a declined URL goes to HTTP");
        protocols.register("mem", Arc::clone(&picky));
        let mem = Url::parse("mem://a/").expect("url");
        let chosen = protocols
            .for_url(&mem, &Metadata::default())
            .expect("a protocol");
        assert!(
            Arc::ptr_eq(chosen, &picky),
            "no fallback: the scheme's own protocol"
        );
    }

    #[tokio::test]
    async fn http_refuses_private_addresses_only_with_the_guard_on() {
        let url = Url::parse("http://10.0.0.1/").expect("url");
        assert_eq!(Protocol::refusal(&client(false), &url).await, None);
        let refusal = Protocol::refusal(&client(true), &url)
            .await
            .expect("refused");
        assert_eq!(refusal.cause, FetchFailure::PrivateAddress);
        assert!(refusal.message.contains("10.0.0.1"), "{}", refusal.message);
        assert_eq!(Nothing.refusal(&url).await, None, "no refusal by default");
        // A name resolving to loopback only (localhost, from the hosts file) is refused, unless
        // the user named it.
        let name = Url::parse("http://localhost:9/").expect("url");
        let refusal = Protocol::refusal(&client(true), &name)
            .await
            .expect("refused");
        assert!(refusal.message.contains("localhost"), "{}", refusal.message);
        let trusting = client(true);
        trusting.host_resolver().trust("localhost");
        trusting.host_resolver().trust("10.0.0.1");
        assert_eq!(Protocol::refusal(&trusting, &name).await, None);
        assert_eq!(Protocol::refusal(&trusting, &url).await, None);
    }
}
