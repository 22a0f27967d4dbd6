//! The parser bolt on whole fetched pages: what it records in the page's metadata and which
//! content it reads as a sitemap.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use bytes::Bytes;
use url::Url;

use super::{ParseFilter, ParseResult, ParserBolt, ParserSettings};
use crate::filter::FilterChain;
use crate::message::{AckHandle, FetchOutcome, FetchedPage, FetchedResponse, StatusUpdate, Tuple};
use crate::model::{CrawlUrl, Metadata, PartitionMode, keys};

fn settings(sitemaps: bool) -> ParserSettings {
    ParserSettings {
        max_outlinks: None,
        partition_mode: PartitionMode::ByHost,
        track_path: false,
        track_depth: false,
        sitemaps,
        ..ParserSettings::default()
    }
}

fn parser(sitemaps: bool) -> ParserBolt {
    ParserBolt::new(settings(sitemaps), FilterChain::new(), Vec::new())
}

/// A 200 response with `body`, served as `content_type` with these `X-Robots-Tag` values.
fn response(content_type: Option<&str>, robots_tag: &[&str], body: &str) -> FetchedResponse {
    FetchedResponse {
        status_code: 200,
        content_type: content_type.map(str::to_string),
        location: None,
        robots_tag: robots_tag.iter().map(|t| t.to_string()).collect(),
        etag: None,
        last_modified: None,
        retry_after: None,
        final_url: None,
        body: Bytes::from(body.to_string()),
        truncated: false,
    }
}

/// Runs `parser` over `response` fetched for `url` with `metadata`.
fn process(
    parser: &ParserBolt,
    url: &str,
    metadata: Metadata,
    response: FetchedResponse,
) -> StatusUpdate {
    let (ack_tx, _ack_rx) = tokio::sync::mpsc::unbounded_channel();
    let url = CrawlUrl {
        url: Url::parse(url).unwrap(),
        metadata,
    };
    let tuple = Tuple {
        ack: AckHandle::new(url.clone(), ack_tx),
        url,
        key: "a.test".to_string(),
        hints: Default::default(),
    };
    parser.process(FetchedPage {
        tuple,
        record: None,
        outcome: FetchOutcome::Response(Box::new(response)),
        sitemaps: Vec::new(),
        queue: Default::default(),
    })
}

fn html(page: &str, robots_tag: &[&str]) -> FetchedResponse {
    response(Some("text/html; charset=utf-8"), robots_tag, page)
}

fn outlinks(update: &StatusUpdate) -> Vec<&str> {
    update.outlinks.iter().map(|o| o.url.url.as_str()).collect()
}

#[test]
fn relative_canonical_is_resolved_recorded_and_followed() {
    let page = r#"<html><head><base href="/docs/"><link rel="canonical" href="guide.html?v=1">
        </head><body><a href="/other">o</a></body></html>"#;
    let update = process(
        &parser(false),
        "https://a.test/x/page?utm=1",
        Metadata::new(),
        html(page, &[]),
    );
    let canonical = update.url.metadata.first(keys::CANONICAL);
    assert_eq!(canonical, Some("https://a.test/docs/guide.html?v=1"));
    assert_eq!(
        outlinks(&update),
        ["https://a.test/docs/guide.html?v=1", "https://a.test/other"]
    );
    update.ack.ack();
}

#[test]
fn canonical_on_another_scheme_is_ignored_and_a_stale_one_dropped() {
    let page = r#"<html><head><link rel="canonical" href="ftp://a.test/page"></head></html>"#;
    let known: Metadata = [(keys::CANONICAL, "https://a.test/old")]
        .into_iter()
        .collect();
    let update = process(
        &parser(false),
        "https://a.test/page",
        known,
        html(page, &[]),
    );
    assert_eq!(update.url.metadata.first(keys::CANONICAL), None);
    update.ack.ack();
}

