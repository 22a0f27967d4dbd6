//! The HTTP protocol's settings: its `http.*` keys, read straight from the configuration (each
//! field names its key, and `Default` holds each key's default). The proxy, the custom headers
//! and the credentials are kept as written and checked when the configuration loads; the client
//! takes them built ([`HttpSettings::proxy`], [`HttpSettings::headers`], [`HttpSettings::credentials`]).

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::header::HeaderMap;

use super::access::{BasicCredentials, ProxySettings, SiteCredentials};
use super::access_keys::{KeyError, ProxyKeys, Secret, custom_headers, site_credentials};
use crate::settings::{KeyedSettings, keyed_settings, units};

keyed_settings! {
    /// How the HTTP protocol fetches: the `http.*` keys.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct HttpSettings {
        /// `http.timeout`: milliseconds for a whole fetch (connect, headers and body), as in
        /// StormCrawler.
        "http.timeout" with "units::millis" => timeout: Duration = Duration::from_secs(30),
        /// `http.connect.timeout`: seconds to establish a connection.
        "http.connect.timeout" with "units::seconds" => connect_timeout: Duration =
            Duration::from_secs(10),
        /// `http.content.limit`: bytes of body kept per page; longer bodies are truncated. -1: no
        /// limit.
        "http.content.limit" with "units::negative_is_none" => content_limit: Option<usize> =
            Some(10 * 1024 * 1024),
        /// `http.allow.redirects`: follow redirects within a fetch instead of recording
        /// REDIRECTION.
        "http.allow.redirects" => allow_redirects: bool = false,
        /// `http.max.redirects`: redirects followed in one fetch when they are followed.
        "http.max.redirects" => max_redirects: usize = 5,
        /// `http.refuse.private.addresses`: never connect to private, loopback or link-local
        /// addresses for URLs the crawl found (links, redirects); the seeds' hosts and
        /// `http.private.hosts` may be private.
        "http.refuse.private.addresses" => refuse_private_addresses: bool = true,
        /// `http.private.hosts`: host names (or addresses) that may be private while
        /// `http.refuse.private.addresses` is on, beside the seeds' hosts: an intranet's.
        "http.private.hosts" => private_hosts: Vec<String> = Vec::new(),
        /// `http.dns.cache.ttl`: seconds a DNS answer is reused.
        "http.dns.cache.ttl" with "units::seconds" => dns_cache_ttl: Duration =
            Duration::from_secs(300),
        /// `http.proxy`: the proxy as one URL, `http://user:password@host:port` or
        /// `socks5://host:port`; when given, the `http.proxy.*` parts are not read. Empty: none.
        "http.proxy" => proxy_url: Secret = Secret::default(),
        /// `http.proxy.host`: send every request, robots.txt included, through this proxy. Empty:
        /// none.
        "http.proxy.host" => proxy_host: String = String::new(),
        /// `http.proxy.port`: the proxy's port.
        "http.proxy.port" => proxy_port: u16 = 8080,
        /// `http.proxy.type`: `HTTP` or `SOCKS` (SOCKS5; the proxy resolves the host names).
        "http.proxy.type" => proxy_type: String = "HTTP".to_string(),
        /// `http.proxy.user`: the user the proxy asks for (`Proxy-Authorization: Basic`). Empty:
        /// none.
        "http.proxy.user" => proxy_user: String = String::new(),
        /// `http.proxy.pass`: that user's password.
        "http.proxy.pass" => proxy_pass: Secret = Secret::default(),
        /// `http.custom.headers`: `Name=value` headers sent with every request.
        "http.custom.headers" => custom_headers: Vec<String> = Vec::new(),
        /// `http.use.cookies`: keep the cookies servers set in the crawl's cookie jar and send them
        /// back to the sites they belong to (squall's `cookies` feature; without it, `true` is
        /// refused).
        "http.use.cookies" => use_cookies: bool = false,
        /// `http.basicauth.user`: HTTP Basic credentials sent to every host (without its own in
        /// `http.basicauth.hosts`). Empty: none.
        "http.basicauth.user" => basicauth_user: String = String::new(),
        /// `http.basicauth.password`: the password of `http.basicauth.user`.
        "http.basicauth.password" => basicauth_password: Secret = Secret::default(),
        /// `http.basicauth.hosts`: host name -> `{user, password}`, HTTP Basic credentials sent to
        /// that host only.
        "http.basicauth.hosts" => basicauth_hosts: BTreeMap<String, BasicCredentials> =
            BTreeMap::new(),
    }
}

impl HttpSettings {
    /// The proxy every request goes through: `http.proxy` when given, else the `http.proxy.*`
    /// parts; `None`: direct connections.
    pub fn proxy(&self) -> Result<Option<ProxySettings>, KeyError> {
        ProxyKeys {
            url: &self.proxy_url.0,
            host: &self.proxy_host,
            port: self.proxy_port,
            kind: &self.proxy_type,
            user: &self.proxy_user,
            password: &self.proxy_pass.0,
        }
        .settings()
    }

    /// The headers of `http.custom.headers`, their values marked sensitive.
    pub fn headers(&self) -> Result<HeaderMap, KeyError> {
        custom_headers(&self.custom_headers)
    }

    /// The HTTP Basic credentials of `http.basicauth.*`.
    pub fn credentials(&self) -> Result<SiteCredentials, KeyError> {
        site_credentials(
            &self.basicauth_user,
            &self.basicauth_password.0,
            &self.basicauth_hosts,
        )
    }
}

/// Why `http.use.cookies: true` is refused by a build without the cookie jar.
const NO_COOKIES: &str = "needs the cookie jar, which this build of squall leaves out: \
    enable its `cookies` feature";

impl KeyedSettings for HttpSettings {
    fn check(&self) -> Result<(), (&'static str, String)> {
        let timeouts = [
            ("http.timeout", self.timeout),
            ("http.connect.timeout", self.connect_timeout),
        ];
        if let Some((key, _)) = timeouts.into_iter().find(|(_, value)| value.is_zero()) {
            return Err((key, "must be more than 0".to_string()));
        }
        if self.use_cookies && !cfg!(feature = "cookies") {
            return Err(("http.use.cookies", NO_COOKIES.to_string()));
        }
        self.proxy()?;
        self.headers()?;
        self.credentials().map(|_| ())
    }
}
