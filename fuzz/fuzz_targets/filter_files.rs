//! StormCrawler's filter files as a user may write them (`urlfilters.json`, `parsefilters.json`,
//! `jsoupfilters.json`): read into filters, or refused with an error; the URL filters read are
//! then asked about a URL. Nothing may panic.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use squall::filter_files::{FileKind, Locator, parse_filters, url_filters};
use squall::model::{CrawlUrl, Metadata};

/// A directory of its own for the files each run writes.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("squall-fuzz-filter-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    })
}

fuzz_target!(|text: &[u8]| {
    let dir = dir();
    let locator = Locator::new(vec![dir.clone()]);
    for (name, kind) in [
        ("urlfilters.json", FileKind::UrlFilters),
        ("parsefilters.json", FileKind::ParseFilters),
        ("jsoupfilters.json", FileKind::JSoupFilters),
    ] {
        if std::fs::write(dir.join(name), text).is_err() {
            return;
        }
        if kind == FileKind::UrlFilters {
            let Ok(filters) = url_filters(name, &locator) else {
                continue;
            };
            let (Ok(page), Ok(link)) = (
                url::Url::parse("http://site.test/a.html"),
                url::Url::parse("http://site.test/b?utm_source=x#top"),
            ) else {
                return;
            };
            let source = CrawlUrl::new(page);
            for filter in &filters {
                let _ = filter.filter(Some(&source), link.clone(), &Metadata::new());
            }
        } else {
            let _ = parse_filters(kind, name, &locator);
        }
    }
});
