//! What a page says about itself: its robots directives (`<meta name="robots">` and the
//! `X-Robots-Tag` header) and its canonical URL.

use url::Url;

/// The robots directives a crawler acts on, from a `<meta name="robots">` content or `X-Robots-Tag`
/// header values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RobotsDirectives {
    /// `noindex` or `none`: the page asks not to be indexed.
    pub noindex: bool,
    /// `nofollow` or `none`: the page asks that its links not be followed.
    pub nofollow: bool,
}

impl RobotsDirectives {
    /// The directives of `X-Robots-Tag` header values.
    pub fn from_header(values: &[String]) -> Self {
        let mut directives = RobotsDirectives::default();
        for value in values {
            directives.add(value);
        }
        directives
    }

    /// Adds the directives of one value. Directives are separated by commas (spaces are tolerated);
    /// a user-agent prefix (`googlebot: noindex`) is read as applying to every crawler, and unknown
    /// directives (`unavailable_after: ...`, `noarchive`) are ignored.
    pub fn add(&mut self, value: &str) {
        let tokens = value.split(|c: char| c == ',' || c == ':' || c.is_ascii_whitespace());
        for token in tokens {
            if token.eq_ignore_ascii_case("noindex") {
                self.noindex = true;
            } else if token.eq_ignore_ascii_case("nofollow") {
                self.nofollow = true;
            } else if token.eq_ignore_ascii_case("none") {
                self.noindex = true;
                self.nofollow = true;
            }
        }
    }
}

/// The absolute URL of a `<link rel="canonical">` `href`, resolved against the page's base; `None`
/// when there is none, it does not resolve, or it is not an http(s) URL.
pub(crate) fn canonical_url(base: &Url, href: Option<&str>) -> Option<Url> {
    let href = href?.trim();
    if href.is_empty() {
        return None;
    }
    let url = base.join(href).ok()?;
    matches!(url.scheme(), "http" | "https").then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_directives_in_meta_and_header_form() {
        let header = |values: &[&str]| {
            RobotsDirectives::from_header(&values.iter().map(|v| v.to_string()).collect::<Vec<_>>())
        };
        let both = RobotsDirectives {
            noindex: true,
            nofollow: true,
        };
        assert_eq!(header(&["NoIndex, NOFOLLOW"]), both);
        assert_eq!(header(&["none"]), both);
        assert_eq!(header(&["googlebot: noindex", "otherbot: nofollow"]), both);
        assert!(header(&["noindex"]).noindex && !header(&["noindex"]).nofollow);
        let unrelated = header(&["noarchive, unavailable_after: 25 Jun 2010 15:00:00 PST"]);
        assert_eq!(unrelated, RobotsDirectives::default());
        assert_eq!(
            header(&["nonexistent, indexed"]),
            RobotsDirectives::default()
        );
        assert_eq!(header(&[]), RobotsDirectives::default());
    }

    #[test]
    fn canonical_resolved_and_http_only() {
        let base = Url::parse("https://a.test/dir/page.html").expect("test URL");
        let resolved = |href| canonical_url(&base, Some(href)).map(|u| u.to_string());
        assert_eq!(
            resolved("other.html").as_deref(),
            Some("https://a.test/dir/other.html")
        );
        assert_eq!(
            resolved(" /c?x=1 ").as_deref(),
            Some("https://a.test/c?x=1")
        );
        assert_eq!(
            resolved("http://b.test/").as_deref(),
            Some("http://b.test/")
        );
        assert_eq!(resolved("ftp://a.test/file"), None);
        assert_eq!(resolved("javascript:void(0)"), None);
        assert_eq!(resolved("http://[broken"), None);
        assert_eq!(resolved(""), None);
        assert_eq!(canonical_url(&base, None), None);
    }
}
