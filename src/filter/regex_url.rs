//! Ordered accept and reject rules, the first match deciding (StormCrawler's RegexURLFilter).

use ::regex::Regex;
use url::Url;

use super::{FilterError, UrlRule};

/// One rule: a regular expression, and whether a URL it matches is kept.
#[derive(Debug, Clone)]
struct Rule {
    accept: bool,
    pattern: Regex,
}

/// Ordered rules, as in StormCrawler's `RegexURLFilter` (and Nutch's): the first rule whose
/// pattern is found in the URL decides, keeping the URL (`+` rules) or dropping it (`-` rules); a
/// URL that no rule matches is dropped.
///
/// Unlike [`IncludeExcludeFilter`](super::IncludeExcludeFilter), where any exclude wins, order matters here: rule
/// files end with `+.` to keep what the rules before did not reject.
#[derive(Debug, Clone)]
pub struct RegexUrlFilter {
    rules: Vec<Rule>,
}

impl RegexUrlFilter {
    /// Compiles the rules, `(accept, pattern)` in order; an invalid pattern gives
    /// [`FilterError::InvalidRegex`] naming it.
    pub fn new<S: AsRef<str>>(rules: &[(bool, S)]) -> Result<Self, FilterError> {
        let rules = rules
            .iter()
            .map(|(accept, pattern)| {
                let pattern = pattern.as_ref();
                Regex::new(pattern)
                    .map(|compiled| Rule {
                        accept: *accept,
                        pattern: compiled,
                    })
                    .map_err(|source| FilterError::InvalidRegex {
                        pattern: pattern.to_string(),
                        source,
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(RegexUrlFilter { rules })
    }
}

impl UrlRule for RegexUrlFilter {
    /// Whether the first rule matching `url` accepts it (false when none matches).
    fn keeps(&self, url: &Url) -> bool {
        let url = url.as_str();
        self.rules
            .iter()
            .find(|rule| rule.pattern.is_match(url))
            .is_some_and(|rule| rule.accept)
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
