//! Name resolution for the fetcher: a cache in front of the system resolver, and an optional guard
//! that refuses private, loopback and link-local addresses (so a crawl of the public web cannot be
//! steered into the crawler's own network).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashSet;
use moka::future::Cache;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether an address is one a public-web crawl should never connect to.
pub fn is_private_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                // 100.64.0.0/10, carrier-grade NAT
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xc0) == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                // fc00::/7 unique local, fe80::/10 link local
                || (v6.segments()[0] & 0xfe00) == 0xfc00
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| is_private_address(IpAddr::V4(v4)))
        }
    }
}

/// Hosts that may resolve to private addresses while the guard is on: those the user named (the
/// seeds, `http.private.hosts`). Names are kept in lower case; clones share the set.
#[derive(Clone, Debug, Default)]
pub struct TrustedHosts(Arc<DashSet<String>>);

impl TrustedHosts {
    /// A set holding `hosts`.
    pub fn of<S: AsRef<str>>(hosts: impl IntoIterator<Item = S>) -> Self {
        let trusted = TrustedHosts::default();
        for host in hosts {
            trusted.trust(host.as_ref());
        }
        trusted
    }

    /// Lets `host` resolve to private addresses (or be one).
    pub fn trust(&self, host: &str) {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if !self.0.contains(&host) {
            self.0.insert(host);
        }
    }

    /// Whether `host` may be private.
    pub fn contains(&self, host: &str) -> bool {
        !self.0.is_empty()
            && self
                .0
                .contains(&host.trim_end_matches('.').to_ascii_lowercase())
    }
}

impl PartialEq for TrustedHosts {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.len() == other.0.len() && self.0.iter().all(|host| other.0.contains(&*host)))
    }
}

/// A caching resolver over the system's `getaddrinfo`.
#[derive(Clone)]
pub struct CachingResolver {
    cache: Cache<String, Arc<Vec<SocketAddr>>>,
    refuse_private: bool,
    trusted: TrustedHosts,
}

impl CachingResolver {
    /// Keeps answers for `ttl`; with `refuse_private`, names other than `trusted` ones that
    /// resolve only to private addresses fail.
    pub fn new(ttl: Duration, refuse_private: bool, trusted: TrustedHosts) -> Self {
        CachingResolver {
            cache: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build(),
            refuse_private,
            trusted,
        }
    }
}

/// A name that could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ResolveError {
    /// The system resolver failed.
    #[error("cannot resolve {host}: {message}")]
    Lookup {
        /// The host name.
        host: String,
        /// What the resolver said.
        message: String,
    },
    /// Every address is private and the guard is on.
    #[error(
        "{host} resolves only to private, loopback or link-local addresses, refused for hosts the \
         crawl found (only seeds and http.private.hosts may be private; \
         http.refuse.private.addresses: false allows every host)"
    )]
    Private {
        /// The host name.
        host: String,
    },
}

impl CachingResolver {
    /// Every address `host` resolves to, from the cache or the system resolver (private ones too).
    pub async fn lookup(&self, host: &str) -> Result<Arc<Vec<SocketAddr>>, ResolveError> {
        self.cache
            .try_get_with(host.to_string(), async {
                let found: Vec<SocketAddr> = tokio::net::lookup_host((host, 0))
                    .await
                    .map_err(|e| ResolveError::Lookup {
                        host: host.to_string(),
                        message: e.to_string(),
                    })?
                    .collect();
                Ok::<_, ResolveError>(Arc::new(found))
            })
            .await
            .map_err(|e| (*e).clone())
    }
}

impl Resolve for CachingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let resolver = self.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs = resolver
                .lookup(&host)
                .await
                .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })?;
            let guarded = resolver.refuse_private && !resolver.trusted.contains(&host);
            let allowed: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| !guarded || !is_private_address(a.ip()))
                .collect();
            if allowed.is_empty() && !addrs.is_empty() {
                return Err(Box::new(ResolveError::Private { host }) as _);
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// How a crawl resolves host names: the addresses pinned with `resolve` (like curl's `--resolve`)
/// first, then the [`CachingResolver`]. The HTTP client connects through it, and partitioning by IP
/// asks it, so that a URL's queue is the address its fetch connects to. Clones share the cache.
#[derive(Clone, derive_more::Debug)]
pub struct HostResolver {
    #[debug("{}", pins.len())]
    pins: Arc<HashMap<String, SocketAddr>>,
    #[debug(skip)]
    cache: CachingResolver,
}

impl HostResolver {
    /// Pins `pins`, and keeps other answers for `ttl`; with `refuse_private`, the client's
    /// connections to private addresses fail but for `trusted` hosts (partitioning still sees
    /// every address).
    pub fn new(
        pins: &[(String, SocketAddr)],
        ttl: Duration,
        refuse_private: bool,
        trusted: TrustedHosts,
    ) -> Self {
        HostResolver {
            pins: Arc::new(
                pins.iter()
                    .map(|(host, addr)| (host.to_ascii_lowercase(), *addr))
                    .collect(),
            ),
            cache: CachingResolver::new(ttl, refuse_private, trusted),
        }
    }

    /// The first address `host` resolves to: its pin, or the first answer of DNS.
    pub async fn address(&self, host: &str) -> Result<IpAddr, ResolveError> {
        let host = host.to_ascii_lowercase();
        if let Some(addr) = self.pins.get(&host) {
            return Ok(addr.ip());
        }
        let addrs = self.cache.lookup(&host).await?;
        addrs
            .first()
            .map(SocketAddr::ip)
            .ok_or_else(|| ResolveError::Lookup {
                host,
                message: "no address".to_string(),
            })
    }

    /// Whether `host` is pinned to an address.
    pub fn is_pinned(&self, host: &str) -> bool {
        self.pins.contains_key(&host.to_ascii_lowercase())
    }

    /// The hosts that may be private: [`HostResolver::trust`] adds one.
    pub fn trusted(&self) -> &TrustedHosts {
        &self.cache.trusted
    }

    /// Lets `host` resolve to private addresses (a seed's host, say).
    pub fn trust(&self, host: &str) {
        self.cache.trusted.trust(host);
    }

    /// The resolver behind the pins, for the HTTP client.
    pub(crate) fn cache(&self) -> CachingResolver {
        self.cache.clone()
    }

    /// `builder` with every pin.
    pub(crate) fn pin_all(&self, mut builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
        for (host, addr) in self.pins.iter() {
            builder = builder.resolve(host, *addr);
        }
        builder
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_ranges() {
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "127.0.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "0.0.0.0",
        ] {
            assert!(
                is_private_address(private.parse().expect("ip")),
                "{private}"
            );
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:2800:220:1::1",
            "100.128.0.1",
        ] {
            assert!(!is_private_address(public.parse().expect("ip")), "{public}");
        }
    }
}