#[test]
fn noindex_by_meta_robots_is_recorded() {
    let page = r#"<html><head><meta name="robots" content="NoIndex, follow"></head>
        <body><a href="/next">n</a></body></html>"#;
    let update = process(
        &parser(false),
        "https://a.test/",
        Metadata::new(),
        html(page, &[]),
    );
    assert_eq!(update.url.metadata.first(keys::NOINDEX), Some("true"));
    assert_eq!(outlinks(&update), ["https://a.test/next"]);
    let plain = process(
        &parser(false),
        "https://a.test/",
        [(keys::NOINDEX, "true")].into_iter().collect(),
        html("<html><body>indexable</body></html>", &[]),
    );
    assert_eq!(plain.url.metadata.first(keys::NOINDEX), None, "stale mark");
    update.ack.ack();
    plain.ack.ack();
}

#[test]
fn noindex_by_x_robots_tag_is_recorded_on_any_content() {
    let page = "<html><body><a href=/next>n</a></body></html>";
    let update = process(
        &parser(false),
        "https://a.test/",
        Metadata::new(),
        html(page, &["googlebot: noindex"]),
    );
    assert_eq!(update.url.metadata.first(keys::NOINDEX), Some("true"));
    assert_eq!(outlinks(&update), ["https://a.test/next"], "still followed");
    let pdf = response(Some("application/pdf"), &["noindex, nofollow"], "%PDF-1.4");
    let pdf = process(&parser(true), "https://a.test/d.pdf", Metadata::new(), pdf);
    assert_eq!(pdf.url.metadata.first(keys::NOINDEX), Some("true"));
    update.ack.ack();
    pdf.ack.ack();
}

/// Records what a parse filter saw, and lifts the page's noindex.
struct Indexer;

impl ParseFilter for Indexer {
    fn filter(&self, _url: &Url, _body: &[u8], parse: &mut ParseResult) {
        assert_eq!(parse.metadata.first(keys::NOINDEX), Some("true"));
        let canonical = parse.metadata.first(keys::CANONICAL).map(str::to_string);
        parse
            .metadata
            .set("seen.canonical", canonical.unwrap_or_default());
        parse.noindex = false;
    }
}

#[test]
fn parse_filters_see_the_canonical_and_noindex_and_may_lift_noindex() {
    let filters: Vec<Arc<dyn ParseFilter>> = vec![Arc::new(Indexer)];
    let parser = ParserBolt::new(settings(false), FilterChain::new(), filters);
    let page = r#"<link rel=canonical href="https://a.test/c"><meta name=robots content=none>"#;
    let update = process(&parser, "https://a.test/", Metadata::new(), html(page, &[]));
    let metadata = &update.url.metadata;
    assert_eq!(metadata.first("seen.canonical"), Some("https://a.test/c"));
    assert_eq!(metadata.first(keys::NOINDEX), None);
    update.ack.ack();
}

