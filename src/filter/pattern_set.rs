//! A list of URL patterns compiled together as one set, within bounds on its number and size.
//!
//! Compiled one by one, each pattern took its own automaton (about 14 KB for a host pattern) and
//! every URL was tried against each in turn: 190,000 exclude patterns took 2.7 GB and seconds a
//! URL. As one [`RegexSet`] they take about half the memory and a URL is tried against all at
//! once; past [`MAX_PATTERNS`] or [`MAX_PATTERN_BYTES`] a list is refused with its figures.

use ::regex::{Regex, RegexSet, RegexSetBuilder};

use super::FilterError;

/// The most patterns one list (include, exclude, a rule file) may hold.
pub const MAX_PATTERNS: usize = 10_000;

/// The most bytes of pattern text one list may hold.
pub const MAX_PATTERN_BYTES: usize = 1 << 20;

/// What one pattern may compile to: the `regex` crate's own default for one.
const SIZE_LIMIT_EACH: usize = 10 << 20;

/// What a whole list may compile to.
const SIZE_LIMIT: usize = 256 << 20;

/// Patterns searched for anywhere in a URL, together.
#[derive(Debug, Clone)]
pub(super) struct PatternSet {
    set: RegexSet,
}

impl PatternSet {
    /// Compiles `patterns`, the list `list` names (`urlfilter.exclude`): over the bounds,
    /// [`FilterError::TooManyPatterns`]; an invalid pattern, [`FilterError::InvalidRegex`] naming
    /// it.
    pub(super) fn new<S: AsRef<str>>(list: &str, patterns: &[S]) -> Result<Self, FilterError> {
        check_bounds(list, patterns)?;
        let limit = SIZE_LIMIT_EACH
            .saturating_mul(patterns.len())
            .clamp(SIZE_LIMIT_EACH, SIZE_LIMIT);
        RegexSetBuilder::new(patterns.iter().map(AsRef::as_ref))
            .size_limit(limit)
            .build()
            .map(|set| PatternSet { set })
            .map_err(|error| explain(list, patterns, limit, error))
    }

    /// Whether the list is empty.
    pub(super) fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Whether any pattern is found in `text`.
    pub(super) fn is_match(&self, text: &str) -> bool {
        self.set.is_match(text)
    }

    /// The place in the list of the first pattern found in `text`.
    pub(super) fn first_match(&self, text: &str) -> Option<usize> {
        self.set.matches(text).iter().next()
    }
}

/// Refuses a list over [`MAX_PATTERNS`] or [`MAX_PATTERN_BYTES`], with its figures.
pub(super) fn check_bounds<S: AsRef<str>>(list: &str, patterns: &[S]) -> Result<(), FilterError> {
    let bytes: usize = patterns.iter().map(|p| p.as_ref().len()).sum();
    if patterns.len() > MAX_PATTERNS || bytes > MAX_PATTERN_BYTES {
        return Err(FilterError::TooManyPatterns {
            list: list.to_string(),
            count: patterns.len(),
            bytes,
        });
    }
    Ok(())
}

/// Why a set did not compile: the first pattern that does not compile alone, else the set's size.
fn explain<S: AsRef<str>>(
    list: &str,
    patterns: &[S],
    limit: usize,
    error: ::regex::Error,
) -> FilterError {
    for pattern in patterns.iter().map(AsRef::as_ref) {
        if let Err(source) = Regex::new(pattern) {
            return FilterError::InvalidRegex {
                pattern: pattern.to_string(),
                source,
            };
        }
    }
    FilterError::TooLarge {
        list: list.to_string(),
        count: patterns.len(),
        limit,
        source: error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_over_either_bound_is_refused_with_its_figures() {
        let many: Vec<String> = (0..=MAX_PATTERNS).map(|n| format!("/p{n}/")).collect();
        let error = PatternSet::new("urlfilter.exclude", &many).expect_err("too many");
        let message = error.to_string();
        assert!(
            message.starts_with("urlfilter.exclude: 10001 patterns"),
            "{message}"
        );
        let long = vec!["x".repeat(MAX_PATTERN_BYTES + 1)];
        let error = PatternSet::new("rules", &long).expect_err("too long");
        assert!(
            error.to_string().contains("1 patterns (1048577 bytes)"),
            "{error}"
        );
    }

    #[test]
    fn a_full_list_compiles_and_finds_the_first_pattern() {
        let hosts: Vec<String> = (0..MAX_PATTERNS)
            .map(|n| format!(r"^https?://host{n}\.example\.com/"))
            .collect();
        let set = PatternSet::new("urlfilter.exclude", &hosts).expect("within the bounds");
        assert!(set.is_match("http://host9999.example.com/x"));
        assert!(!set.is_match("http://host10000.example.com/x"));
        let set = PatternSet::new("rules", &["b", "a", "."]).expect("valid");
        assert_eq!(set.first_match("xa"), Some(1));
        assert_eq!(set.first_match(""), None);
    }

    #[test]
    fn the_pattern_that_does_not_compile_is_named() {
        let error = PatternSet::new("rules", &["ok", "a{2,1}"]).expect_err("invalid");
        assert!(
            matches!(error, FilterError::InvalidRegex { ref pattern, .. } if pattern == "a{2,1}")
        );
    }
}
