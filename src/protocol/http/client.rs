//! The HTTP protocol: one reqwest client (connection reuse, HTTP/2 with `http2`, TLS, compression, a DNS cache), a
//! body size cap, conditional re-fetches, and errors turned into fetch outcomes.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use chrono::Utc;
use reqwest::header::{
    CONTENT_ENCODING, CONTENT_TYPE, ETAG, HeaderMap, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    LAST_MODIFIED, LOCATION, RETRY_AFTER,
};
use url::Url;

use super::access::SiteCredentials;
use super::archive::{Archived, Received, WireError};
use super::context::HttpContext;
use super::decode;
use super::options;
use super::settings::HttpSettings;
use crate::message::{FetchFailure, FetchOutcome, FetchRecord, FetchedResponse};
use crate::model::{Metadata, Status, keys};
use crate::protocol::dns::{HostResolver, ResolveError, TrustedHosts, is_private_address};
use crate::warc::WarcSink;

/// Why the HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct HttpClientError(#[source] Cause);

/// What the client could not be built of.
#[derive(Debug, thiserror::Error)]
enum Cause {
    /// reqwest refused the client (TLS, proxy).
    #[error(transparent)]
    Client(reqwest::Error),
    /// A key's value cannot be used (a program changed it after the configuration checked it).
    #[error("`{0}`: {1}")]
    Key(&'static str, String),
}

impl From<reqwest::Error> for HttpClientError {
    fn from(error: reqwest::Error) -> Self {
        HttpClientError(Cause::Client(error))
    }
}

impl HttpClientError {
    /// A client refused for a key whose value cannot be used.
    pub(crate) fn key((key, message): (&'static str, String)) -> Self {
        HttpClientError(Cause::Key(key, message))
    }

    /// The key whose value could not be used, and why, when that is what stopped the client: the
    /// proxy, the custom headers or the credentials of [`HttpSettings`], changed by a program after
    /// the configuration checked them.
    pub fn invalid_key(&self) -> Option<(&'static str, &str)> {
        match &self.0 {
            Cause::Key(key, message) => Some((key, message)),
            Cause::Client(_) => None,
        }
    }
}

/// Whether this build speaks TLS (squall's `rustls` or `native-roots` feature).
const HAS_TLS: bool = cfg!(any(feature = "rustls", feature = "native-roots"));

/// Why an `https` URL is not fetched by a build without TLS.
const NO_TLS: &str = "https needs TLS, which this build of squall leaves out: \
    enable its `rustls` feature (one of its default features)";

/// Fetches URLs over HTTP(S).
#[derive(Debug, Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    content_limit: Option<usize>,
    refuse_private: bool,
    credentials: SiteCredentials,
    resolver: HostResolver,
    /// Where exchanges are archived, when WARC output is on.
    archive: Option<(WarcSink, String)>,
}

impl HttpClient {
    /// A client fetching as `config`'s keys say, with `context`'s User-Agent, pins, trusted hosts
    /// and cookie jar.
    pub fn new(config: &HttpSettings, context: &HttpContext) -> Result<Self, HttpClientError> {
        Self::build(config, context, None)
    }

    /// Such a client that hands every exchange to `sink`, the WARC writer (see [`crate::warc`]):
    /// it decodes bodies itself, so that the records keep the bytes received. When redirects are
    /// followed within a fetch, only its last exchange is archived.
    pub fn archived(
        config: &HttpSettings,
        context: &HttpContext,
        sink: WarcSink,
    ) -> Result<Self, HttpClientError> {
        Self::build(config, context, Some(sink))
    }

    fn build(
        config: &HttpSettings,
        context: &HttpContext,
        sink: Option<WarcSink>,
    ) -> Result<Self, HttpClientError> {
        let resolver = context.host_resolver(config);
        let mut builder =
            base_builder(config, context, &resolver)?.redirect(policy(config, context));
        if sink.is_some() {
            builder = builder.no_gzip().no_brotli().no_deflate().no_zstd();
        }
        Ok(HttpClient {
            client: builder.build()?,
            content_limit: config.content_limit,
            refuse_private: config.refuse_private_addresses,
            credentials: config.credentials().map_err(HttpClientError::key)?,
            resolver,
            archive: sink.map(|sink| (sink, context.user_agent.clone())),
        })
    }