#[test]
fn extracted_values_replace_the_previous_fetch_s_and_others_stay() {
    let extract = super::ExtractFilter::new([
        ("title", super::Expression::Css("h1".into())),
        (
            "author",
            super::Expression::XPath("//meta[@name='author']/@content".into()),
        ),
    ])
    .unwrap();
    let parser = ParserBolt::new(settings(false), FilterChain::new(), vec![Arc::new(extract)]);
    let mut before = Metadata::new();
    before.set("title", "old title");
    before.set("author", "old author");
    let page = "<h1>New</h1><h1>Second</h1><a href=/next>n</a>";
    let update = process(&parser, "https://a.test/", before, html(page, &[]));
    let metadata = &update.url.metadata;
    assert_eq!(metadata.values("title"), ["New", "Second"]);
    assert_eq!(
        metadata.first("author"),
        Some("old author"),
        "a key that matches nothing is left as it was"
    );
    assert_eq!(outlinks(&update), ["https://a.test/next"]);
    update.ack.ack();
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://a.test/one</loc></url>
  <url><loc>https://a.test/two</loc></url>
</urlset>"#;

#[test]
fn xml_urlset_at_an_unmarked_url_is_read_as_a_sitemap() {
    let xml = || response(Some("application/xml"), &[], URLSET);
    let update = process(&parser(true), "https://a.test/list", Metadata::new(), xml());
    assert_eq!(
        outlinks(&update),
        ["https://a.test/one", "https://a.test/two"]
    );
    assert_eq!(update.url.metadata.first(keys::IS_SITEMAP), Some("true"));
    let source = update.outlinks[0].url.metadata.first(keys::SITEMAP_SOURCE);
    assert_eq!(source, Some("https://a.test/list"));

    let off = process(
        &parser(false),
        "https://a.test/list",
        Metadata::new(),
        xml(),
    );
    assert!(off.outlinks.is_empty(), "sitemap.discovery off");
    assert_eq!(off.url.metadata.first(keys::IS_SITEMAP), None);
    let not_a_sitemap: Metadata = [(keys::IS_SITEMAP, "false")].into_iter().collect();
    let marked = process(&parser(true), "https://a.test/list", not_a_sitemap, xml());
    assert!(marked.outlinks.is_empty(), "marked isSitemap=false");
    let empty = response(Some("application/xml"), &[], "");
    let empty = process(&parser(true), "https://a.test/list", Metadata::new(), empty);
    let metadata = &empty.url.metadata;
    assert_eq!(
        metadata.first(keys::IS_SITEMAP),
        None,
        "sniffed, not parsed"
    );
    assert_eq!(metadata.first(keys::ERROR_CAUSE), None);
    for update in [update, off, marked, empty] {
        update.ack.ack();
    }
}

#[test]
fn html_that_mentions_a_urlset_is_not_a_sitemap() {
    let page = "<!DOCTYPE html><html><body><p>A sitemap looks like this:</p>\
        <urlset><url><loc>https://a.test/listed</loc></url></urlset>\
        <pre>&lt;urlset&gt;</pre><a href=\"/linked\">l</a></body></html>";
    for content_type in [Some("text/html"), None] {
        let served = response(content_type, &[], page);
        let update = process(
            &parser(true),
            "https://a.test/s.xml",
            Metadata::new(),
            served,
        );
        assert_eq!(outlinks(&update), ["https://a.test/linked"]);
        assert_eq!(update.url.metadata.first(keys::IS_SITEMAP), None);
        update.ack.ack();
    }
}

#[test]
fn a_sitemap_cut_at_the_content_limit_keeps_its_whole_entries_and_says_so() {
    let marked: Metadata = [(keys::IS_SITEMAP, "true")].into_iter().collect();
    let cut_at = URLSET.find("two").unwrap();
    let mut served = response(Some("application/xml"), &[], &URLSET[..cut_at]);
    served.truncated = true;
    let update = process(
        &parser(true),
        "https://a.test/s.xml",
        marked.clone(),
        served,
    );
    assert_eq!(update.status, crate::model::Status::Fetched);
    assert_eq!(outlinks(&update), ["https://a.test/one"]);
    let metadata = &update.url.metadata;
    assert_eq!(metadata.first(keys::TRIMMED), Some("true"));
    let record = metadata.first(keys::SITEMAP_TRIMMED).unwrap_or_default();
    assert!(
        record.contains(&format!("first {cut_at} bytes"))
            && record.contains("http.content.limit")
            && record.contains("1 entries kept"),
        "{record}"
    );
    // Cut before any entry: an error that names why, and nothing recorded as kept.
    let mut served = response(Some("application/xml"), &[], &URLSET[..60]);
    served.truncated = true;
    let failed = process(&parser(true), "https://a.test/s.xml", marked, served);
    assert_eq!(failed.status, crate::model::Status::Error);
    assert!(failed.outlinks.is_empty());
    let metadata = &failed.url.metadata;
    assert_eq!(metadata.first(keys::ERROR_CAUSE), Some("sitemap"));
    let message = metadata.first(keys::ERROR_MESSAGE).unwrap_or_default();
    assert!(
        message.contains("first 60 bytes were read") && message.contains("http.content.limit"),
        "{message}"
    );
    assert_eq!(metadata.first(keys::SITEMAP_TRIMMED), None);
    for update in [update, failed] {
        update.ack.ack();
    }
}

/// A parse filter that panics on pages whose URL ends with `boom`.
struct PanicsOnBoom;

impl ParseFilter for PanicsOnBoom {
    fn filter(&self, url: &Url, _body: &[u8], _parse: &mut ParseResult) {
        if url.path().ends_with("boom") {
            panic!("the filter gave up on {url}");
        }
    }
}

#[test]
fn a_panic_while_parsing_a_page_gives_that_page_an_error_and_the_stage_goes_on() {
    let filters: Vec<Arc<dyn ParseFilter>> = vec![Arc::new(PanicsOnBoom)];
    let parser = ParserBolt::new(settings(false), FilterChain::new(), filters);
    let page = "<html><head><title>T</title></head><body><a href=\"/next\">n</a></body></html>";
    let came_with: Metadata = [("depth", "2")].into_iter().collect();
    let failed = process(&parser, "https://a.test/boom", came_with, html(page, &[]));
    assert_eq!(failed.status, crate::model::Status::Error);
    assert!(
        failed.outlinks.is_empty(),
        "no outlinks from a page that failed"
    );
    assert!(failed.content.is_none());
    let metadata = &failed.url.metadata;
    assert_eq!(metadata.first(keys::ERROR_CAUSE), Some("parse"));
    let message = metadata.first(keys::ERROR_MESSAGE).unwrap_or_default();
    assert!(
        message.contains("panicked")
            && message.contains("the filter gave up on https://a.test/boom"),
        "{message}"
    );
    assert_eq!(
        metadata.first("depth"),
        Some("2"),
        "the metadata it came with"
    );
    assert_eq!(
        metadata.first(keys::FETCH_STATUS_CODE),
        None,
        "nothing half done"
    );
    let next = process(
        &parser,
        "https://a.test/fine",
        Metadata::new(),
        html(page, &[]),
    );
    assert_eq!(next.status, crate::model::Status::Fetched);
    assert_eq!(outlinks(&next), ["https://a.test/next"]);
    for update in [failed, next] {
        update.ack.ack();
    }
}

/// The smallest fuzz input that trips lol_html's internal check (tests/fixtures/fuzz/): where
/// lol_html is built with its debug assertions (a debug build, squall's or a dependent's), the page
/// is an error that names the parser's failure; in a release build lol_html reports an error that
/// ends its parse early, and the page keeps what was found.
#[test]
fn markup_that_trips_the_html_parser_gives_the_page_an_error_in_a_debug_build() {
    let body: &'static [u8] = include_bytes!(
        "../../tests/fixtures/fuzz/html_links-crash-2036a632107535631f69efe7621312064a6f3e51"
    );
    let mut served = response(Some("text/html; charset=windows-1252"), &[], "");
    served.body = Bytes::from_static(body);
    let update = process(
        &parser(false),
        "https://a.test/hostile",
        Metadata::new(),
        served,
    );
    let metadata = &update.url.metadata;
    if cfg!(debug_assertions) {
        assert_eq!(update.status, crate::model::Status::Error);
        assert_eq!(metadata.first(keys::ERROR_CAUSE), Some("parse"));
        let message = metadata.first(keys::ERROR_MESSAGE).unwrap_or_default();
        assert!(message.starts_with("the HTML parser failed: "), "{message}");
        assert!(update.outlinks.is_empty());
    } else {
        assert_eq!(update.status, crate::model::Status::Fetched);
        assert_eq!(metadata.first(keys::ERROR_CAUSE), None);
    }
    update.ack.ack();
}
