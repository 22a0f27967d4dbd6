//! The rule that names a URL's partition (its politeness queue, its status document's `key`, its
//! queue in the queue frontier): [`Partitioner`], by host, domain or IP (`partition.url.mode`).
//! byIP asks the crawl's own [`HostResolver`] (its `resolve` pins, then the DNS cache), so that two
//! host names served from one address share one queue; the other modes need only the URL
//! ([`partition_key`]). Used wherever a key is written (the status updater, seeds) and by the
//! fetcher through [`QueueKeys`](super::queue_keys).

use std::collections::HashMap;
use std::net::IpAddr;

use url::Url;

use crate::message::Outlink;
use crate::model::{Metadata, PartitionMode, host_address, keys, partition_key};
use crate::protocol::{HostResolver, ResolveError};

/// Computes partition keys, resolving host names for byIP.
#[derive(Debug, Clone)]
pub struct Partitioner {
    mode: PartitionMode,
    resolver: HostResolver,
}

impl Partitioner {
    /// Keys of `mode`, resolving through `resolver` for byIP (use the one of the crawl's
    /// [`HttpClient`](crate::protocol::HttpClient), [`HttpClient::host_resolver`](crate::protocol::HttpClient::host_resolver)).
    pub fn new(mode: PartitionMode, resolver: HostResolver) -> Self {
        Partitioner { mode, resolver }
    }

    /// How it resolves host names (the crawl's HTTP client's resolver).
    pub fn resolver(&self) -> &HostResolver {
        &self.resolver
    }

    /// The partition mode.
    pub fn mode(&self) -> PartitionMode {
        self.mode
    }

    /// The key of `url` when it needs no lookup: every mode but byIP, and byIP for a URL whose
    /// metadata has `ip` or whose host is an address. `None`: ask [`key`](Self::key).
    pub fn key_without_lookup(&self, url: &Url, metadata: &Metadata) -> Option<String> {
        let needs_lookup = self.mode == PartitionMode::ByIp
            && !metadata.contains(keys::IP)
            && host_address(url).is_none()
            && url.host_str().is_some();
        (!needs_lookup).then(|| partition_key(url, metadata, self.mode))
    }

    /// The key of `url`; for byIP the address its host resolves to (the first one), or the error
    /// of a host that does not resolve.
    pub async fn key(&self, url: &Url, metadata: &Metadata) -> Result<String, ResolveError> {
        if let Some(key) = self.key_without_lookup(url, metadata) {
            return Ok(key);
        }
        let host = url.host_str().unwrap_or_default();
        self.resolver
            .address(host)
            .await
            .map(|ip: IpAddr| ip.to_string())
    }

    /// The key of `url` as [`key`](Self::key) gives it, or its host name when the host does not
    /// resolve (as StormCrawler falls back): for URLs written to the frontier, whose host is
    /// resolved again when they are fetched.
    pub async fn key_or_host(&self, url: &Url, metadata: &Metadata) -> String {
        match self.key(url, metadata).await {
            Ok(key) => key,
            Err(error) => {
                tracing::debug!(%error, "partition by IP: keyed by the host name");
                partition_key(url, metadata, PartitionMode::ByHost)
            }
        }
    }
}