    /// How this client resolves host names (its `resolve` pins, then its DNS cache), for
    /// partitioning by IP with the addresses the fetches connect to.
    pub fn host_resolver(&self) -> HostResolver {
        self.resolver.clone()
    }

    /// Why `url` cannot be fetched by this build: an `https` URL without TLS (squall's `rustls`
    /// feature). The fetcher asks before robots.txt, so that such a URL ends ERROR
    /// (`unsupported_scheme`) naming the feature rather than failing on its robots.txt.
    pub fn scheme_refusal(url: &Url) -> Option<String> {
        (url.scheme() == "https" && !HAS_TLS).then(|| NO_TLS.to_owned())
    }

    /// Why `url` may not be fetched at all: its host is a private address, or a name that
    /// resolves to private addresses only, that the user did not name (a seed, a `resolve` pin,
    /// `http.private.hosts`) while the guard is on. A name that cannot be resolved is left to the
    /// fetch, which reports it.
    pub async fn refusal(&self, url: &Url) -> Option<String> {
        if !self.refuse_private {
            return None;
        }
        let trusted = self.resolver.trusted();
        if let Some(ip) = refused_ip(url, trusted) {
            return Some(private_refusal(&ip.to_string()));
        }
        let host = match url.host()? {
            url::Host::Domain(name) => name,
            _ => return None,
        };
        if trusted.contains(host) || self.resolver.is_pinned(host) {
            return None;
        }
        let addrs = self.resolver.cache().lookup(host).await.ok()?;
        let private = !addrs.is_empty() && addrs.iter().all(|a| is_private_address(a.ip()));
        private.then(|| private_refusal(&format!("{host} (resolved to {})", addrs[0].ip())))
    }

    /// Fetches `url`, conditionally when `metadata` holds an ETag or Last-Modified from an earlier
    /// fetch, and records the attempt.
    pub async fn fetch(&self, url: &Url, metadata: &Metadata) -> (FetchRecord, FetchOutcome) {
        let started = Utc::now();
        let result = self.get(url, metadata).await;
        let finished = Utc::now();
        match result {
            Ok(response) => {
                let record = FetchRecord {
                    started,
                    finished,
                    http_status: Some(response.status_code),
                    error: None,
                    bytes: response.body.len() as u64,
                    protocol: "http",
                };
                (record, FetchOutcome::Response(Box::new(response)))
            }
            Err((cause, message)) => {
                let record = FetchRecord {
                    started,
                    finished,
                    http_status: None,
                    error: Some(format!("{cause}: {message}")),
                    bytes: 0,
                    protocol: "http",
                };
                let outcome = match cause {
                    // The archive failed, not the URL: it stays due, with no status written.
                    FetchFailure::Archive => FetchOutcome::Abandoned { cause, message },
                    // A refusal, not a failure that may heal.
                    FetchFailure::PrivateAddress => FetchOutcome::Failed {
                        status: Status::Error,
                        cause,
                        message,
                    },
                    _ => FetchOutcome::Failed {
                        status: Status::FetchError,
                        cause,
                        message,
                    },
                };
                (record, outcome)
            }
        }
    }

