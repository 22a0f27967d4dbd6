//! Drops URLs that are too far from the seeds, by each URL's own depth (StormCrawler's
//! MaxDepthFilter, which drops the links of a page at the maximum depth, is [`MaxDepthFilter`](super::MaxDepthFilter)).

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata, keys};

/// Drops a URL whose `depth` metadata ([`keys::DEPTH`]) exceeds a maximum.
///
/// A missing or unreadable depth counts as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlDepthFilter {
    max_depth: Option<u32>,
}

impl UrlDepthFilter {
    /// Keeps URLs with depth at most `max_depth`; `None` means unlimited.
    pub fn new(max_depth: Option<u32>) -> Self {
        UrlDepthFilter { max_depth }
    }

    /// The maximum depth, if any.
    pub fn max_depth(&self) -> Option<u32> {
        self.max_depth
    }
}

impl UrlFilter for UrlDepthFilter {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, metadata: &Metadata) -> Option<Url> {
        let Some(max) = self.max_depth else {
            return Some(url);
        };
        let depth: u64 = metadata
            .first(keys::DEPTH)
            .and_then(|d| d.trim().parse().ok())
            .unwrap_or(0);
        (depth <= u64::from(max)).then_some(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keeps(f: UrlDepthFilter, depth: Option<&str>) -> bool {
        let mut md = Metadata::new();
        if let Some(d) = depth {
            md.set(keys::DEPTH, d);
        }
        let u = Url::parse("http://example.com/").expect("test URL");
        f.filter(None, u, &md).is_some()
    }

    #[test]
    fn drops_only_urls_deeper_than_max() {
        let f = UrlDepthFilter::new(Some(2));
        assert!(keeps(f, Some("0")));
        assert!(keeps(f, Some("2")));
        assert!(!keeps(f, Some("3")));
        assert!(!keeps(f, Some("99999999999")));
    }

    #[test]
    fn missing_or_bad_depth_is_zero() {
        let f = UrlDepthFilter::new(Some(0));
        assert!(keeps(f, None));
        assert!(keeps(f, Some("zero")));
        assert!(!keeps(f, Some("1")));
    }

    #[test]
    fn none_is_unlimited() {
        let f = UrlDepthFilter::new(None);
        assert_eq!(f.max_depth(), None);
        assert!(keeps(f, Some("1000000")));
        assert_eq!(UrlDepthFilter::default(), f);
    }
}
