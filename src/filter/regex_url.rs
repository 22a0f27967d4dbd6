//! Ordered accept and reject rules, the first match deciding (StormCrawler's RegexURLFilter).

use url::Url;

use super::pattern_set::PatternSet;
use super::{FilterError, UrlRule};

/// Ordered rules, as in StormCrawler's `RegexURLFilter` (and Nutch's): the first rule whose
/// pattern is found in the URL decides, keeping the URL (`+` rules) or dropping it (`-` rules); a
/// URL that no rule matches is dropped.
///
/// Unlike [`IncludeExcludeFilter`](super::IncludeExcludeFilter), where any exclude wins, order matters here: rule
/// files end with `+.` to keep what the rules before did not reject. The patterns are compiled as
/// one set, at most [`MAX_PATTERNS`](super::MAX_PATTERNS) of them.
#[derive(Debug, Clone)]
pub struct RegexUrlFilter {
    /// Whether each rule keeps what it matches, in order.
    accept: Vec<bool>,
    patterns: PatternSet,
}

impl RegexUrlFilter {
    /// Compiles the rules, `(accept, pattern)` in order; an invalid pattern gives
    /// [`FilterError::InvalidRegex`] naming it, too many [`FilterError::TooManyPatterns`].
    pub fn new<S: AsRef<str>>(rules: &[(bool, S)]) -> Result<Self, FilterError> {
        let patterns: Vec<&str> = rules.iter().map(|(_, p)| p.as_ref()).collect();
        Ok(RegexUrlFilter {
            accept: rules.iter().map(|(accept, _)| *accept).collect(),
            patterns: PatternSet::new("rules", &patterns)?,
        })
    }
}

impl UrlRule for RegexUrlFilter {
    /// Whether the first rule matching `url` accepts it (false when none matches).
    fn keeps(&self, url: &Url) -> bool {
        self.patterns
            .first_match(url.as_str())
            .is_some_and(|at| self.accept[at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::tests::keeps;

    #[test]
    fn the_first_matching_rule_decides() {
        let f = RegexUrlFilter::new(&[
            (true, r"^http://a\.test/keep/"),
            (false, r"\.png$"),
            (true, "."),
        ])
        .expect("valid");
        assert!(keeps(&f, "http://a.test/keep/x.png"));
        assert!(!keeps(&f, "http://a.test/x.png"));
        assert!(keeps(&f, "http://a.test/x.html"));
    }

    #[test]
    fn no_match_drops() {
        let f = RegexUrlFilter::new(&[(true, "^https://")]).expect("valid");
        assert!(!keeps(&f, "http://a.test/"));
        assert!(keeps(&f, "https://a.test/"));
        let none = RegexUrlFilter::new::<&str>(&[]).expect("valid");
        assert!(!keeps(&none, "http://a.test/"));
    }

    #[test]
    fn an_invalid_pattern_is_named() {
        let err = RegexUrlFilter::new(&[(true, "."), (false, "(x")]).expect_err("invalid");
        assert!(err.to_string().contains("(x"), "{err}");
    }
}
