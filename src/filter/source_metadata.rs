//! Drops the links of pages whose metadata says so (StormCrawler's MetadataFilter and
//! SitemapFilter).

use url::Url;

use super::UrlFilter;
use crate::model::{CrawlUrl, Metadata, keys};

/// Metadata key the fetcher of StormCrawler sets to `true` on a page of a site whose robots.txt
/// announces sitemaps.
pub const FOUND_SITEMAP: &str = "foundSitemap";

/// Drops the links found on a page whose metadata has one of the given key-value pairs (values
/// compared case-insensitively), as StormCrawler's `MetadataFilter` does. Seeds are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataFilter {
    pairs: Vec<(String, String)>,
}

impl MetadataFilter {
    /// Drops the links of pages having any of these `(key, value)` pairs.
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        MetadataFilter { pairs }
    }

    /// Whether the links of a page with this metadata are dropped.
    pub fn drops_links_of(&self, page: &Metadata) -> bool {
        self.pairs.iter().any(|(key, value)| {
            page.values(key)
                .iter()
                .any(|found| found.eq_ignore_ascii_case(value))
        })
    }
}

impl UrlFilter for MetadataFilter {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        match source {
            Some(page) if self.drops_links_of(&page.metadata) => None,
            _ => Some(url),
        }
    }
}

/// Drops the links of a page that is not a sitemap (`isSitemap` is not `true`) on a site known to
/// have sitemaps (`foundSitemap` is `true`), so that such sites are crawled from their sitemaps
/// only, as StormCrawler's `SitemapFilter` does. squall's fetcher does not record `foundSitemap`:
/// the filter acts on pages whose metadata has it (from a StormCrawler status index, or a filter
/// of your own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SitemapFilter;

impl UrlFilter for SitemapFilter {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        let is_true = |md: &Metadata, key: &str| {
            md.first(key)
                .is_some_and(|value| value.eq_ignore_ascii_case("true"))
        };
        match source {
            Some(page)
                if !is_true(&page.metadata, keys::IS_SITEMAP)
                    && is_true(&page.metadata, FOUND_SITEMAP) =>
            {
                None
            }
            _ => Some(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::filter::tests::keeps_link_of as keeps;

    #[test]
    fn metadata_filter_drops_links_of_matching_pages() {
        let f = MetadataFilter::new(vec![("lang".into(), "fr".into())]);
        assert!(keeps(&f, &[]));
        assert!(keeps(&f, &[("lang", "en")]));
        assert!(!keeps(&f, &[("lang", "en"), ("lang", "FR")]));
        let seed = Url::parse("http://a.test/").expect("test URL");
        assert!(f.filter(None, seed, &Metadata::new()).is_some());
    }

    #[test]
    fn sitemap_filter_keeps_sitemaps_and_sites_without() {
        assert!(keeps(&SitemapFilter, &[]));
        assert!(keeps(&SitemapFilter, &[(FOUND_SITEMAP, "false")]));
        assert!(!keeps(&SitemapFilter, &[(FOUND_SITEMAP, "true")]));
        assert!(keeps(
            &SitemapFilter,
            &[(FOUND_SITEMAP, "true"), (keys::IS_SITEMAP, "true")]
        ));
    }
}
