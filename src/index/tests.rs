//! The document builder: StormCrawler's rules for ids, URLs, text and metadata fields.

use serde_json::{Value, json};
use url::Url;

use super::*;
use crate::config::CrawlConfig;
use crate::message::PageContent;
use crate::model::{CrawlUrl, keys};

fn settings(yaml: &str) -> IndexerSettings {
    let config =
        CrawlConfig::from_yaml_str(&format!("http.agent.name: t\n{yaml}")).expect("config");
    config.indexer
}

fn page(url: &str, metadata: &[(&str, &str)]) -> CrawlUrl {
    let mut page = CrawlUrl::new(Url::parse(url).expect("url"));
    for (key, value) in metadata {
        page.metadata.add(*key, *value);
    }
    page
}

fn content(title: &str, text: &str) -> PageContent {
    PageContent {
        title: Some(title.to_string()),
        text: Some(text.to_string()),
    }
}

fn fields(document: ContentDocument) -> Value {
    Value::Object(document.fields)
}

#[test]
fn the_id_is_the_hex_sha256_of_the_url() {
    assert_eq!(
        document_id("http://example.com/"),
        "2a1b402420ef46577471cdc7409b0fa2c6a204db316e59ade2d805435489a067"
    );
}

#[test]
fn a_page_gets_stormcrawlers_default_fields() {
    let page = page(
        "http://www.site.test/a",
        &[
            ("parse.description", "About a"),
            ("parse.keywords", "x"),
            ("parse.keywords", "y"),
        ],
    );
    let document =
        build_document(&settings(""), &page, &content("A", "  the text  ")).expect("indexed");
    assert_eq!(document.url, "http://www.site.test/a");
    assert_eq!(document.id, document_id("http://www.site.test/a"));
    assert_eq!(
        fields(document),
        json!({
            "url": "http://www.site.test/a",
            "content": "the text",
            "title": "A",
            "description": "About a",
            "keywords": ["x", "y"],
            "host": "www.site.test",
            "domain": "site.test",
        })
    );
}

#[test]
fn mapping_forms_alias_index_and_glob() {
    let settings = settings(
        "indexer.md.mapping: ['parse.keywords[1]=second', 'shop.*', depth, absent]\n\
         indexer.url.fieldname: link\nindexer.text.fieldname: ''\n",
    );
    let page = page(
        "http://site.test/",
        &[
            ("parse.keywords", "x"),
            ("parse.keywords", "y"),
            ("shop.price", "3"),
            ("shop.currency", "EUR"),
            ("depth", "2"),
        ],
    );
    let document = build_document(&settings, &page, &content("T", "text")).expect("indexed");
    assert_eq!(
        fields(document),
        json!({
            "link": "http://site.test/",
            "second": "y",
            "shop.price": "3",
            "shop.currency": "EUR",
            "depth": "2",
            "host": "site.test",
        })
    );
}

#[test]
fn a_filter_or_the_parse_may_set_the_title_first() {
    let page = page("http://site.test/", &[("parse.title", "From a filter")]);
    let document = build_document(&settings(""), &page, &content("From <title>", "")).expect("ok");
    assert_eq!(document.fields["title"], json!("From a filter"));
}

#[test]
fn text_is_cut_at_maxlength_characters() {
    let settings = settings("indexer.text.maxlength: 3\n");
    let document = build_document(
        &settings,
        &page("http://site.test/", &[]),
        &content("", "ééééé"),
    )
    .expect("indexed");
    assert_eq!(document.fields["content"], json!("ééé"));
}

#[test]
fn empty_fields_are_kept_unless_ignored() {
    let page = page("http://site.test/", &[("parse.description", " ")]);
    let empty = PageContent::default();
    let kept = build_document(&settings(""), &page, &empty).expect("indexed");
    assert_eq!(kept.fields["content"], json!(""));
    assert_eq!(kept.fields["description"], json!(" "));
    let ignoring = settings("indexer.ignore.empty.fields: true\n");
    let left_out = build_document(&ignoring, &page, &empty).expect("indexed");
    assert!(!left_out.fields.contains_key("content"));
    assert!(!left_out.fields.contains_key("description"));
    assert!(!left_out.fields.contains_key("title"), "no title at all");
}

