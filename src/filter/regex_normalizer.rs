//! Rewrites URLs with regular expressions and substitutions (StormCrawler's RegexURLNormalizer).

use ::regex::Regex;
use url::Url;

use super::{FilterError, UrlFilter};
use crate::model::{CrawlUrl, Metadata};

/// One rule: every match of the pattern is replaced by the substitution.
#[derive(Debug, Clone)]
struct Rule {
    pattern: Regex,
    substitution: String,
}

/// Applies substitution rules in order to the whole URL, each replacing every match of its pattern,
/// as StormCrawler's `RegexURLNormalizer` (and Nutch's) does. A URL rewritten to nothing, or to
/// something that is not a URL, is dropped.
///
/// Substitutions are written as in Java: `$1` is the first group, `\$` a dollar sign and `\\` a
/// backslash.
#[derive(Debug, Clone, Default)]
pub struct RegexUrlNormalizer {
    rules: Vec<Rule>,
}

impl RegexUrlNormalizer {
    /// Compiles `(pattern, substitution)` rules; an invalid pattern gives
    /// [`FilterError::InvalidRegex`] naming it, more than [`MAX_PATTERNS`](super::MAX_PATTERNS)
    /// [`FilterError::TooManyPatterns`].
    pub fn new<S: AsRef<str>>(rules: &[(S, S)]) -> Result<Self, FilterError> {
        let patterns: Vec<&str> = rules.iter().map(|(p, _)| p.as_ref()).collect();
        super::pattern_set::check_bounds("normalizer rules", &patterns)?;
        let rules = rules
            .iter()
            .map(|(pattern, substitution)| {
                let pattern = pattern.as_ref();
                Regex::new(pattern)
                    .map(|compiled| Rule {
                        pattern: compiled,
                        substitution: java_substitution(substitution.as_ref()),
                    })
                    .map_err(|source| FilterError::InvalidRegex {
                        pattern: pattern.to_string(),
                        source,
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(RegexUrlNormalizer { rules })
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// `url` rewritten by every rule in turn.
    pub fn rewrite(&self, url: &str) -> String {
        let mut url = url.to_string();
        for rule in &self.rules {
            let replaced = rule.pattern.replace_all(&url, rule.substitution.as_str());
            if let std::borrow::Cow::Owned(replaced) = replaced {
                url = replaced;
            }
        }
        url
    }
}

/// A Java replacement string in the `regex` crate's syntax: `$n` becomes `${n}` (so that a digit
/// or letter after it is not read as part of a group name), `\x` becomes `x` (`$$` for a dollar).
fn java_substitution(java: &str) -> String {
    let mut out = String::with_capacity(java.len() + 8);
    let mut chars = java.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '$' if chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push_str("${");
                while let Some(digit) = chars.next_if(char::is_ascii_digit) {
                    out.push(digit);
                }
                out.push('}');
            }
            '$' => out.push_str("$$"),
            other => out.push(other),
        }
    }
    out
}

impl UrlFilter for RegexUrlNormalizer {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        if self.rules.is_empty() {
            return Some(url);
        }
        let rewritten = self.rewrite(url.as_str());
        if rewritten == url.as_str() {
            return Some(url);
        }
        if rewritten.is_empty() {
            return None;
        }
        Url::parse(&rewritten).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalize(n: &RegexUrlNormalizer, url: &str) -> Option<String> {
        let url = Url::parse(url).expect("test URL");
        n.filter(None, url, &Metadata::new()).map(String::from)
    }

    #[test]
    fn rules_apply_in_order_to_every_match() {
        let n = RegexUrlNormalizer::new(&[
            ("(?i)[?&]jsessionid=[^&]*", ""),
            ("/index\\.html?$", "/"),
            ("a(b)", "$1x$1"),
        ])
        .expect("valid");
        assert_eq!(n.len(), 3);
        assert_eq!(
            normalize(&n, "http://a.test/d/index.html?JSESSIONID=12").as_deref(),
            Some("http://a.test/d/"),
            "the session id goes, then the index page"
        );
        assert_eq!(
            normalize(&n, "http://a.test/d/index.html").as_deref(),
            Some("http://a.test/d/")
        );
        assert_eq!(
            normalize(&n, "http://a.test/ab/ab").as_deref(),
            Some("http://a.test/bxb/bxb")
        );
    }

    #[test]
    fn java_substitutions_read_as_java_does() {
        assert_eq!(java_substitution("$1"), "${1}");
        assert_eq!(java_substitution("$12x"), "${12}x");
        assert_eq!(java_substitution(r"\$1 \\ $"), r"$$1 \ $$");
    }

    #[test]
    fn a_url_rewritten_to_nothing_or_garbage_is_dropped() {
        let n = RegexUrlNormalizer::new(&[(".*", "")]).expect("valid");
        assert_eq!(normalize(&n, "http://a.test/x"), None);
        let n = RegexUrlNormalizer::new(&[("^http://", "")]).expect("valid");
        assert_eq!(normalize(&n, "http://a.test/x"), None);
        assert!(RegexUrlNormalizer::new(&[("[", "")]).is_err());
        assert!(RegexUrlNormalizer::default().is_empty());
    }
}
