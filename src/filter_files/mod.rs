//! StormCrawler's filter files, as they are: `urlfilters.json`, `parsefilters.json` and
//! `jsoupfilters.json`, with the rule files they name.
//!
//! A filter file holds, under a top-level key naming its chain
//! (`org.apache.stormcrawler.filtering.URLFilters`, or with StormCrawler 2.x's prefix
//! `com.digitalpebble.stormcrawler.`), a list of filters, each a `class`, a `name` and `params`.
//! Each class becomes the squall filter that does the same job:
//!
//! | StormCrawler class | squall |
//! |---|---|
//! | `filtering.basic.BasicURLFilter` | [`BasicUrlFilter`](crate::filter::BasicUrlFilter) |
//! | `filtering.basic.BasicURLNormalizer` | [`BasicUrlNormalizer`](crate::filter::BasicUrlNormalizer) |
//! | `filtering.basic.SelfURLFilter` | [`SelfLinkFilter`](crate::filter::SelfLinkFilter) |
//! | `filtering.depth.MaxDepthFilter` | [`MaxDepthFilter`](crate::filter::MaxDepthFilter) |
//! | `filtering.host.HostURLFilter` | [`ScopeFilter`](crate::filter::ScopeFilter) |
//! | `filtering.metadata.MetadataFilter` | [`MetadataFilter`](crate::filter::MetadataFilter) |
//! | `filtering.regex.RegexURLFilter` | [`RegexUrlFilter`](crate::filter::RegexUrlFilter) |
//! | `filtering.regex.RegexURLNormalizer` | [`RegexUrlNormalizer`](crate::filter::RegexUrlNormalizer) |
//! | `filtering.sitemap.SitemapFilter` | [`SitemapFilter`](crate::filter::SitemapFilter) |
//! | `filtering.robots.RobotsFilter` | nothing: the fetcher checks robots.txt before every fetch |
//! | `parse.filter.XPathFilter`, `jsoup.XPathFilter` | [`ExtractFilter`](crate::parse::ExtractFilter), first match per key |
//! | `parse.filter.LinkParseFilter`, `jsoup.LinkParseFilter` | [`LinkFilter`](crate::parse::LinkFilter) |
//! | `parse.filter.DomainParseFilter` | [`DomainFilter`](crate::parse::DomainFilter) |
//! | `parse.filter.MimeTypeNormalization` | [`FormatFilter`](crate::parse::FormatFilter) |
//! | `parse.filter.CommaSeparatedToMultivaluedMetadata` | [`CommaSplitFilter`](crate::parse::CommaSplitFilter) |
//!
//! Any other class, an unknown param, a param of the wrong type, a rule file found nowhere or a
//! regular expression that does not compile is a [`FilterFileError`] naming the file and what is
//! wrong. Regular expressions are those of the `regex` crate: Java's look-arounds and
//! back-references are refused. XPath expressions are translated from StormCrawler's dialects
//! (`//TITLE/allText()`) to XPath 1.0 on squall's DOM.
//!
//! Files are found by a [`Locator`]: as given, then next to the file naming them, then next to
//! each config file read and in its `src/main/resources/`, then in `src/main/resources/`. When `default-regex-normalizers.xml`
//! (which StormCrawler ships in its jar) is found nowhere, squall's own is used.

mod chain;
mod error;
mod locate;
mod params;
mod parse_classes;
mod rule_files;
mod url_classes;
mod xpath_dialect;

pub use chain::{CLASS_PREFIXES, FileKind};
pub use error::FilterFileError;
pub use locate::Locator;
pub use rule_files::{DEFAULT_NORMALIZERS, DEFAULT_NORMALIZERS_NAME};

use std::path::PathBuf;
use std::sync::Arc;

use chain::{Entry, entries};
use parse_classes::{JSOUP_CLASSES, PARSE_CLASSES, parse_filter};
use url_classes::{FileContext, URL_CLASSES, url_filter};

use crate::filter::UrlFilter;
use crate::parse::ParseFilter;

/// The URL filters of the `urlfilters.json` named `name`, in the file's order.
pub fn url_filters(
    name: &str,
    locator: &Locator,
) -> Result<Vec<Arc<dyn UrlFilter>>, FilterFileError> {
    let (path, list) = read(FileKind::UrlFilters, name, locator)?;
    let shown = path.display().to_string();
    let file = FileContext {
        path: &shown,
        dir: path.parent(),
        locator,
    };
    list.iter()
        .map(|entry| {
            url_filter(entry, &file)?
                .ok_or_else(|| unsupported(&shown, entry, FileKind::UrlFilters))
        })
        .collect()
}

/// The parse filters of the `parsefilters.json` (`kind` [`FileKind::ParseFilters`]) or
/// `jsoupfilters.json` ([`FileKind::JSoupFilters`]) named `name`, in the file's order.
pub fn parse_filters(
    kind: FileKind,
    name: &str,
    locator: &Locator,
) -> Result<Vec<Arc<dyn ParseFilter>>, FilterFileError> {
    let (path, list) = read(kind, name, locator)?;
    let shown = path.display().to_string();
    list.iter()
        .map(|entry| {
            parse_filter(entry, kind, &shown)?.ok_or_else(|| unsupported(&shown, entry, kind))
        })
        .collect()
}

/// The filters of the file `name`, found and read.
fn read(
    kind: FileKind,
    name: &str,
    locator: &Locator,
) -> Result<(PathBuf, Vec<Entry>), FilterFileError> {
    let (path, text) = locator.read(kind.key(), name, None)?;
    let list = entries(&path.display().to_string(), &text, kind)?;
    Ok((path, list))
}

/// The error for a class squall does not implement in a file of `kind`.
fn unsupported(path: &str, entry: &Entry, kind: FileKind) -> FilterFileError {
    let supported: &[&str] = match kind {
        FileKind::UrlFilters => &URL_CLASSES,
        FileKind::ParseFilters => &PARSE_CLASSES,
        FileKind::JSoupFilters => &JSOUP_CLASSES,
    };
    FilterFileError::UnsupportedClass {
        path: path.to_string(),
        class: entry.class.clone(),
        chain: kind.file_name(),
        supported: supported.join(", "),
    }
}

#[cfg(test)]
mod tests;
