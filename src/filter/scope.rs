//! Keeps the crawl on the host or registrable domain of the page each link was found on.

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata, registrable_domain};

/// Host and domain scope relative to the page a URL was found on, as StormCrawler's host filter.
///
/// * With `ignore_outside_host`, an outlink (or redirect target) is kept only if its host equals the
///   host of its source page.
/// * With `ignore_outside_domain`, it is kept only if its registrable domain (public suffix list,
///   falling back to the host for IP addresses and public suffixes) equals its source page's.
/// * With both false, every URL is kept.
///
/// Seeds (`source` is `None`) are always kept: a seed is in its own scope. The rule needs nothing but
/// the URL and its source, so it holds the same in every process sharing a frontier and after a
/// restart, whoever injected the seeds. A URL without a host is dropped when a scope is active.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScopeFilter {
    ignore_outside_host: bool,
    ignore_outside_domain: bool,
}

impl ScopeFilter {
    /// A scope on the source page's host and/or registrable domain.
    pub fn new(ignore_outside_host: bool, ignore_outside_domain: bool) -> Self {
        ScopeFilter {
            ignore_outside_host,
            ignore_outside_domain,
        }
    }

    /// Whether `url` is in the scope of a page at `source`.
    pub fn in_scope(&self, source: &Url, url: &Url) -> bool {
        if !self.ignore_outside_host && !self.ignore_outside_domain {
            return true;
        }
        let (Some(host), Some(source_host)) = (url.host_str(), source.host_str()) else {
            return false;
        };
        if !host.eq_ignore_ascii_case(source_host) {
            if self.ignore_outside_host {
                return false;
            }
            if self.ignore_outside_domain && domain_of(host) != domain_of(source_host) {
                return false;
            }
        }
        true
    }
}

/// The lowercase registrable domain of a host (the host itself when it has none).
fn domain_of(host: &str) -> String {
    let host = host.to_ascii_lowercase();
    registrable_domain(&host).unwrap_or(host)
}

impl UrlFilter for ScopeFilter {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        match source {
            None => Some(url),
            Some(source) => self.in_scope(&source.url, &url).then_some(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::url;

    fn keeps(f: &ScopeFilter, source: &str, s: &str) -> bool {
        let source = CrawlUrl::seed(url(source));
        f.filter(Some(&source), url(s), &Metadata::new()).is_some()
    }

    #[test]
    fn no_scope_keeps_everything() {
        let f = ScopeFilter::new(false, false);
        assert!(keeps(&f, "http://source.invalid/", "http://anywhere.org/"));
        assert!(keeps(&f, "http://source.invalid/", "mailto:a@b.org"));
    }

    #[test]
    fn host_scope_follows_the_source_page() {
        let f = ScopeFilter::new(true, false);
        let page = "https://News.Example.co.uk/start";
        assert!(keeps(&f, page, "http://news.example.co.uk/other"));
        assert!(!keeps(&f, page, "http://www.example.co.uk/"));
        assert!(!keeps(&f, page, "http://example.co.uk/"));
        assert!(!keeps(&f, page, "mailto:a@news.example.co.uk"));
        // Another page, another scope: nothing is remembered from the first.
        assert!(keeps(&f, "http://example.co.uk/", "http://example.co.uk/a"));
        assert!(!keeps(
            &f,
            "http://example.co.uk/",
            "http://news.example.co.uk/"
        ));
    }

    #[test]
    fn domain_scope_follows_the_source_page() {
        let f = ScopeFilter::new(false, true);
        let page = "https://news.example.co.uk/";
        assert!(keeps(&f, page, "http://www.example.co.uk/"));
        assert!(keeps(&f, page, "http://a.b.example.co.uk/"));
        assert!(!keeps(&f, page, "http://other.co.uk/"));
        assert!(!keeps(&f, page, "http://example.com/"));
        // IP addresses fall back to the host.
        assert!(keeps(&f, "http://10.0.0.1:8080/", "http://10.0.0.1/x"));
        assert!(!keeps(&f, "http://10.0.0.1:8080/", "http://10.0.0.2/x"));
    }

    #[test]
    fn both_scopes_require_the_host() {
        let f = ScopeFilter::new(true, true);
        let page = "http://www.example.com/";
        assert!(keeps(&f, page, "http://www.example.com/a"));
        assert!(!keeps(&f, page, "http://blog.example.com/a"));
    }

    #[test]
    fn seeds_are_always_kept() {
        let f = ScopeFilter::new(true, true);
        assert!(
            f.filter(None, url("http://late.example.org/"), &Metadata::new())
                .is_some()
        );
    }
}