#[test]
fn the_canonical_url_is_used_on_the_same_domain_only() {
    let same = page(
        "http://www.site.test/a?session=1",
        &[(keys::CANONICAL, "http://site.test/a")],
    );
    let document = build_document(&settings(""), &same, &content("", "")).expect("indexed");
    assert_eq!(document.url, "http://site.test/a");
    assert_eq!(document.id, document_id("http://site.test/a"));
    assert_eq!(document.fields["url"], json!("http://site.test/a"));
    let relative = page("http://site.test/b/c", &[(keys::CANONICAL, "../d")]);
    let document = build_document(&settings(""), &relative, &content("", "")).expect("ok");
    assert_eq!(document.url, "http://site.test/d");
    let other = page(
        "http://site.test/a",
        &[(keys::CANONICAL, "http://elsewhere.test/a")],
    );
    let document = build_document(&settings(""), &other, &content("", "")).expect("indexed");
    assert_eq!(
        document.url, "http://site.test/a",
        "another domain is ignored"
    );
    let off = settings("indexer.canonical.name: ''\n");
    let document = build_document(&off, &same, &content("", "")).expect("indexed");
    assert_eq!(document.url, "http://www.site.test/a?session=1");
}

#[test]
fn noindex_pages_and_filtered_pages_are_skipped() {
    let noindex = page("http://site.test/", &[(keys::NOINDEX, "true")]);
    assert_eq!(
        build_document(&settings(""), &noindex, &content("", "")),
        Err(Skipped::Noindex)
    );
    let filter = settings("indexer.md.filter: lang=en\n");
    let french = page("http://site.test/", &[("lang", "fr")]);
    assert_eq!(
        build_document(&filter, &french, &content("", "")),
        Err(Skipped::Filtered)
    );
    let english = page("http://site.test/", &[("lang", "en")]);
    assert!(build_document(&filter, &english, &content("", "")).is_ok());
}

#[test]
fn bad_mapping_and_filter_name_their_key() {
    let error = |yaml: &str| {
        CrawlConfig::from_yaml_str(&format!("http.agent.name: t\n{yaml}"))
            .expect_err(yaml)
            .to_string()
    };
    let glob = error("indexer.md.mapping: ['parse.*=all']\n");
    assert!(glob.contains("indexer.md.mapping"), "{glob}");
    assert!(glob.contains("parse.*=all"), "{glob}");
    let filter = error("indexer.md.filter: lang\n");
    assert!(filter.contains("indexer.md.filter"), "{filter}");
}

#[tokio::test]
async fn the_file_store_appends_one_synced_line_per_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sub/content.jsonl");
    let store = JsonLinesStore::open(&path).expect("open");
    let page = page("http://site.test/", &[]);
    let document = build_document(&settings(""), &page, &content("T", "x")).expect("indexed");
    let outcomes = store.store(vec![document.clone(), document]).await;
    assert_eq!(outcomes, vec![Ok(()), Ok(())]);
    let text = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], json!(document_id("http://site.test/")));
    assert_eq!(lines[0]["document"]["title"], json!("T"));
}

#[tokio::test]
async fn a_failed_file_write_fails_every_document() {
    // A real device whose every write fails with "no space left".
    let store = JsonLinesStore::open(std::path::Path::new("/dev/full")).expect("open /dev/full");
    let page = page("http://site.test/", &[]);
    let document = build_document(&settings(""), &page, &content("T", "x")).expect("indexed");
    let outcomes = store.store(vec![document]).await;
    assert!(
        matches!(&outcomes[..], [Err(e)] if e.kind == crate::frontier::ErrorKind::Unavailable),
        "{outcomes:?}"
    );
}
