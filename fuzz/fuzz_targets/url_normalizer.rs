//! A link as a page may write it, resolved against a page URL and normalized as outlinks are:
//! nothing may panic, and normalizing a normalized URL changes nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use squall::filter::CanonicalUrlNormalizer;

fuzz_target!(|link: &str| {
    let Ok(base) = url::Url::parse("http://site.test/dir/page.html?x=1") else {
        return;
    };
    let Ok(url) = base.join(link) else {
        return;
    };
    let normalizer = CanonicalUrlNormalizer::new().remove_query_params(["utm_*", "sid"]);
    let once = normalizer.normalize(url);
    let twice = normalizer.normalize(once.clone());
    assert_eq!(once, twice, "normalizing again changed {once}");
});
