//! What an HTTP client is built with beside its keys: who it says it is, the names the program
//! pins, and what the crawl shares between its clients (the trusted private hosts, the cookie jar).

use std::net::SocketAddr;

#[cfg(feature = "cookies")]
use super::cookies::CookieJar;
use super::settings::HttpSettings;
use crate::protocol::dns::{HostResolver, TrustedHosts};

/// What an HTTP client ([`HttpClient`](super::HttpClient), and robots.txt's
/// [`RobotsCache`](crate::protocol::RobotsCache)) is built with beside its `http.*` keys
/// ([`HttpSettings`]): none of it is a key of its own. [`HttpContext::new`] makes the one of a
/// configuration's keys; the crawler's wiring then names the User-Agent (`http.agent.*`), the
/// pins (`--resolve`) and the idle connections a fetcher queue needs (`fetcher.threads.per.queue`).
/// Clones share the trusted hosts and the cookie jar, so a client and robots.txt built with one
/// context see the same.
///
/// Made by [`HttpContext::new`], then changed field by field: it is `#[non_exhaustive]`, as its
/// fields depend on squall's features (`cookies`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpContext {
    /// The User-Agent header.
    pub user_agent: String,
    /// Host names resolved to fixed addresses instead of DNS (like curl's `--resolve`).
    pub resolve: Vec<(String, SocketAddr)>,
    /// Hosts that may be private while `http.refuse.private.addresses` is on: the user's own (the
    /// seeds, added as they are injected, and `http.private.hosts`). Clones share the set.
    pub trusted_hosts: TrustedHosts,
    /// Idle connections kept open per host, for the next fetches of that host to reuse: at least
    /// as many as the fetcher may run at once on one queue, or most fetches would open a new one.
    pub max_idle_per_host: usize,
    /// The crawl's cookie jar (`http.use.cookies`, feature `cookies`); `None`: cookies are
    /// neither kept nor sent.
    #[cfg(feature = "cookies")]
    pub cookies: Option<CookieJar>,
}

impl HttpContext {
    /// Idle connections per host a client keeps at least: a queue's one fetch at a time, and a
    /// few for robots.txt.
    pub const MIN_IDLE_PER_HOST: usize = 4;

    /// The context `config`'s keys give: the hosts of `http.private.hosts` trusted, a new cookie
    /// jar when `http.use.cookies` is on; the User-Agent `squall/VERSION`, no pins, and
    /// [`MIN_IDLE_PER_HOST`](Self::MIN_IDLE_PER_HOST) idle connections per host until the
    /// program says otherwise.
    pub fn new(config: &HttpSettings) -> Self {
        HttpContext {
            user_agent: format!("squall/{}", env!("CARGO_PKG_VERSION")),
            resolve: Vec::new(),
            trusted_hosts: TrustedHosts::of(&config.private_hosts),
            max_idle_per_host: Self::MIN_IDLE_PER_HOST,
            #[cfg(feature = "cookies")]
            cookies: config.use_cookies.then(CookieJar::new),
        }
    }

    /// A resolver with this context's pins and trusted hosts, `config`'s DNS cache time and guard
    /// against private addresses.
    pub(crate) fn host_resolver(&self, config: &HttpSettings) -> HostResolver {
        HostResolver::new(
            &self.resolve,
            config.dns_cache_ttl,
            config.refuse_private_addresses,
            self.trusted_hosts.clone(),
        )
    }
}
