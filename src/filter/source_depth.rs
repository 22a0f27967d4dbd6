//! Drops the links of pages at the maximum depth (StormCrawler's MaxDepthFilter).

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata, keys};

/// Metadata key that gives one URL (and, when transferred, its outlinks) a maximum depth of its
/// own, as in StormCrawler.
pub const MAX_DEPTH: &str = "max.depth";

/// Drops the links found on a page whose `depth` is at least the maximum, as StormCrawler's
/// `MaxDepthFilter` does: with a maximum of 0 no link is followed, with 1 only the seeds' links.
/// A page's own `max.depth` metadata, when it is a number, replaces the maximum. Seeds are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaxDepthFilter {
    max_depth: Option<u32>,
}

impl MaxDepthFilter {
    /// Follows links from pages less deep than `max_depth` (`None`: no limit, unless a page's
    /// metadata sets one).
    pub fn new(max_depth: Option<u32>) -> Self {
        MaxDepthFilter { max_depth }
    }
}

/// A whole number from the first value of `key`.
fn number(metadata: &Metadata, key: &str) -> Option<u64> {
    metadata.first(key).and_then(|value| value.parse().ok())
}

impl UrlFilter for MaxDepthFilter {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        let Some(page) = source else {
            return Some(url);
        };
        let depth = number(&page.metadata, keys::DEPTH).unwrap_or(0);
        let max = number(&page.metadata, MAX_DEPTH).or(self.max_depth.map(u64::from));
        match max {
            Some(max) if depth >= max => None,
            _ => Some(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::tests::keeps_link_of;

    fn keeps(filter: MaxDepthFilter, page_metadata: &[(&str, &str)]) -> bool {
        keeps_link_of(&filter, page_metadata)
    }

    #[test]
    fn links_of_pages_at_the_maximum_are_dropped() {
        let f = MaxDepthFilter::new(Some(1));
        assert!(keeps(f, &[]), "a page without depth is a seed");
        assert!(keeps(f, &[(keys::DEPTH, "0")]));
        assert!(!keeps(f, &[(keys::DEPTH, "1")]));
        assert!(!keeps(MaxDepthFilter::new(Some(0)), &[]));
        assert!(keeps(MaxDepthFilter::new(None), &[(keys::DEPTH, "99")]));
    }

    #[test]
    fn a_page_s_own_maximum_wins() {
        let f = MaxDepthFilter::new(Some(1));
        assert!(keeps(f, &[(keys::DEPTH, "3"), (MAX_DEPTH, "5")]));
        assert!(!keeps(f, &[(keys::DEPTH, "0"), (MAX_DEPTH, "0")]));
        assert!(!keeps(f, &[(keys::DEPTH, "1"), (MAX_DEPTH, "x")]));
        let seed = Url::parse("http://a.test/").expect("test URL");
        assert!(f.filter(None, seed, &Metadata::new()).is_some());
    }
}
