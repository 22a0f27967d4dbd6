//! Content sniffing: whether a response looks like a sitemap, from the root element or first line
//! of its body, or failing that from its content type and URL path.

use std::borrow::Cow;

use url::Url;

use super::decode::{gunzip_prefix, is_gzip, to_text};

/// How many bytes of a body [`looks_like_sitemap`](super::looks_like_sitemap) inspects (after
/// decompression).
const SNIFF_WINDOW: usize = 8 * 1024;

/// Verdict of inspecting the start of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sniff {
    /// The body is a sitemap.
    Yes,
    /// The body is something else.
    No,
    /// The body does not tell (empty, or no root element within the window).
    Unknown,
}

/// Inspects the first [`SNIFF_WINDOW`] bytes of `body` (decompressed if gzipped): a `<urlset>` or
/// `<sitemapindex>` root or an http(s) URL on the first line says yes, any other root or text no.
pub(super) fn sniff_body(body: &[u8]) -> Sniff {
    let prefix: Cow<'_, [u8]> = if is_gzip(body) {
        let out = gunzip_prefix(body, SNIFF_WINDOW);
        if out.is_empty() {
            return Sniff::No;
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(body.get(..SNIFF_WINDOW).unwrap_or(body))
    };
    let truncated = prefix.len() >= SNIFF_WINDOW;
    let text = to_text(&prefix);
    let text = text.trim_start();
    if text.is_empty() {
        return if truncated { Sniff::No } else { Sniff::Unknown };
    }
    if text.starts_with('<') {
        return match xml_root_name(text) {
            Some(name) => {
                let local = name.rsplit(':').next().unwrap_or(name);
                if local == "urlset" || local == "sitemapindex" {
                    Sniff::Yes
                } else {
                    Sniff::No
                }
            }
            None => Sniff::Unknown,
        };
    }
    let line = text.lines().next().unwrap_or_default().trim();
    match Url::parse(line) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Sniff::Yes,
        _ => Sniff::No,
    }
}

/// Name of the first element in `text`, skipping the XML declaration,
/// processing instructions, comments and a doctype. `None` when `text` ends
/// before an element starts.
fn xml_root_name(mut text: &str) -> Option<&str> {
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix("<?") {
            text = &rest[rest.find("?>")? + 2..];
        } else if let Some(rest) = text.strip_prefix("<!--") {
            text = &rest[rest.find("-->")? + 3..];
        } else if let Some(rest) = text.strip_prefix("<!") {
            // A doctype, possibly with an internal subset in brackets.
            let close = match (rest.find('['), rest.find('>')) {
                (Some(open), Some(gt)) if open < gt => open + rest[open..].find("]")?,
                _ => 0,
            };
            text = &rest[close + rest[close..].find('>')? + 1..];
        } else if let Some(rest) = text.strip_prefix('<') {
            let end = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
            return Some(&rest[..end]);
        } else {
            // Stray text before the root: skip to the next tag.
            text = &text[text.find('<')?..];
        }
    }
}

/// MIME type without parameters, lower-cased.
fn mime_essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

pub(super) fn is_xml_type(content_type: &str) -> bool {
    matches!(
        mime_essence(content_type).as_str(),
        "application/xml" | "text/xml" | "application/x-xml"
    )
}

pub(super) fn is_gzip_type(content_type: &str) -> bool {
    matches!(
        mime_essence(content_type).as_str(),
        "application/gzip"
            | "application/x-gzip"
            | "application/gzipped"
            | "application/gzip-compressed"
            | "application/x-gzip-compressed"
            | "application/x-gunzip"
            | "gzip/document"
    )
}

pub(super) fn has_sitemap_path(location: &Url) -> bool {
    let path = location.path().to_ascii_lowercase();
    let file = path.rsplit('/').next().unwrap_or_default();
    path.ends_with(".xml")
        || path.ends_with(".xml.gz")
        || (file.starts_with("sitemap") && (file.ends_with(".txt") || file.ends_with(".txt.gz")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use url::Url;

    use super::SNIFF_WINDOW;
    use crate::parse::sitemap::looks_like_sitemap;
    use crate::parse::sitemap::test_support::{URLSET, gzip};

    #[test]
    fn looks_like_sitemap_by_body() {
        let any = Url::parse("https://www.example.com/whatever").unwrap();
        assert!(looks_like_sitemap(&any, None, URLSET.as_bytes()));
        assert!(looks_like_sitemap(
            &any,
            Some("text/html"),
            b"\xef\xbb\xbf<?xml version='1.0'?>\n<!-- generated -->\n<!DOCTYPE x [<!ENTITY a 'b'>]>\n<sitemapindex>"
        ));
        assert!(looks_like_sitemap(&any, None, b"<sm:urlset xmlns:sm='x'>"));
        assert!(looks_like_sitemap(&any, None, &gzip(URLSET.as_bytes())));
        assert!(looks_like_sitemap(
            &any,
            None,
            b"https://www.example.com/a\nhttps://www.example.com/b"
        ));

        // Body says no, whatever the metadata.
        let xml_loc = Url::parse("https://www.example.com/feed.xml").unwrap();
        assert!(!looks_like_sitemap(
            &xml_loc,
            Some("application/xml"),
            b"<rss version='2.0'>"
        ));
        assert!(!looks_like_sitemap(
            &xml_loc,
            Some("text/xml"),
            b"<!DOCTYPE html><html>"
        ));
        assert!(!looks_like_sitemap(
            &any,
            Some("text/plain"),
            b"User-agent: *\nDisallow:"
        ));
        assert!(!looks_like_sitemap(&any, None, &[0x1f, 0x8b, 0, 0]));
        assert!(!looks_like_sitemap(
            &any,
            Some("application/xml"),
            &[b' '; 2 * SNIFF_WINDOW]
        ));
    }

    #[test]
    fn looks_like_sitemap_by_metadata() {
        let u = |s: &str| Url::parse(s).unwrap();
        // Empty body: decided by content type and URL.
        let cases: [(&str, Option<&str>, bool); 10] = [
            (
                "https://e.com/x",
                Some("application/xml; charset=UTF-8"),
                true,
            ),
            ("https://e.com/x", Some("Text/XML"), true),
            ("https://e.com/x", Some("application/x-gzip"), true),
            ("https://e.com/sitemap.xml", None, true),
            ("https://e.com/a/b.XML.gz?x=1", None, true),
            ("https://e.com/sitemap-2.txt", Some("text/plain"), true),
            ("https://e.com/sitemap_en.txt.gz", None, true),
            ("https://e.com/robots.txt", Some("text/plain"), false),
            ("https://e.com/page.html", Some("text/html"), false),
            ("https://e.com/", None, false),
        ];
        for (location, content_type, expected) in cases {
            assert_eq!(
                looks_like_sitemap(&u(location), content_type, b""),
                expected,
                "{location} {content_type:?}"
            );
        }
        // Root element beyond the sniff window: metadata decides.
        let mut long = b"<!--".to_vec();
        long.extend(vec![b'x'; SNIFF_WINDOW]);
        long.extend_from_slice(b"--><urlset>");
        assert!(looks_like_sitemap(&u("https://e.com/s.xml"), None, &long));
        assert!(!looks_like_sitemap(&u("https://e.com/s"), None, &long));
    }
}
