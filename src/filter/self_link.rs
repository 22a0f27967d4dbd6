//! Drops links from a page to itself (StormCrawler's SelfURLFilter).

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata};

/// Drops a link whose URL is the URL of the page it was found on (compared case-insensitively),
/// as StormCrawler's `SelfURLFilter` does. Seeds are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SelfLinkFilter;

impl UrlFilter for SelfLinkFilter {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        match source {
            Some(page) if page.url.as_str().eq_ignore_ascii_case(url.as_str()) => None,
            _ => Some(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keeps(source: &str, link: &str) -> bool {
        let page = CrawlUrl::seed(Url::parse(source).expect("test URL"));
        let link = Url::parse(link).expect("test URL");
        SelfLinkFilter
            .filter(Some(&page), link, &Metadata::new())
            .is_some()
    }

    #[test]
    fn links_to_the_page_itself_are_dropped() {
        assert!(!keeps("http://a.test/x", "http://a.test/x"));
        assert!(!keeps("http://a.test/Page", "http://A.test/page"));
        assert!(keeps("http://a.test/x", "http://a.test/x?y"));
        let seed = Url::parse("http://a.test/").expect("test URL");
        assert!(
            SelfLinkFilter
                .filter(None, seed, &Metadata::new())
                .is_some()
        );
    }
}
