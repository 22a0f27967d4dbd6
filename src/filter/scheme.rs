//! Keeps only some URL schemes.

use url::Url;

use super::UrlRule;

/// Keeps only URLs whose scheme is in an allowed list (`http` and `https` by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemeFilter {
    allowed: Vec<String>,
}

impl SchemeFilter {
    /// Keeps only the given schemes (compared case-insensitively).
    pub fn new<I, S>(schemes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        SchemeFilter {
            allowed: schemes
                .into_iter()
                .map(|s| s.as_ref().to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether `scheme` is allowed.
    pub fn allows(&self, scheme: &str) -> bool {
        self.allowed.iter().any(|s| s.eq_ignore_ascii_case(scheme))
    }
}

impl Default for SchemeFilter {
    /// Keeps `http` and `https`.
    fn default() -> Self {
        SchemeFilter::new(["http", "https"])
    }
}

impl UrlRule for SchemeFilter {
    fn keeps(&self, url: &Url) -> bool {
        self.allows(url.scheme())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::tests::keeps;

    #[test]
    fn default_keeps_http_and_https_only() {
        let f = SchemeFilter::default();
        assert!(keeps(&f, "http://example.com/"));
        assert!(keeps(&f, "HTTPS://example.com/"));
        assert!(!keeps(&f, "ftp://example.com/"));
        assert!(!keeps(&f, "mailto:a@example.com"));
        assert!(!keeps(&f, "javascript:void(0)"));
        assert!(!keeps(&f, "file:///etc/passwd"));
    }

    #[test]
    fn custom_schemes() {
        let f = SchemeFilter::new(vec!["FTP".to_string()]);
        assert!(keeps(&f, "ftp://example.com/"));
        assert!(!keeps(&f, "http://example.com/"));
        assert!(f.allows("ftp"));
    }
}
