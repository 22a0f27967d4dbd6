//! Helpers shared by the sitemap modules' unit tests.

#![allow(clippy::unwrap_used)]

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use url::Url;

use super::{Sitemap, SitemapError, SitemapLimits, parse_sitemap};

/// The location of the sitemaps under test.
pub(super) fn loc() -> Url {
    Url::parse("https://www.example.com/sitemap.xml").unwrap()
}

/// Parses `body` as a sitemap served from [`loc`] as `application/xml`.
pub(super) fn parse(body: &str) -> Result<Sitemap, SitemapError> {
    parse_as(&loc(), Some("application/xml"), body.as_bytes())
}

/// Parses `body` as a sitemap served from `location` as `content_type`, under the default limits.
pub(super) fn parse_as(
    location: &Url,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<Sitemap, SitemapError> {
    parse_sitemap(location, content_type, body, &SitemapLimits::default())
}

/// `count` `<url>` entries, the `i`th locating `https://www.example.com/{prefix}{i}`.
pub(super) fn url_entries(prefix: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("<url><loc>https://www.example.com/{prefix}{i}</loc></url>"))
        .collect()
}

/// `data`, gzip-compressed.
pub(super) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// The sitemap's page URLs.
pub(super) fn urls(s: &Sitemap) -> Vec<&str> {
    s.urls.iter().map(|u| u.url.as_str()).collect()
}

/// A `<urlset>` of three pages, with good and bad field values.
pub(super) const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>https://www.example.com/</loc>
    <lastmod>2024-05-01T10:00:00+00:00</lastmod>
    <changefreq>Daily</changefreq>
    <priority>0.8</priority>
  </url>
  <url>
    <loc>
      https://www.example.com/about
    </loc>
  </url>
  <url>
    <loc>https://www.example.com/bad-values</loc>
    <changefreq>sometimes</changefreq>
    <priority>7</priority>
    <lastmod>  </lastmod>
  </url>
</urlset>"#;
