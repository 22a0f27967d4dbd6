//! Drops URLs that are too long or whose path repeats itself (StormCrawler's BasicURLFilter).

use std::collections::HashMap;

use url::Url;

use super::UrlRule;

/// Drops URLs longer than a maximum, and URLs in which one `/`-separated part occurs a given
/// number of times (a sign of a relative-link loop such as `/a/b/a/b/a/b/`), as StormCrawler's
/// `BasicURLFilter` does.
///
/// The repetition count looks at the whole URL split on `/` (scheme and host included), and only
/// when it has more than four parts; empty parts are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BasicUrlFilter {
    max_path_repetition: Option<usize>,
    max_length: Option<usize>,
}

impl BasicUrlFilter {
    /// `max_path_repetition`: a URL in which a part occurs this many times is dropped (`None`, or
    /// less than 2: no check). `max_length`: a URL longer than this many bytes is dropped (`None`:
    /// no limit).
    pub fn new(max_path_repetition: Option<usize>, max_length: Option<usize>) -> Self {
        BasicUrlFilter {
            max_path_repetition: max_path_repetition.filter(|max| *max > 1),
            max_length,
        }
    }
}

/// Whether a non-empty `/`-separated part of `url` occurs `max` times (URLs of at most four parts
/// are never judged).
fn repeats(url: &str, max: usize) -> bool {
    if url.split('/').count() <= 4 {
        return false;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    url.split('/').filter(|part| !part.is_empty()).any(|part| {
        let count = counts.entry(part).or_insert(0);
        *count += 1;
        *count >= max
    })
}

impl UrlRule for BasicUrlFilter {
    /// Whether the URL string passes both checks.
    fn keeps(&self, url: &Url) -> bool {
        let url = url.as_str();
        if let Some(max) = self.max_length.filter(|max| url.len() > *max) {
            metrics::counter!("squall_urls_too_long_total").increment(1);
            let start: String = url.chars().take(120).collect();
            tracing::debug!(bytes = url.len(), max, url = %crate::redact::url_text(&start), "URL over its maximum length dropped");
            return false;
        }
        match self.max_path_repetition {
            Some(max) => !repeats(url, max),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::tests::keeps;

    #[test]
    fn a_part_repeated_max_times_is_dropped() {
        let f = BasicUrlFilter::new(Some(3), None);
        assert!(keeps(&f, "http://a.test/x/y/x/z"));
        assert!(!keeps(&f, "http://a.test/x/y/x/z/x"));
        assert!(!keeps(&f, "http://a.test/a/b/a/b/a/b/"));
        // Short URLs are never judged.
        let two = BasicUrlFilter::new(Some(2), None);
        assert!(keeps(&two, "http://a.test/a"));
        assert!(!keeps(&two, "http://a.test/a/a"));
    }

    #[test]
    fn long_urls_are_dropped() {
        let f = BasicUrlFilter::new(None, Some(30));
        assert!(keeps(&f, "http://a.test/0123456789"));
        assert!(!keeps(&f, "http://a.test/0123456789abcdefghijkl"));
    }

    #[test]
    fn no_limits_keep_everything() {
        let f = BasicUrlFilter::new(Some(1), None);
        assert!(keeps(&f, "http://a.test/a/a/a/a/a/a"));
    }
}
