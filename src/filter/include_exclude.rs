//! squall's include and exclude regular expressions (for StormCrawler's ordered `+`/`-` rules, see
//! [`RegexUrlFilter`](super::RegexUrlFilter)).

use url::Url;

use super::pattern_set::PatternSet;
use super::{FilterError, UrlRule};

/// Keeps a URL when (there is no include pattern or one matches) and no exclude pattern matches.
///
/// Patterns are searched anywhere in the full URL string (anchor them with `^`/`$` to match it
/// all), with the syntax of the `regex` crate. Each list is compiled as one set, and holds at most
/// [`MAX_PATTERNS`](super::MAX_PATTERNS) patterns.
#[derive(Debug, Clone)]
pub struct IncludeExcludeFilter {
    include: PatternSet,
    exclude: PatternSet,
}

impl IncludeExcludeFilter {
    /// Compiles the patterns; an invalid one gives [`FilterError::InvalidRegex`] naming it, a list
    /// over the bounds [`FilterError::TooManyPatterns`] naming its key (`urlfilter.include`,
    /// `urlfilter.exclude`).
    pub fn new<S: AsRef<str>>(include: &[S], exclude: &[S]) -> Result<Self, FilterError> {
        Ok(IncludeExcludeFilter {
            include: PatternSet::new("urlfilter.include", include)?,
            exclude: PatternSet::new("urlfilter.exclude", exclude)?,
        })
    }
}

impl UrlRule for IncludeExcludeFilter {
    /// Whether a URL string passes the filter.
    fn keeps(&self, url: &Url) -> bool {
        let url = url.as_str();
        (self.include.is_empty() || self.include.is_match(url)) && !self.exclude.is_match(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::tests::keeps;

    #[test]
    fn no_patterns_keeps_everything() {
        let f = IncludeExcludeFilter::new::<&str>(&[], &[]).expect("regex");
        assert!(keeps(&f, "http://example.com/anything"));
    }

    #[test]
    fn include_requires_a_match() {
        let f =
            IncludeExcludeFilter::new(&["^https?://example\\.com/", "/docs/"], &[]).expect("regex");
        assert!(keeps(&f, "http://example.com/x"));
        assert!(keeps(&f, "http://other.org/docs/x"));
        assert!(!keeps(&f, "http://other.org/x"));
    }

    #[test]
    fn exclude_wins_over_include() {
        let include = vec!["example\\.com".to_string()];
        let exclude = vec!["\\.(?i:jpg|png)$".to_string(), "[?&]sort=".to_string()];
        let f = IncludeExcludeFilter::new(&include, &exclude).expect("regex");
        assert!(keeps(&f, "http://example.com/page"));
        assert!(!keeps(&f, "http://example.com/a.JPG"));
        assert!(!keeps(&f, "http://example.com/list?page=2&sort=asc"));
        assert!(keeps(&f, "http://example.com/a.html"));
    }

    #[test]
    fn invalid_exclude_is_reported() {
        let err = IncludeExcludeFilter::new(&["ok"], &["a{2,1}"]).expect_err("must fail");
        assert!(
            matches!(err, FilterError::InvalidRegex { ref pattern, .. } if pattern == "a{2,1}")
        );
    }
}