    async fn get(
        &self,
        url: &Url,
        metadata: &Metadata,
    ) -> Result<FetchedResponse, (FetchFailure, String)> {
        if let Some(message) = Self::scheme_refusal(url) {
            return Err((FetchFailure::UnsupportedScheme, message));
        }
        let mut request = options::authorize(&self.credentials, self.client.get(url.as_str()), url);
        if let Some(etag) = metadata.first(keys::ETAG) {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(modified) = metadata.first(keys::LAST_MODIFIED) {
            request = request.header(IF_MODIFIED_SINCE, modified);
        }
        if let Some((sink, user_agent)) = &self.archive {
            let archived = Archived {
                client: &self.client,
                user_agent,
                content_limit: self.content_limit,
                sink,
            };
            let received = archived.fetch(request).await.map_err(|error| match error {
                WireError::Http(error) => classify(&error),
                WireError::Decode(message) => (FetchFailure::Body, message),
                WireError::Archive(message) => (FetchFailure::Archive, message),
            })?;
            let Received {
                status_code,
                headers,
                final_url,
                body,
                truncated,
            } = received;
            return Ok(answer(status_code, &headers, final_url, body, truncated));
        }
        let mut response = request.send().await.map_err(|e| classify(&e))?;
        let headers = response.headers().clone();
        // reqwest leaves the header on a body it did not decode.
        if let Some(message) =
            decode::left_out_coding(header(&headers, CONTENT_ENCODING).as_deref())
        {
            return Err((FetchFailure::Body, message));
        }
        let status_code = response.status().as_u16();
        let final_url = (response.url().as_str() != url.as_str()).then(|| response.url().clone());
        let mut body = BytesMut::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| classify(&e))? {
            match self.content_limit {
                Some(limit) if body.len() + chunk.len() > limit => {
                    body.extend_from_slice(&chunk[..limit - body.len()]);
                    truncated = true;
                    break;
                }
                _ => body.extend_from_slice(&chunk),
            }
        }
        Ok(answer(
            status_code,
            &headers,
            final_url,
            Bytes::from(body),
            truncated,
        ))
    }
}

/// A server's answer, from its status, headers and body.
fn answer(
    status_code: u16,
    headers: &HeaderMap,
    final_url: Option<Url>,
    body: Bytes,
    truncated: bool,
) -> FetchedResponse {
    FetchedResponse {
        status_code,
        content_type: header(headers, CONTENT_TYPE),
        location: header(headers, LOCATION),
        robots_tag: headers
            .get_all("x-robots-tag")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect(),
        etag: header(headers, ETAG),
        last_modified: header(headers, LAST_MODIFIED),
        retry_after: header(headers, RETRY_AFTER).and_then(|v| parse_retry_after(&v)),
        final_url,
        body,
        truncated,
    }
}

/// The redirect policy of `config` (`http.allow.redirects`): none, or follow up to the maximum.
fn policy(config: &HttpSettings, context: &HttpContext) -> reqwest::redirect::Policy {
    if config.allow_redirects {
        redirect_policy(config.max_redirects, config, context)
    } else {
        reqwest::redirect::Policy::none()
    }
}

fn header(headers: &HeaderMap, name: reqwest::header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// `Retry-After`: delay seconds, or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&Utc) - Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// Follows up to `max` redirects, refusing (with the guard on) any hop to a private IP address
/// the user did not name (hops to host names are checked as they are resolved).
pub(crate) fn redirect_policy(
    max: usize,
    config: &HttpSettings,
    context: &HttpContext,
) -> reqwest::redirect::Policy {
    let trusted = config
        .refuse_private_addresses
        .then(|| context.trusted_hosts.clone());
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= max {
            return attempt.error(format!("more than {max} redirects"));
        }
        if let Some(ip) = trusted.as_ref().and_then(|t| refused_ip(attempt.url(), t)) {
            return attempt.error(RefusedRedirect(private_refusal(&ip.to_string())));
        }
        attempt.follow()
    })
}

/// The host of `url` when it is an IP address in a private range that `trusted` does not hold.
fn refused_ip(url: &Url, trusted: &TrustedHosts) -> Option<std::net::IpAddr> {
    let ip = match url.host()? {
        url::Host::Ipv4(ip) => std::net::IpAddr::V4(ip),
        url::Host::Ipv6(ip) => std::net::IpAddr::V6(ip),
        url::Host::Domain(_) => return None,
    };
    let named = url.host_str().is_some_and(|host| trusted.contains(host));
    (is_private_address(ip) && !named).then_some(ip)
}

/// Why a private address found by the crawl is not connected to.
fn private_refusal(what: &str) -> String {
    format!(
        "{what} is a private, loopback or link-local address, refused for URLs the crawl found \
         (only seeds and http.private.hosts may be private; http.refuse.private.addresses: false \
         allows every address)"
    )
}

