//! Sitemap parsing following the [sitemaps.org](https://www.sitemaps.org/protocol.html)
//! protocol, in the spirit of crawler-commons' `SiteMapParser`.
//!
//! Three document shapes are understood:
//!
//! * XML `<urlset>` documents listing pages (`<url><loc>` with optional
//!   `<lastmod>`, `<changefreq>` and `<priority>`),
//! * XML `<sitemapindex>` documents listing further sitemaps (`<sitemap><loc>`),
//! * plain-text sitemaps with one absolute URL per line.
//!
//! Bodies may be gzip-compressed (detected by the magic bytes, whatever the
//! headers say). The decompressed size is capped by [`SitemapLimits::max_bytes`]:
//! only the first `max_bytes` are read, so a gzip bomb stops at the cap instead
//! of exhausting memory, and a sitemap over the cap keeps the entries complete
//! within it, its [`Sitemap::cut`] saying so. XML is read with a streaming
//! parser; no DOM is built.
//!
//! Entries are filtered loosely after the sitemaps.org "same location" rule:
//! only absolute `http`/`https` URLs on the same host as the sitemap itself are
//! kept. Rejected entries are counted in [`Sitemap::skipped`], never reported
//! as errors. RSS and Atom feeds are not handled.

mod decode;
mod entries;
mod sniff;
#[cfg(test)]
mod test_support;
mod text;
mod xml;

use url::Url;

use decode::{decode_body, to_text};
use entries::EntryFilter;
use sniff::{Sniff, has_sitemap_path, is_gzip_type, is_xml_type, sniff_body};
use text::parse_text;
use xml::parse_xml;

/// Default cap on the (decompressed) size of a sitemap body: 50 MiB, as in the protocol.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024 * 1024;

/// Default cap on the number of entries taken from one sitemap: 50 000, as in the protocol.
pub const DEFAULT_MAX_URLS: usize = 50_000;

/// What a sitemap document lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Sitemap {
    /// The shape of the document.
    pub kind: SitemapKind,
    /// Pages listed by a `<urlset>` or a plain-text sitemap, in document order.
    pub urls: Vec<SitemapUrl>,
    /// Further sitemaps listed by a `<sitemapindex>`, in document order.
    pub sitemaps: Vec<Url>,
    /// Entries that were dropped: missing, invalid, relative or non-http(s)
    /// locations, locations on another host than the sitemap, and entries
    /// beyond [`SitemapLimits::max_urls`].
    pub skipped: usize,
    /// Set when only the start of the document was read (it is over the size cap, or its body
    /// was cut short): the entries are those complete before the cut.
    pub cut: Option<SitemapCut>,
}

impl Sitemap {
    fn new(kind: SitemapKind) -> Self {
        Self {
            kind,
            urls: Vec::new(),
            sitemaps: Vec::new(),
            skipped: 0,
            cut: None,
        }
    }

    /// Number of entries kept (pages plus sub-sitemaps).
    pub fn len(&self) -> usize {
        self.urls.len() + self.sitemaps.len()
    }

    /// Whether no entry was kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The shape of a sitemap document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SitemapKind {
    /// An XML `<urlset>`: entries are pages, found in [`Sitemap::urls`].
    UrlSet,
    /// An XML `<sitemapindex>`: entries are sitemaps, found in [`Sitemap::sitemaps`].
    Index,
    /// A plain-text sitemap: one page URL per line, found in [`Sitemap::urls`].
    Text,
}

/// One page listed by a sitemap.
#[derive(Debug, Clone, PartialEq)]
pub struct SitemapUrl {
    /// The page's absolute URL.
    pub url: Url,
    /// The `<lastmod>` value as written (trimmed), if present and non-empty.
    /// It is not validated; W3C datetime is expected but not enforced.
    pub lastmod: Option<String>,
    /// The `<changefreq>` value, lower-cased, if it is one of the protocol's
    /// values (`always`, `hourly`, `daily`, `weekly`, `monthly`, `yearly`, `never`).
    pub changefreq: Option<String>,
    /// The `<priority>` value, if it is a number between 0.0 and 1.0.
    pub priority: Option<f32>,
}

impl SitemapUrl {
    fn bare(url: Url) -> Self {
        Self {
            url,
            lastmod: None,
            changefreq: None,
            priority: None,
        }
    }
}

