//! Parse filters that record or reshape page metadata: StormCrawler's DomainParseFilter,
//! MimeTypeNormalization and CommaSeparatedToMultivaluedMetadata.

use url::Url;

use super::{ParseFilter, ParseResult};
use crate::model::{Metadata, PartitionMode, partition_key};

/// Metadata key holding the type of the parsed content, as StormCrawler's parser records it.
pub const PARSE_CONTENT_TYPE: &str = "parse.Content-Type";

/// Records the page's registrable domain (or, `by_host`, its host) under a metadata key
/// (`domain` by default), as StormCrawler's `DomainParseFilter` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainFilter {
    key: String,
    by_host: bool,
}

impl DomainFilter {
    /// Records the domain (or the host, `by_host`) under `key`.
    pub fn new(key: impl Into<String>, by_host: bool) -> Self {
        DomainFilter {
            key: key.into(),
            by_host,
        }
    }
}

impl ParseFilter for DomainFilter {
    fn filter(&self, url: &Url, _body: &[u8], parse: &mut ParseResult) {
        let mode = if self.by_host {
            PartitionMode::ByHost
        } else {
            PartitionMode::ByDomain
        };
        let value = partition_key(url, &Metadata::new(), mode);
        parse.metadata.set(self.key.as_str(), value);
    }
}

/// Records the page's format under the metadata key `format`, from its content type, as
/// StormCrawler's `MimeTypeNormalization` does: `html`, `pdf`, `word`, `excel`, `powerpoint`,
/// `video`, `image`, `audio`, `other`, or `unknown`. The type is read from `parse.Content-Type`
/// when a filter before set it; parse filters only see pages parsed as HTML, so it is `html`
/// otherwise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FormatFilter;

/// The format StormCrawler's MimeTypeNormalization gives a content type.
pub fn format_of(content_type: &str) -> &'static str {
    let lower = content_type.trim().to_ascii_lowercase();
    let contains = ["html", "pdf", "word", "excel", "powerpoint"];
    let starts = [
        ("video/", "video"),
        ("image/", "image"),
        ("audio/", "audio"),
    ];
    if lower.is_empty() {
        return "unknown";
    }
    if let Some(found) = contains.into_iter().find(|kind| lower.contains(kind)) {
        return found;
    }
    starts
        .into_iter()
        .find(|(prefix, _)| lower.starts_with(prefix))
        .map_or("other", |(_, format)| format)
}

impl ParseFilter for FormatFilter {
    fn filter(&self, _url: &Url, _body: &[u8], parse: &mut ParseResult) {
        let content_type = parse
            .metadata
            .first(PARSE_CONTENT_TYPE)
            .unwrap_or("text/html");
        let format = format_of(content_type);
        parse.metadata.set("format", format);
    }
}

/// Splits the first value of some metadata keys on commas (and the spaces around them) into
/// several values, as StormCrawler's `CommaSeparatedToMultivaluedMetadata` does for keyword lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommaSplitFilter {
    keys: Vec<String>,
}

impl CommaSplitFilter {
    /// Splits the values of these keys.
    pub fn new(keys: Vec<String>) -> Self {
        CommaSplitFilter { keys }
    }
}

impl ParseFilter for CommaSplitFilter {
    fn filter(&self, _url: &Url, _body: &[u8], parse: &mut ParseResult) {
        for key in &self.keys {
            let Some(first) = parse.metadata.first(key) else {
                continue;
            };
            let mut values: Vec<String> = first
                .split(',')
                .map(|token| token.trim_matches(' ').to_string())
                .collect();
            // As Java's split, no empty values at the end.
            while values.last().is_some_and(String::is_empty) {
                values.pop();
            }
            parse.metadata.set_values(key.as_str(), values);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(filter: &dyn ParseFilter, url: &str, parse: &mut ParseResult) {
        filter.filter(&Url::parse(url).expect("test URL"), b"", parse);
    }

    #[test]
    fn domain_or_host_is_recorded() {
        let mut parse = ParseResult::default();
        run(
            &DomainFilter::new("domain", false),
            "http://www.news.example.co.uk/a",
            &mut parse,
        );
        assert_eq!(parse.metadata.first("domain"), Some("example.co.uk"));
        run(
            &DomainFilter::new("site", true),
            "http://www.news.example.co.uk/a",
            &mut parse,
        );
        assert_eq!(parse.metadata.first("site"), Some("www.news.example.co.uk"));
    }

    #[test]
    fn formats_follow_the_content_type() {
        assert_eq!(format_of("text/html; charset=UTF-8"), "html");
        assert_eq!(format_of("application/pdf"), "pdf");
        assert_eq!(format_of("application/msword"), "word");
        assert_eq!(format_of("application/vnd.ms-excel"), "excel");
        assert_eq!(format_of("image/png"), "image");
        assert_eq!(format_of("audio/ogg"), "audio");
        assert_eq!(format_of("video/mp4"), "video");
        assert_eq!(format_of("text/plain"), "other");
        assert_eq!(format_of(" "), "unknown");
        let mut parse = ParseResult::default();
        run(&FormatFilter, "http://a.test/", &mut parse);
        assert_eq!(parse.metadata.first("format"), Some("html"));
        parse.metadata.set(PARSE_CONTENT_TYPE, "application/pdf");
        run(&FormatFilter, "http://a.test/", &mut parse);
        assert_eq!(parse.metadata.first("format"), Some("pdf"));
    }

    #[test]
    fn comma_separated_values_are_split() {
        let mut parse = ParseResult::default();
        parse
            .metadata
            .set("parse.keywords", "rust ,crawler,  web search");
        parse.metadata.set("other", "a,b");
        run(
            &CommaSplitFilter::new(vec!["parse.keywords".into(), "none".into()]),
            "http://a.test/",
            &mut parse,
        );
        assert_eq!(
            parse.metadata.values("parse.keywords"),
            ["rust", "crawler", "web search"]
        );
        assert_eq!(parse.metadata.values("other"), ["a,b"]);
        assert!(!parse.metadata.contains("none"));
    }
}
