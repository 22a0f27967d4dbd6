//! Keeps the crawl on the seeds' hosts or registrable domains.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::sync::{PoisonError, RwLock};

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata, registrable_domain};

/// Host and domain scope relative to the seeds.
///
/// * With `ignore_outside_host`, a URL is kept only if its host equals the host of a seed.
/// * With `ignore_outside_domain`, a URL is kept only if its registrable domain (public suffix
///   list, falling back to the host for IP addresses and public suffixes) equals a seed's.
/// * With both false, every URL is kept.
///
/// Seeds themselves (`source` is `None`) are always kept: a seed is in its own scope. Seeds are
/// not recorded by filtering them; call [`add_seed`](Self::add_seed) for each seed injected, which
/// works through a shared reference so that seeds can be added while crawling. URLs without a host
/// are dropped when a scope is active.
#[derive(Debug, Default)]
pub struct ScopeFilter {
    ignore_outside_host: bool,
    ignore_outside_domain: bool,
    hosts: RwLock<HashSet<String>>,
    domains: RwLock<HashSet<String>>,
}

impl ScopeFilter {
    /// A scope with no seed yet.
    pub fn new(ignore_outside_host: bool, ignore_outside_domain: bool) -> Self {
        ScopeFilter {
            ignore_outside_host,
            ignore_outside_domain,
            ..Self::default()
        }
    }

    /// A scope around the given seeds.
    pub fn from_seeds<I>(seeds: I, ignore_outside_host: bool, ignore_outside_domain: bool) -> Self
    where
        I: IntoIterator,
        I::Item: Borrow<Url>,
    {
        let filter = ScopeFilter::new(ignore_outside_host, ignore_outside_domain);
        for seed in seeds {
            filter.add_seed(seed.borrow());
        }
        filter
    }

    /// Adds a seed's host and registrable domain to the scope. A URL without a host is ignored.
    pub fn add_seed(&self, seed: &Url) {
        let Some((host, domain)) = host_and_domain(seed) else {
            return;
        };
        self.hosts
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(host);
        self.domains
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(domain);
    }

    /// Whether a URL is inside the scope (ignoring the seed exemption of [`UrlFilter::filter`]).
    pub fn in_scope(&self, url: &Url) -> bool {
        if !self.ignore_outside_host && !self.ignore_outside_domain {
            return true;
        }
        let Some((host, domain)) = host_and_domain(url) else {
            return false;
        };
        if self.ignore_outside_host
            && !self
                .hosts
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&host)
        {
            return false;
        }
        if self.ignore_outside_domain
            && !self
                .domains
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&domain)
        {
            return false;
        }
        true
    }
}

/// The lowercase host and its registrable domain (or the host when it has none).
fn host_and_domain(url: &Url) -> Option<(String, String)> {
    let host = url.host_str()?.to_ascii_lowercase();
    let domain = registrable_domain(&host).unwrap_or_else(|| host.clone());
    Some((host, domain))
}

impl UrlFilter for ScopeFilter {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        (source.is_none() || self.in_scope(&url)).then_some(url)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("test URL")
    }

    fn keeps(f: &ScopeFilter, s: &str) -> bool {
        let source = CrawlUrl::seed(url("http://source.invalid/"));
        f.filter(Some(&source), url(s), &Metadata::new()).is_some()
    }

    #[test]
    fn no_scope_keeps_everything() {
        let f = ScopeFilter::new(false, false);
        assert!(keeps(&f, "http://anywhere.org/"));
        assert!(keeps(&f, "mailto:a@b.org"));
    }

    #[test]
    fn host_scope() {
        let f = ScopeFilter::from_seeds([url("https://News.Example.co.uk/start")], true, false);
        assert!(keeps(&f, "http://news.example.co.uk/other"));
        assert!(!keeps(&f, "http://www.example.co.uk/"));
        assert!(!keeps(&f, "http://example.co.uk/"));
        assert!(!keeps(&f, "mailto:a@news.example.co.uk"));
    }

    #[test]
    fn domain_scope() {
        let seeds = vec![
            url("https://news.example.co.uk/"),
            url("http://10.0.0.1:8080/"),
        ];
        let f = ScopeFilter::from_seeds(&seeds, false, true);
        assert!(keeps(&f, "http://www.example.co.uk/"));
        assert!(keeps(&f, "http://a.b.example.co.uk/"));
        assert!(!keeps(&f, "http://other.co.uk/"));
        assert!(!keeps(&f, "http://example.com/"));
        // IP addresses fall back to the host.
        assert!(keeps(&f, "http://10.0.0.1/x"));
        assert!(!keeps(&f, "http://10.0.0.2/x"));
    }

    #[test]
    fn both_scopes_require_the_host() {
        let f = ScopeFilter::from_seeds([url("http://www.example.com/")], true, true);
        assert!(keeps(&f, "http://www.example.com/a"));
        assert!(!keeps(&f, "http://blog.example.com/a"));
    }

    #[test]
    fn seeds_are_always_kept_and_can_be_added_later() {
        let f = Arc::new(ScopeFilter::new(true, false));
        assert!(!keeps(&f, "http://late.example.org/page"));
        let seed = url("http://late.example.org/");
        assert!(f.filter(None, seed.clone(), &Metadata::new()).is_some());
        let shared = Arc::clone(&f);
        std::thread::spawn(move || shared.add_seed(&seed))
            .join()
            .expect("thread");
        assert!(keeps(&f, "http://late.example.org/page"));
        assert!(f.in_scope(&url("http://LATE.example.org/")));
    }
}