/// Why only the start of a sitemap was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SitemapCut {
    /// The body (after decompression) is larger than [`SitemapLimits::max_bytes`]: its first
    /// `limit` bytes were read.
    SizeLimit {
        /// The cap, in bytes: as many bytes were read.
        limit: usize,
    },
    /// The body ends before the document does (cut by a download cap, or a gzip stream that
    /// stops short): its `bytes` bytes (after decompression) were read.
    Truncated {
        /// How many bytes were read.
        bytes: usize,
    },
}

impl SitemapCut {
    /// How many bytes (after decompression) were read.
    pub fn bytes_read(self) -> usize {
        match self {
            SitemapCut::SizeLimit { limit } => limit,
            SitemapCut::Truncated { bytes } => bytes,
        }
    }

    /// The error for a cut sitemap of which no entry was read.
    fn nothing_read(self) -> SitemapError {
        match self {
            SitemapCut::SizeLimit { limit } => SitemapError::TooLarge { limit },
            SitemapCut::Truncated { bytes } => SitemapError::Truncated { bytes },
        }
    }
}

impl std::fmt::Display for SitemapCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SitemapCut::SizeLimit { limit } => write!(
                f,
                "sitemap over the size limit of {limit} bytes: only its first {limit} bytes were read"
            ),
            SitemapCut::Truncated { bytes } => {
                write!(
                    f,
                    "sitemap body cut short: only its first {bytes} bytes were read"
                )
            }
        }
    }
}

/// Resource caps applied while parsing a sitemap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SitemapLimits {
    /// Maximum body size in bytes, measured after gzip decompression
    /// (default [`DEFAULT_MAX_BYTES`], 50 MiB).
    pub max_bytes: usize,
    /// Maximum number of entries kept; further ones are counted as skipped
    /// (default [`DEFAULT_MAX_URLS`], 50 000).
    pub max_urls: usize,
}

impl Default for SitemapLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_urls: DEFAULT_MAX_URLS,
        }
    }
}

/// Why a body could not be read as a sitemap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SitemapError {
    /// The body starts with the gzip magic bytes but does not decompress.
    #[error("corrupt gzip data in sitemap: {0}")]
    Compressed(String),
    /// The body (after decompression) is larger than the configured limit, and no entry is
    /// complete within its first `limit` bytes.
    #[error("sitemap exceeds the size limit of {limit} bytes, and no entry is complete within it")]
    TooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
    /// The body was cut short, and no entry is complete within the `bytes` that arrived.
    #[error("sitemap body cut short after {bytes} bytes, before its first complete entry")]
    Truncated {
        /// How many bytes (after decompression) were read.
        bytes: usize,
    },
    /// The body is not a sitemap: empty, malformed XML with no entry, an XML
    /// document whose root is neither `<urlset>` nor `<sitemapindex>`, or text
    /// without any URL.
    #[error("not a sitemap: {0}")]
    NotASitemap(String),
}

/// Parses a sitemap.
///
/// `location` is the sitemap's own URL: entries whose host differs from its
/// host are dropped (when `location` has no host, e.g. a `file:` URL, this
/// check is skipped). `content_type` is the HTTP `Content-Type` header, if any,
/// and `body` the raw response bytes, possibly gzip-compressed.
///
/// The body decides the format, because servers often mislabel sitemaps: it is
/// parsed as XML when its first non-blank character (after a byte-order mark)
/// is `<`, and as a plain-text sitemap otherwise. Relative locations are not
/// resolved against `location`; like other invalid locations they are counted
/// in [`Sitemap::skipped`].
///
/// Malformed XML keeps the entries read before the error; it is only an error
/// when nothing was found. A body over [`SitemapLimits::max_bytes`] (after
/// decompression) is read up to the cap: the entries complete within it are
/// kept and [`Sitemap::cut`] says so; when none is, the error is
/// [`SitemapError::TooLarge`].
pub fn parse_sitemap(
    location: &Url,
    content_type: Option<&str>,
    body: &[u8],
    limits: &SitemapLimits,
) -> Result<Sitemap, SitemapError> {
    parse_body(location, content_type, body, limits, false)
}

/// Parses a body known to be only the start of a sitemap, such as one cut by a download size cap:
/// as [`parse_sitemap`], but a last text line or XML entry that may be incomplete is dropped, and
/// [`Sitemap::cut`] is always set (when no entry is complete, the error is
/// [`SitemapError::Truncated`], or [`SitemapError::TooLarge`] if the body is over the cap too).
pub fn parse_sitemap_prefix(
    location: &Url,
    content_type: Option<&str>,
    body: &[u8],
    limits: &SitemapLimits,
) -> Result<Sitemap, SitemapError> {
    parse_body(location, content_type, body, limits, true)
}

