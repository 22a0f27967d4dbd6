//! robots.txt as a server may send it: parsed for squall's agent, then asked about a URL, its
//! Crawl-delay and its Sitemap lines. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use squall::protocol::RobotsRules;

fuzz_target!(|body: &[u8]| {
    let rules = RobotsRules::parse("squall", body);
    if let Ok(url) = url::Url::parse("http://site.test/a/b?c=d") {
        let _ = rules.allowed(&url);
        let _ = rules.refusal(&url);
    }
    let _ = rules.crawl_delay();
    let _ = rules.sitemaps();
});
