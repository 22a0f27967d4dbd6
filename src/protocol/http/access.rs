//! Who the HTTP client says it is to proxies and sites that ask: the proxy every request goes
//! through and HTTP Basic credentials for every host or for some. Read from the `http.proxy*` and
//! `http.basicauth.*` keys by [`crate::config`].
//!
//! Credentials never reach a log: [`BasicCredentials`] prints its password as `***`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

/// How the proxy is spoken to (`http.proxy.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// An HTTP proxy: `http://` URLs are requested from it in absolute form, `https://` ones
    /// through a `CONNECT` tunnel.
    Http,
    /// A SOCKS5 proxy, which also resolves the host names.
    Socks,
}

/// A user name and password for HTTP Basic authentication; its `Debug` hides the password.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BasicCredentials {
    /// The user name.
    pub user: String,
    /// The password.
    #[serde(default)]
    pub password: String,
}

impl fmt::Debug for BasicCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BasicCredentials")
            .field("user", &self.user)
            .field("password", &"***")
            .finish()
    }
}

/// The proxy every request goes through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySettings {
    /// HTTP or SOCKS.
    pub kind: ProxyKind,
    /// The proxy's host name or address.
    pub host: String,
    /// The proxy's port.
    pub port: u16,
    /// Credentials the proxy asks for (sent as `Proxy-Authorization` to an HTTP proxy).
    pub credentials: Option<BasicCredentials>,
}

/// The HTTP Basic credentials of a crawl: the ones sent to every host (`http.basicauth.user` and
/// `http.basicauth.password`, as StormCrawler has them) and the ones sent to one host only
/// (`http.basicauth.hosts`), which win for their host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteCredentials {
    /// Sent to every host that has none of its own.
    pub every_host: Option<BasicCredentials>,
    /// By host name (lowercase, as in URLs; a port is not part of it).
    pub by_host: BTreeMap<String, BasicCredentials>,
}

impl SiteCredentials {
    /// Whether no credential is configured.
    pub fn is_empty(&self) -> bool {
        self.every_host.is_none() && self.by_host.is_empty()
    }

    /// The credentials for `url`'s host, if any.
    pub fn for_url(&self, url: &Url) -> Option<&BasicCredentials> {
        let host = url.host_str()?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.by_host
            .get(&host.to_ascii_lowercase())
            .or(self.every_host.as_ref())
    }
}
