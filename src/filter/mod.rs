//! URL filters: which URLs (outlinks, redirect targets, seeds) enter the frontier, and in what form.
//!
//! A [`FilterChain`] applies [`UrlFilter`]s in order; each may keep, rewrite or drop a URL. The
//! built-in filters are:
//!
//! * [`CanonicalUrlNormalizer`]: rewrites a URL into a canonical form without changing the page it points to;
//! * [`SchemeFilter`]: keeps only some schemes (`http` and `https` by default);
//! * [`ScopeFilter`]: keeps only outlinks on their source page's host or registrable domain;
//! * [`IncludeExcludeFilter`]: include and exclude regular expressions;
//! * [`UrlDepthFilter`]: drops URLs deeper than a maximum depth.
//!
//! StormCrawler's URL filters, which its `urlfilters.json` files configure, have their
//! counterparts here: [`BasicUrlFilter`], [`BasicUrlNormalizer`], [`MaxDepthFilter`],
//! [`RegexUrlFilter`], [`RegexUrlNormalizer`], [`MetadataFilter`], [`SelfLinkFilter`] and
//! [`SitemapFilter`] ([`ScopeFilter`] is its HostURLFilter).

use std::sync::Arc;

use url::Url;

use crate::model::{CrawlUrl, Metadata};

mod basic_normalizer;
mod basic_rules;
mod canonical;
mod include_exclude;
mod pattern_set;
mod regex_normalizer;
mod regex_url;
mod scheme;
mod scope;
mod self_link;
mod settings;
mod source_depth;
mod source_metadata;
mod url_depth;

pub use self::basic_normalizer::BasicUrlNormalizer;
pub use self::basic_rules::BasicUrlFilter;
pub use self::canonical::CanonicalUrlNormalizer;
pub use self::include_exclude::IncludeExcludeFilter;
pub use self::pattern_set::{MAX_PATTERN_BYTES, MAX_PATTERNS};
pub use self::regex_normalizer::RegexUrlNormalizer;
pub use self::regex_url::RegexUrlFilter;
pub use self::scheme::SchemeFilter;
pub use self::scope::ScopeFilter;
pub use self::self_link::SelfLinkFilter;
pub use self::settings::FilterSettings;
pub use self::source_depth::{MAX_DEPTH, MaxDepthFilter};
pub use self::source_metadata::{FOUND_SITEMAP, MetadataFilter, SitemapFilter};
pub use self::url_depth::UrlDepthFilter;

/// Decides whether a URL (an outlink, a redirect target or a seed) enters the frontier, possibly rewriting it.
pub trait UrlFilter: Send + Sync {
    /// `source` is the page the URL was found on (None for seeds). `metadata` is the metadata the URL will carry
    /// (its `depth` already set). Return Some(url) to keep it (possibly rewritten), None to drop it.
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, metadata: &Metadata) -> Option<Url>;
}

/// A filter that keeps or drops a URL by the URL alone (not the page it was found on, nor its
/// metadata), never rewriting it. Every `UrlRule` is a [`UrlFilter`].
pub trait UrlRule: Send + Sync {
    /// Whether `url` may enter the frontier.
    fn keeps(&self, url: &Url) -> bool;
}

impl<R: UrlRule> UrlFilter for R {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        self.keeps(&url).then_some(url)
    }
}

/// An error building a filter from its configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// A regular expression does not compile.
    #[error("invalid URL filter regex {pattern:?}: {source}")]
    InvalidRegex {
        /// The offending pattern.
        pattern: String,
        /// Why it does not compile.
        #[source]
        source: ::regex::Error,
    },
    /// A list of patterns over squall's bounds on their number or their text
    /// ([`MAX_PATTERNS`], [`MAX_PATTERN_BYTES`]).
    #[error(
        "{list}: {count} patterns ({bytes} bytes), over the bound of {MAX_PATTERNS} patterns and \
         {MAX_PATTERN_BYTES} bytes a list: each pattern costs memory, and time on every URL"
    )]
    TooManyPatterns {
        /// The list: its key, or its file.
        list: String,
        /// How many patterns it holds.
        count: usize,
        /// Their text's bytes.
        bytes: usize,
    },
    /// Patterns that compile one by one, but not together within the size limit.
    #[error("{list}: {count} patterns compile to more than {limit} bytes together: {source}")]
    TooLarge {
        /// The list: its key, or its file.
        list: String,
        /// How many patterns it holds.
        count: usize,
        /// The size limit.
        limit: usize,
        /// The regex crate's words.
        #[source]
        source: ::regex::Error,
    },
}

/// An ordered list of filters, applied one after the other; the first that drops a URL stops the chain.
///
/// Cloning is cheap: the filters are shared.
#[derive(Clone, Default, derive_more::Debug)]
pub struct FilterChain {
    #[debug("{}", filters.len())]
    filters: Vec<Arc<dyn UrlFilter>>,
}

impl FilterChain {
    /// An empty chain, which keeps every URL unchanged.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a shared filter at the end of the chain (keep a clone of the `Arc` to reach the
    /// filter later).
    pub fn push(&mut self, filter: Arc<dyn UrlFilter>) {
        self.filters.push(filter);
    }

