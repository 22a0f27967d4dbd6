//! Plain-text sitemaps: one absolute URL per line.

use url::Url;

use super::entries::EntryFilter;
use super::{Sitemap, SitemapError, SitemapKind, SitemapUrl};

/// Reads a plain-text sitemap; an error when no line is an absolute URL with a host. When the
/// content is `cut` short, its last line may be incomplete and is left out (with no complete line,
/// the sitemap is empty).
pub(super) fn parse_text(
    content: &str,
    filter: EntryFilter,
    cut: bool,
) -> Result<Sitemap, SitemapError> {
    let mut sitemap = Sitemap::new(SitemapKind::Text);
    let content = match content.rfind('\n') {
        _ if !cut => content,
        Some(end) => content.get(..end).unwrap_or_default(),
        None => return Ok(sitemap),
    };
    let mut saw_url = false;
    for line in content.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if sitemap.urls.len() >= filter.max_urls {
            sitemap.skipped += 1;
            continue;
        }
        match filter.accept(line) {
            Some(url) => {
                saw_url = true;
                sitemap.urls.push(SitemapUrl::bare(url));
            }
            None => {
                saw_url |= Url::parse(line).is_ok_and(|u| u.has_host());
                sitemap.skipped += 1;
            }
        }
    }
    if saw_url {
        Ok(sitemap)
    } else {
        Err(SitemapError::NotASitemap(
            "plain-text body contains no absolute URL".to_owned(),
        ))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use url::Url;

    use crate::parse::sitemap::test_support::{URLSET, parse, parse_as, urls};
    use crate::parse::sitemap::{SitemapError, SitemapKind};

    #[test]
    fn text_sitemap() {
        let body = "https://www.example.com/a\r\n\n   \nhttps://www.example.com/b  \n\
                    not a url\n/relative\nhttps://other.example.org/x\nftp://www.example.com/f\n";
        let loc = Url::parse("https://www.example.com/sitemap.txt").unwrap();
        let s = parse_as(&loc, Some("text/plain; charset=utf-8"), body.as_bytes()).unwrap();
        assert_eq!(s.kind, SitemapKind::Text);
        assert_eq!(
            urls(&s),
            ["https://www.example.com/a", "https://www.example.com/b"]
        );
        assert_eq!(s.skipped, 4);
        // Content type does not matter: a body not starting with '<' is text.
        let s2 = parse_as(&loc, Some("application/xml"), body.as_bytes()).unwrap();
        assert_eq!(s2, s);
        // A text/plain body that is an XML sitemap is read as XML.
        let s3 = parse_as(&loc, Some("text/plain"), URLSET.as_bytes()).unwrap();
        assert_eq!(s3.kind, SitemapKind::UrlSet);
    }

    #[test]
    fn text_without_urls_is_not_a_sitemap() {
        let err = parse("User-agent: *\nDisallow: /\n").unwrap_err();
        assert!(matches!(err, SitemapError::NotASitemap(_)), "{err:?}");
        let err = parse("   \n\t").unwrap_err();
        assert_eq!(err, SitemapError::NotASitemap("empty body".into()));
        assert!(parse("").is_err());
    }
}