/// [`parse_sitemap`], told whether the body is known to be cut short.
fn parse_body(
    location: &Url,
    content_type: Option<&str>,
    body: &[u8],
    limits: &SitemapLimits,
    cut_short: bool,
) -> Result<Sitemap, SitemapError> {
    let decoded = decode_body(body, limits.max_bytes, cut_short)?;
    let text = to_text(&decoded.bytes);
    let content = text.trim_start();
    if content.is_empty() {
        return Err(match decoded.cut {
            Some(cut) => cut.nothing_read(),
            None => SitemapError::NotASitemap("empty body".to_owned()),
        });
    }
    let filter = EntryFilter::new(location, limits.max_urls);
    let parsed = if content.starts_with('<') {
        parse_xml(content, filter, content_type)
    } else {
        parse_text(content, filter, decoded.cut.is_some())
    };
    let Some(cut) = decoded.cut else {
        return parsed;
    };
    match parsed {
        Ok(sitemap) if sitemap.is_empty() && sitemap.skipped == 0 => Err(cut.nothing_read()),
        Ok(sitemap) => Ok(Sitemap {
            cut: Some(cut),
            ..sitemap
        }),
        Err(SitemapError::NotASitemap(why)) => {
            Err(SitemapError::NotASitemap(format!("{why} ({cut})")))
        }
        Err(other) => Err(other),
    }
}

/// Whether a response looks like a sitemap, so a crawler can decide to parse it.
///
/// The start of the body is inspected first (decompressing a gzip prefix if
/// needed): an XML document whose root element is `<urlset>` or
/// `<sitemapindex>`, or a text whose first line is an absolute http(s) URL,
/// looks like a sitemap; any other recognisable XML root (`<html>`, `<rss>`,
/// ...) or text does not. When the body gives no answer (it is empty, or its
/// root element is not within the first 8 KiB), the decision falls back on the
/// content type (XML or gzip types) and the URL (path ending in `.xml`,
/// `.xml.gz`, or a `sitemap*.txt` / `sitemap*.txt.gz` file name). So calling it
/// with an empty body answers from the metadata alone.
pub fn looks_like_sitemap(location: &Url, content_type: Option<&str>, body: &[u8]) -> bool {
    match sniff_body(body) {
        Sniff::Yes => true,
        Sniff::No => false,
        Sniff::Unknown => {
            content_type.is_some_and(|ct| is_xml_type(ct) || is_gzip_type(ct))
                || has_sitemap_path(location)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::test_support::{gzip, loc, parse};
    use super::*;

    #[test]
    fn limits_default() {
        let l = SitemapLimits::default();
        assert_eq!(l.max_bytes, 50 * 1024 * 1024);
        assert_eq!(l.max_urls, 50_000);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn never_panics_on_arbitrary_bytes(
                body in proptest::collection::vec(any::<u8>(), 0..512),
                max_urls in 0usize..5,
            ) {
                let limits = SitemapLimits { max_bytes: 4096, max_urls };
                if let Ok(s) = parse_sitemap(&loc(), None, &body, &limits) {
                    prop_assert!(s.len() <= max_urls);
                }
                let _ = looks_like_sitemap(&loc(), None, &body);
            }

            #[test]
            fn never_panics_on_xmlish_input(body in "[<>/a-z:&;#x0-9 \\[\\]!?-]{0,200}") {
                let wrapped = format!("<urlset><url><loc>{body}");
                let _ = parse(&wrapped);
                let _ = parse(&body);
                let _ = looks_like_sitemap(&loc(), None, body.as_bytes());
            }

            #[test]
            fn round_trips_generated_urlsets(
                paths in proptest::collection::vec("[a-zA-Z0-9_.~-]{0,20}", 0..30),
                compress in any::<bool>(),
            ) {
                let mut body = String::from(
                    "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
                );
                for p in &paths {
                    body.push_str(&format!("<url><loc> https://www.example.com/{p}?a=1&amp;b=2 </loc></url>"));
                }
                body.push_str("</urlset>");
                let bytes = if compress { gzip(body.as_bytes()) } else { body.into_bytes() };
                let s = parse_sitemap(&loc(), None, &bytes, &SitemapLimits::default()).unwrap();
                let want: Vec<String> = paths
                    .iter()
                    .map(|p| Url::parse(&format!("https://www.example.com/{p}?a=1&b=2")).unwrap().to_string())
                    .collect();
                let got: Vec<String> = s.urls.iter().map(|u| u.url.to_string()).collect();
                prop_assert_eq!(got, want);
                prop_assert_eq!(s.skipped, 0);
            }
        }
    }
}