impl Partitioner {
    /// With byIP, gives each of `outlinks` the address its host resolves to as its key (its host
    /// name when the host does not resolve), looking each host up once and all at the same time;
    /// the other modes keep the keys the parser gave.
    pub async fn rekey_outlinks<'a>(&self, outlinks: impl IntoIterator<Item = &'a mut Outlink>) {
        if self.mode != PartitionMode::ByIp {
            return;
        }
        let mut waiting: Vec<&mut Outlink> = Vec::new();
        for outlink in outlinks {
            let url = &outlink.url;
            match self.key_without_lookup(&url.url, &url.metadata) {
                Some(key) => outlink.key = key,
                None => waiting.push(outlink),
            }
        }
        let mut hosts: Vec<String> = waiting
            .iter()
            .filter_map(|o| o.url.url.host_str().map(str::to_ascii_lowercase))
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        let lookups = hosts.iter().map(|host| self.resolver.address(host));
        let answers = futures::future::join_all(lookups).await;
        let resolved: HashMap<&str, String> = hosts
            .iter()
            .zip(answers)
            .map(|(host, answer)| {
                let key = answer.map_or_else(|_| host.clone(), |ip| ip.to_string());
                (host.as_str(), key)
            })
            .collect();
        for outlink in waiting {
            let host = outlink.url.url.host_str().map(str::to_ascii_lowercase);
            if let Some(key) = host.and_then(|h| resolved.get(h.as_str())) {
                outlink.key = key.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::testing::url;

    fn by_ip() -> Partitioner {
        let pins = [
            ("a.test".to_string(), "127.0.0.2:80".parse().expect("addr")),
            (
                "b.test".to_string(),
                "127.0.0.2:8080".parse().expect("addr"),
            ),
            ("c.test".to_string(), "127.0.0.3:80".parse().expect("addr")),
        ];
        let resolver = HostResolver::new(&pins, Duration::from_secs(60), false, Default::default());
        Partitioner::new(PartitionMode::ByIp, resolver)
    }

    #[tokio::test]
    async fn by_ip_keys_hosts_by_the_address_they_resolve_to() {
        let partitioner = by_ip();
        let none = Metadata::new();
        for (link, expected) in [
            ("http://a.test/x", "127.0.0.2"),
            ("http://B.test:8080/", "127.0.0.2"),
            ("http://c.test/", "127.0.0.3"),
            ("http://127.0.0.9/", "127.0.0.9"),
            ("http://[::1]:81/", "::1"),
        ] {
            let key = partitioner.key(&url(link), &none).await.expect("resolves");
            assert_eq!(key, expected, "{link}");
        }
        let with_ip: Metadata = [(keys::IP, "10.0.0.1")].into_iter().collect();
        assert_eq!(
            partitioner.key_without_lookup(&url("http://a.test/"), &with_ip),
            Some("10.0.0.1".to_string())
        );
        assert_eq!(
            partitioner.key_without_lookup(&url("http://a.test/"), &none),
            None
        );
    }

    /// A host name the system resolver refuses without asking any server: a label longer than
    /// DNS allows (63 bytes), so the test sends nothing off the machine.
    pub(crate) fn unresolvable_host() -> String {
        format!("{}.invalid", "x".repeat(64))
    }

    #[tokio::test]
    async fn a_host_that_does_not_resolve_is_an_error_or_keeps_its_name() {
        let partitioner = by_ip();
        let host = unresolvable_host();
        let unknown = url(&format!("http://{host}/"));
        let error = partitioner
            .key(&unknown, &Metadata::new())
            .await
            .expect_err("a 64-byte label never resolves");
        assert!(error.to_string().contains(&host), "{error}");
        assert_eq!(
            partitioner.key_or_host(&unknown, &Metadata::new()).await,
            host
        );
    }

    #[tokio::test]
    async fn outlinks_are_rekeyed_by_address_once_per_host() {
        let unresolvable = unresolvable_host();
        let mut outlinks: Vec<Outlink> = [
            "http://a.test/1",
            "http://b.test:8080/2",
            "http://c.test/3",
            &format!("http://{unresolvable}/4"),
        ]
        .iter()
        .map(|link| Outlink {
            url: crate::model::CrawlUrl::new(url(link)),
            key: "parser key".to_string(),
        })
        .collect();
        by_ip().rekey_outlinks(outlinks.iter_mut()).await;
        let keys: Vec<&str> = outlinks.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(
            keys,
            ["127.0.0.2", "127.0.0.2", "127.0.0.3", unresolvable.as_str()]
        );
    }

    #[tokio::test]
    async fn other_modes_need_no_lookup() {
        let resolver = HostResolver::new(&[], Duration::from_secs(60), false, Default::default());
        let by_domain = Partitioner::new(PartitionMode::ByDomain, resolver);
        let link = url("http://www.shop.example.co.uk/");
        assert_eq!(
            by_domain.key_without_lookup(&link, &Metadata::new()),
            Some("example.co.uk".to_string())
        );
    }
}
