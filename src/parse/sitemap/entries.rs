//! The filter every sitemap entry passes: an absolute http(s) URL on the sitemap's own host, up to
//! the entry cap.

use url::Url;

/// Validates locations and enforces the entry cap.
pub(super) struct EntryFilter {
    host: Option<String>,
    /// The most entries kept from one sitemap.
    pub(super) max_urls: usize,
}

impl EntryFilter {
    /// A filter for the entries of the sitemap at `location`, keeping at most `max_urls`.
    pub(super) fn new(location: &Url, max_urls: usize) -> Self {
        Self {
            host: location.host_str().map(str::to_owned),
            max_urls,
        }
    }

    /// Parses `loc` as an absolute http(s) URL on the sitemap's host.
    pub(super) fn accept(&self, loc: &str) -> Option<Url> {
        let url = Url::parse(loc.trim()).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        let host = url.host_str()?;
        if let Some(own) = &self.host
            && !host.eq_ignore_ascii_case(own)
        {
            return None;
        }
        Some(url)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use url::Url;

    use crate::parse::sitemap::test_support::{loc, parse, url_entries, urls};
    use crate::parse::sitemap::{SitemapLimits, parse_sitemap};

    #[test]
    fn relative_invalid_and_other_host_locs_are_skipped() {
        let body = r#"<urlset>
  <url><loc>/relative/path</loc></url>
  <url><loc>page.html</loc></url>
  <url><loc>http://[broken</loc></url>
  <url><loc>mailto:someone@www.example.com</loc></url>
  <url><loc>ftp://www.example.com/file</loc></url>
  <url><loc>https://evil.example.net/</loc></url>
  <url><loc>https://example.com/</loc></url>
  <url><loc></loc></url>
  <url></url>
  <url/>
  <url><loc>http://WWW.Example.COM:8080/ok</loc></url>
</urlset>"#;
        let s = parse(body).unwrap();
        assert_eq!(urls(&s), ["http://www.example.com:8080/ok"]);
        assert_eq!(s.skipped, 10);
    }

    #[test]
    fn location_without_host_disables_host_rule() {
        let loc = Url::parse("file:///tmp/sitemap.xml").unwrap();
        let body = "<urlset><url><loc>https://a.example/</loc></url></urlset>";
        let s = parse_sitemap(&loc, None, body.as_bytes(), &SitemapLimits::default()).unwrap();
        assert_eq!(urls(&s), ["https://a.example/"]);
    }

    #[test]
    fn max_urls_cap() {
        let body = format!(
            "<urlset>{}<url><loc>https://elsewhere.example/</loc></url></urlset>",
            url_entries("", 10)
        );
        let limits = SitemapLimits {
            max_urls: 3,
            ..SitemapLimits::default()
        };
        let s = parse_sitemap(&loc(), None, body.as_bytes(), &limits).unwrap();
        assert_eq!(
            urls(&s),
            [
                "https://www.example.com/0",
                "https://www.example.com/1",
                "https://www.example.com/2"
            ]
        );
        assert_eq!(s.skipped, 8);

        let text: String = (0..10)
            .map(|i| format!("https://www.example.com/{i}\n"))
            .collect();
        let s = parse_sitemap(&loc(), None, text.as_bytes(), &limits).unwrap();
        assert_eq!(s.urls.len(), 3);
        assert_eq!(s.skipped, 7);
    }
}
