//! StormCrawler's filter files as its OpenSearch archetype generates them (kept unchanged in
//! `tests/fixtures/stormcrawler/archetype/src/main/resources/`): what their URL filters keep, drop
//! and normalize, what their parse filters extract, and a crawl of a site on loopback configured
//! by them from a project laid out as the archetype lays it out.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use squall::config::ConfigBuilder;
use squall::filter::UrlFilter;
use squall::filter_files::{self, FileKind, Locator};
use squall::model::{CrawlUrl, Metadata, Status, keys};
use squall::parse::ParseResult;
use url::Url;

use crate::support;
use support::crawler::{embedded, resolve_hosts, run_until_idle};
use support::http::{html, serve};

/// The archetype's resources folder.
fn resources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/stormcrawler/archetype/src/main/resources")
}

/// The four files, as a generated project holds them.
const FILES: [&str; 4] = [
    "urlfilters.json",
    "parsefilters.json",
    "jsoupfilters.json",
    "default-regex-filters.txt",
];

fn archetype_url_filters() -> Vec<Arc<dyn UrlFilter>> {
    let locator = Locator::new(vec![resources()]);
    filter_files::url_filters("urlfilters.json", &locator).expect("the archetype's urlfilters.json")
}

/// What the chain makes of `link` found on `page`, whose metadata has `page_metadata`.
fn filtered(page: &str, page_metadata: &[(&str, &str)], link: &str) -> Option<String> {
    let mut source = CrawlUrl::seed(Url::parse(page).expect("page URL"));
    for (key, value) in page_metadata {
        source.metadata.set(*key, *value);
    }
    let link = Url::parse(link).expect("link URL");
    archetype_url_filters()
        .iter()
        .try_fold(link, |url, f| {
            f.filter(Some(&source), url, &Metadata::new())
        })
        .map(String::from)
}

#[test]
fn the_archetype_s_url_filters_keep_drop_and_normalize() {
    let page = "http://site-a.test/dir/";
    let on_page = |link: &str| filtered(page, &[], link);
    // Kept: the site and its domain, normalized (fragment, session id, escapes).
    assert_eq!(
        on_page("http://site-a.test/a").as_deref(),
        Some("http://site-a.test/a")
    );
    assert_eq!(
        on_page("http://www.site-a.test/b").as_deref(),
        Some("http://www.site-a.test/b")
    );
    assert_eq!(
        on_page("http://Site-A.test/p?x=1&jsessionid=0AB1#part").as_deref(),
        Some("http://site-a.test/p?x=1"),
        "squall's default-regex-normalizers.xml, as the archetype names it"
    );
    assert_eq!(
        on_page("http://site-a.test/%7Euser/page&q=1").as_deref(),
        Some("http://site-a.test/~user/page?q=1")
    );
    // Dropped: another domain, the regex rules, loops, length, the page itself.
    for link in [
        "http://other.test/x",
        "http://site-a.test/logo.PNG",
        "http://site-a.test/app.js?v=2",
        "ftp://site-a.test/file",
        "mailto:someone@site-a.test",
        "http://localhost:9200/_cat",
        "http://127.0.0.1/",
        "http://192.168.1.10/admin",
        "http://site-a.test/a/b/a/c/a/",
        "http://site-a.test/dir/",
    ] {
        assert_eq!(on_page(link), None, "{link}");
    }
    assert_eq!(
        on_page(&format!("http://site-a.test/{}", "x".repeat(1100))),
        None
    );
    // SitemapFilter: a page of a site with sitemaps, not a sitemap itself.
    let found = [(squall::filter::FOUND_SITEMAP, "true")];
    assert_eq!(filtered(page, &found, "http://site-a.test/a"), None);
    let sitemap = [
        (squall::filter::FOUND_SITEMAP, "true"),
        (keys::IS_SITEMAP, "true"),
    ];
    assert!(filtered(page, &sitemap, "http://site-a.test/a").is_some());
}

/// The archetype's sample page: what its jsoup filters and parse filters read.
const PAGE: &str = r#"<!DOCTYPE html>
<html><head>
  <title>  Filter   files </title>
  <link rel="canonical" href="http://site-a.test/home">
  <meta name="Description" content="About the site">
  <meta name="keywords" content="rust, crawler ,web">
</head><body><h1>Home</h1><a href="/page2">next</a></body></html>"#;

#[test]
fn the_archetype_s_parse_filters_extract_metadata() {
    let locator = Locator::new(vec![resources()]);
    let mut filters =
        filter_files::parse_filters(FileKind::JSoupFilters, "jsoupfilters.json", &locator)
            .expect("the archetype's jsoupfilters.json");
    assert_eq!(filters.len(), 2);
    filters.extend(
        filter_files::parse_filters(FileKind::ParseFilters, "parsefilters.json", &locator)
            .expect("the archetype's parsefilters.json"),
    );
    assert_eq!(filters.len(), 5);
    let url = Url::parse("http://www.site-a.test/").expect("URL");
    let mut parse = ParseResult::default();
    for filter in &filters {
        filter.filter(&url, PAGE.as_bytes(), &mut parse);
    }
    let md = &parse.metadata;
    assert_eq!(md.values("parse.title"), ["Filter files"]);
    assert_eq!(
        md.values("parse.description"),
        ["About the site"],
        "the second alternative"
    );
    assert_eq!(
        md.values("parse.keywords"),
        ["rust", "crawler", "web"],
        "split after the XPath"
    );
    assert_eq!(md.values("canonical"), ["http://site-a.test/home"]);
    assert_eq!(md.values("domain"), ["site-a.test"]);
    assert_eq!(md.values("format"), ["html"]);
}