/// The parts of a client that every request of a crawl shares, names resolved by `resolver`.
pub(crate) fn base_builder(
    config: &HttpSettings,
    context: &HttpContext,
    resolver: &HostResolver,
) -> Result<reqwest::ClientBuilder, HttpClientError> {
    let builder = reqwest::Client::builder()
        .user_agent(context.user_agent.clone())
        .timeout(config.timeout)
        .connect_timeout(config.connect_timeout)
        .pool_idle_timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(context.max_idle_per_host)
        .dns_resolver(std::sync::Arc::new(resolver.cache()));
    let builder = resolver.pin_all(builder);
    let builder = options::apply(
        builder,
        config.proxy().map_err(HttpClientError::key)?.as_ref(),
        &config.headers().map_err(HttpClientError::key)?,
    )?;
    #[cfg(feature = "cookies")]
    let builder = options::with_cookies(builder, context.cookies.as_ref());
    Ok(builder)
}

fn classify(error: &reqwest::Error) -> (FetchFailure, String) {
    let cause = if refused_as_private(error) {
        FetchFailure::PrivateAddress
    } else if error.is_timeout() {
        FetchFailure::Timeout
    } else if error.is_redirect() {
        FetchFailure::Redirect
    } else if error.is_connect() {
        FetchFailure::Connection
    } else if error.is_body() || error.is_decode() {
        FetchFailure::Body
    } else {
        FetchFailure::Http
    };
    // reqwest's Display is terse; its sources carry the detail (refused, DNS, TLS, ...).
    (cause, crate::error_text::with_causes(error))
}

/// Whether `error` comes of the guard against private addresses (a name that resolves to one, a
/// redirect to one).
fn refused_as_private(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        // An io::Error's source skips the error it wraps: look inside it too.
        let wrapped = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn std::error::Error + 'static));
        if [Some(current), wrapped]
            .into_iter()
            .flatten()
            .any(is_private_refusal)
        {
            return true;
        }
        source = current.source();
    }
    false
}

fn is_private_refusal(error: &(dyn std::error::Error + 'static)) -> bool {
    error.is::<RefusedRedirect>()
        || error
            .downcast_ref::<ResolveError>()
            .is_some_and(|e| matches!(e, ResolveError::Private { .. }))
}

/// A redirect the guard against private addresses refused.
#[derive(Debug, thiserror::Error)]
#[error("redirect refused: {0}")]
struct RefusedRedirect(String);

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// An `https` URL on a loopback server that answers in plain HTTP: a build with TLS tries the
    /// handshake (and fails it: a connection failure), a build without refuses the scheme by name.
    #[tokio::test]
    async fn https_is_spoken_with_tls_or_refused_naming_the_feature() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\n\r\nplain").await;
            }
        });
        let config = HttpSettings::default();
        let client = HttpClient::new(&config, &HttpContext::new(&config)).expect("client");
        let url = Url::parse(&format!("https://{addr}/")).expect("url");
        let (record, outcome) = client.fetch(&url, &Metadata::default()).await;
        let FetchOutcome::Failed { cause, message, .. } = outcome else {
            panic!("a TLS URL on a plain server was fetched: {record:?}");
        };
        if HAS_TLS {
            assert_eq!(cause, FetchFailure::Connection, "{message}");
        } else {
            assert_eq!(cause, FetchFailure::UnsupportedScheme, "{message}");
            assert!(message.contains("`rustls` feature"), "{message}");
        }
        // The fetcher asks the protocol before robots.txt: a build without TLS refuses there.
        let refusal = crate::protocol::Protocol::refusal(&client, &url).await;
        match HAS_TLS {
            true => assert!(
                refusal.is_none()
                    || !refusal
                        .iter()
                        .any(|r| r.cause == FetchFailure::UnsupportedScheme),
                "{refusal:?}"
            ),
            false => assert_eq!(
                refusal.map(|r| r.cause),
                Some(FetchFailure::UnsupportedScheme)
            ),
        }
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
        let soon = (Utc::now() + chrono::TimeDelta::seconds(90)).to_rfc2822();
        let wait = parse_retry_after(&soon).expect("date");
        assert!(wait > Duration::from_secs(80) && wait <= Duration::from_secs(90));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