    /// Builder form of [`push`](Self::push) taking the filter by value.
    #[must_use]
    pub fn with<F: UrlFilter + 'static>(mut self, filter: F) -> Self {
        self.push(Arc::new(filter));
        self
    }

    /// Builder form of [`push`](Self::push).
    #[must_use]
    pub fn with_arc(mut self, filter: Arc<dyn UrlFilter>) -> Self {
        self.push(filter);
        self
    }

    /// Number of filters.
    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// Whether the chain has no filter.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// Applies every filter in order, stopping at the first that drops the URL.
    pub fn filter(&self, source: Option<&CrawlUrl>, url: Url, metadata: &Metadata) -> Option<Url> {
        self.filters
            .iter()
            .try_fold(url, |url, f| f.filter(source, url, metadata))
    }
}

impl UrlFilter for FilterChain {
    fn filter(&self, source: Option<&CrawlUrl>, url: Url, metadata: &Metadata) -> Option<Url> {
        FilterChain::filter(self, source, url, metadata)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::model::keys;
    use crate::testing::url;

    /// Whether `filter` keeps `url` (found on no page, with no metadata).
    pub(crate) fn keeps(filter: &dyn UrlFilter, url: &str) -> bool {
        let url = Url::parse(url).expect("test URL");
        filter.filter(None, url, &Metadata::new()).is_some()
    }

    /// Whether `filter` keeps a link found on a seed page whose metadata `page_metadata` sets: a
    /// key it names holds the values given for it, in their order.
    pub(crate) fn keeps_link_of(filter: &dyn UrlFilter, page_metadata: &[(&str, &str)]) -> bool {
        let mut page = CrawlUrl::seed(url("http://a.test/"));
        for (key, _) in page_metadata {
            let values = page_metadata.iter().filter(|(k, _)| k == key);
            let values = values.map(|(_, value)| value.to_string()).collect();
            page.metadata.set_values(*key, values);
        }
        let link = url("http://a.test/link");
        filter.filter(Some(&page), link, &Metadata::new()).is_some()
    }

    struct Counting(Arc<AtomicUsize>);

    impl UrlFilter for Counting {
        fn filter(&self, _: Option<&CrawlUrl>, url: Url, _: &Metadata) -> Option<Url> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Some(url)
        }
    }

    struct DropAll;

    impl UrlFilter for DropAll {
        fn filter(&self, _: Option<&CrawlUrl>, _: Url, _: &Metadata) -> Option<Url> {
            None
        }
    }

    #[test]
    fn empty_chain_keeps_everything() {
        let chain = FilterChain::new();
        assert!(chain.is_empty());
        assert_eq!(chain.len(), 0);
        let u = url("ftp://example.com/x#y");
        assert_eq!(chain.filter(None, u.clone(), &Metadata::new()), Some(u));
    }

    #[test]
    fn chain_applies_filters_in_order_and_rewrites() {
        let chain = FilterChain::new()
            .with(CanonicalUrlNormalizer::new())
            .with(IncludeExcludeFilter::new(&["^https://example\\.com/a$"], &[]).expect("regex"));
        assert_eq!(chain.len(), 2);
        // The regex only matches once the fragment has been removed by the normalizer.
        assert_eq!(
            chain.filter(None, url("https://example.com/a#frag"), &Metadata::new()),
            Some(url("https://example.com/a"))
        );
    }

    #[test]
    fn chain_stops_at_first_drop() {
        let before = Arc::new(AtomicUsize::new(0));
        let after = Arc::new(AtomicUsize::new(0));
        let chain = FilterChain::new()
            .with(Counting(before.clone()))
            .with(DropAll)
            .with(Counting(after.clone()));
        assert_eq!(
            chain.filter(None, url("http://a.com/"), &Metadata::new()),
            None
        );
        assert_eq!(before.load(Ordering::SeqCst), 1);
        assert_eq!(after.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn chain_is_a_filter_and_clones_share_filters() {
        let count = Arc::new(AtomicUsize::new(0));
        let mut inner = FilterChain::new();
        inner.push(Arc::new(Counting(count.clone())));
        let shared = Arc::new(UrlDepthFilter::new(Some(1)));
        inner.push(shared.clone());
        let outer = FilterChain::new()
            .with(inner.clone())
            .with_arc(Arc::new(inner));
        let mut md = Metadata::new();
        md.set(keys::DEPTH, "1");
        assert!(outer.filter(None, url("http://a.com/"), &md).is_some());
        assert_eq!(count.load(Ordering::SeqCst), 2);
        md.set(keys::DEPTH, "2");
        assert!(UrlFilter::filter(&outer, None, url("http://a.com/"), &md).is_none());
        assert!(format!("{outer:?}").contains("filters: 2"));
    }

    #[test]
    fn invalid_regex_error_names_the_pattern() {
        let err = IncludeExcludeFilter::new(&["ok", "(unclosed"], &[]).expect_err("must fail");
        let FilterError::InvalidRegex { pattern, .. } = &err else {
            panic!("not an invalid regex: {err}");
        };
        assert_eq!(pattern, "(unclosed");
        assert!(err.to_string().contains("(unclosed"));
        assert!(std::error::Error::source(&err).is_some());
    }
}