/// A project laid out as the archetype generates it: `crawler-conf.yaml` at its root naming the
/// filter files, which are in `src/main/resources/`, copied byte for byte.
fn archetype_project(conf: &str) -> tempfile::TempDir {
    let project = tempfile::tempdir().expect("temp dir");
    let target = project.path().join("src/main/resources");
    std::fs::create_dir_all(&target).expect("mkdir");
    for name in FILES {
        std::fs::copy(resources().join(name), target.join(name)).expect("copy");
    }
    std::fs::write(project.path().join("crawler-conf.yaml"), conf).expect("write");
    project
}

const CONF: &str = r#"config:
  http.agent.name: squall-test
  urlfilters.config.file: "urlfilters.json"
  parsefilters.config.file: "parsefilters.json"
  jsoup.filters.config.file: "jsoupfilters.json"
  fetcher.server.delay: 0.02
  spout.min.delay.queries: 100
  metadata.persist: [parse.title, parse.description, parse.keywords, domain, format, canonical]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_configured_by_the_archetype_s_files() {
    let home = r#"<html><head><title>Home</title><meta name="keywords" content="a,b">
        <link rel="canonical" href="http://site-a.test/"></head><body>
        <a href="/page2">2</a> <a href="http://www.site-a.test/www">www</a>
        <a href="http://other.test/elsewhere">other</a> <a href="/logo.png">logo</a>
        <a href="/p?x=1&amp;jsessionid=0AB1#top">session</a> <a href="/a/b/a/c/a/">loop</a>
        <a href="http://localhost/admin">local</a></body></html>"#;
    let app = Router::new()
        .route("/", get(move || async move { html(home) }))
        .route("/page2", get(|| async { html("<title>Two</title>") }))
        .route("/www", get(|| async { html("<title>WWW</title>") }))
        .route("/p", get(|| async { html("<title>P</title>") }))
        .route("/elsewhere", get(|| async { html("<title>Other</title>") }));
    let addr = serve(app).await;
    let project = archetype_project(CONF);
    let config = ConfigBuilder::new()
        .yaml_file(&project.path().join("crawler-conf.yaml"))
        .and_then(ConfigBuilder::build)
        .expect("config");
    let (builder, frontier, _dir) = embedded(config);
    let hosts = ["site-a.test", "www.site-a.test", "other.test", "localhost"];
    let builder = resolve_hosts(builder, hosts.map(str::to_string).to_vec(), addr);
    let crawler = builder.build().expect("crawler");
    crawler.inject(["http://site-a.test/"]).await;
    run_until_idle(crawler, Some(std::time::Duration::from_secs(120))).await;

    let status = |url: &str| frontier.lookup(url).expect("lookup");
    let home = status("http://site-a.test/").expect("the seed");
    assert_eq!(home.status, Status::Fetched);
    assert_eq!(home.metadata.values("parse.title"), ["Home"]);
    assert_eq!(home.metadata.values("parse.keywords"), ["a", "b"]);
    assert_eq!(home.metadata.values("domain"), ["site-a.test"]);
    assert_eq!(home.metadata.values("format"), ["html"]);
    assert_eq!(
        home.metadata.values("canonical"),
        ["http://site-a.test/"],
        "the parser's canonical URL, not repeated by the XPathFilter"
    );
    for fetched in [
        "http://site-a.test/page2",
        "http://www.site-a.test/www",
        "http://site-a.test/p?x=1",
    ] {
        let found = status(fetched).unwrap_or_else(|| panic!("{fetched} was not discovered"));
        assert_eq!(found.status, Status::Fetched, "{fetched}");
    }
    for dropped in [
        "http://other.test/elsewhere",
        "http://site-a.test/logo.png",
        "http://site-a.test/p?x=1&jsessionid=0AB1",
        "http://site-a.test/a/b/a/c/a/",
        "http://localhost/admin",
    ] {
        assert!(status(dropped).is_none(), "{dropped} was kept");
    }
}

#[test]
fn a_crawler_built_from_a_file_with_an_unsupported_class_names_it() {
    let project = archetype_project(CONF);
    let file = project.path().join("src/main/resources/urlfilters.json");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(
        &file,
        text.replace(
            "filtering.basic.SelfURLFilter",
            "filtering.basic.NoSuchFilter",
        ),
    )
    .expect("write");
    let config = ConfigBuilder::new()
        .yaml_file(&project.path().join("crawler-conf.yaml"))
        .and_then(ConfigBuilder::build)
        .expect("config");
    let (builder, _frontier, _dir) = embedded(config);
    let Err(error) = builder.build() else {
        panic!("an unsupported class was accepted");
    };
    let message = error.to_string();
    assert!(
        message.contains("com.digitalpebble.stormcrawler.filtering.basic.NoSuchFilter"),
        "{message}"
    );
    assert!(message.contains("urlfilters.json"), "{message}");
}
