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

    /// From a link on `page`, `f` keeps each of `kept` and drops each of `dropped`.
    fn follows(f: &ScopeFilter, page: &str, kept: &[&str], dropped: &[&str]) {
        for link in kept {
            assert!(keeps(f, page, link), "{page} -> {link} kept");
        }
        for link in dropped {
            assert!(!keeps(f, page, link), "{page} -> {link} dropped");
        }
    }

    #[test]
    fn no_scope_keeps_everything() {
        let f = ScopeFilter::new(false, false);
        let anywhere = ["http://anywhere.org/", "mailto:a@b.org"];
        follows(&f, "http://source.invalid/", &anywhere, &[]);
    }

    #[test]
    fn host_scope_follows_the_source_page() {
        let f = ScopeFilter::new(true, false);
        let elsewhere = [
            "http://www.example.co.uk/",
            "http://example.co.uk/",
            "mailto:a@news.example.co.uk",
        ];
        let page = "https://News.Example.co.uk/start";
        follows(&f, page, &["http://news.example.co.uk/other"], &elsewhere);
        // Another page, another scope: nothing is remembered from the first.
        let other = "http://example.co.uk/";
        follows(
            &f,
            other,
            &["http://example.co.uk/a"],
            &["http://news.example.co.uk/"],
        );
    }

    #[test]
    fn domain_scope_follows_the_source_page() {
        let f = ScopeFilter::new(false, true);
        let same_domain = ["http://www.example.co.uk/", "http://a.b.example.co.uk/"];
        let other_domains = ["http://other.co.uk/", "http://example.com/"];
        follows(
            &f,
            "https://news.example.co.uk/",
            &same_domain,
            &other_domains,
        );
        // IP addresses fall back to the host.
        follows(
            &f,
            "http://10.0.0.1:8080/",
            &["http://10.0.0.1/x"],
            &["http://10.0.0.2/x"],
        );
    }

    #[test]
    fn both_scopes_require_the_host() {
        let f = ScopeFilter::new(true, true);
        let page = "http://www.example.com/";
        follows(
            &f,
            page,
            &["http://www.example.com/a"],
            &["http://blog.example.com/a"],
        );
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
