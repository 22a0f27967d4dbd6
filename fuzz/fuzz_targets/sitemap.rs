//! A sitemap body as a server may send it (XML, text or gzip of either), parsed with and without a
//! content type; and the check that decides whether a body looks like one. Nothing may panic, and
//! no more entries are kept than the limit allows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use squall::parse::sitemap::{SitemapLimits, looks_like_sitemap, parse_sitemap};

fuzz_target!(|body: &[u8]| {
    let Ok(location) = url::Url::parse("http://site.test/sitemap.xml") else {
        return;
    };
    let limits = SitemapLimits {
        max_bytes: 1 << 20,
        max_urls: 100,
    };
    for content_type in [None, Some("application/xml"), Some("application/gzip")] {
        if let Ok(sitemap) = parse_sitemap(&location, content_type, body, &limits) {
            assert!(sitemap.len() <= limits.max_urls);
        }
    }
    let _ = looks_like_sitemap(&location, None, body);
});
