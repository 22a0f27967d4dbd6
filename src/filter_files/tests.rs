use std::path::Path;

use url::Url;

use super::*;
use crate::model::{CrawlUrl, Metadata, keys};
use crate::parse::ParseResult;

/// A temporary directory holding `files`, and a locator that looks in it.
fn dir_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Locator) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let locator = Locator::new(vec![dir.path().to_path_buf()]);
    (dir, locator)
}

/// A `urlfilters.json` with these filters (JSON objects), under the 3.x prefix.
fn url_file(filters: &[&str]) -> String {
    format!(
        r#"{{"org.apache.stormcrawler.filtering.URLFilters": [{}]}}"#,
        filters.join(",")
    )
}

/// What the chain makes of `link` found on `page` (with the page's metadata).
fn run(
    filters: &[Arc<dyn UrlFilter>],
    page: &str,
    page_metadata: &[(&str, &str)],
    link: &str,
) -> Option<String> {
    let mut source = CrawlUrl::seed(Url::parse(page).expect("page URL"));
    for (key, value) in page_metadata {
        source.metadata.set(*key, *value);
    }
    let url = Url::parse(link).expect("link URL");
    filters
        .iter()
        .try_fold(url, |url, f| f.filter(Some(&source), url, &Metadata::new()))
        .map(String::from)
}

#[test]
fn each_url_filter_class_does_its_job() {
    let (_dir, locator) = dir_with(&[
        ("rules.txt", "-\\.pdf$\n+.\n"),
        (
            "norm.xml",
            "<regex-normalize><regex><pattern>/old/</pattern><substitution>/new/</substitution></regex></regex-normalize>",
        ),
        (
            "urlfilters.json",
            &url_file(&[
                r#"{"class": "org.apache.stormcrawler.filtering.basic.BasicURLNormalizer", "params": {"queryElementsToRemove": ["utm_source"]}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.basic.BasicURLFilter", "params": {"maxPathRepetition": 2, "maxLength": 60}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.depth.MaxDepthFilter", "params": {"maxDepth": 2}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.host.HostURLFilter", "params": {"ignoreOutsideHost": true}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.regex.RegexURLNormalizer", "params": {"regexNormalizerFile": "norm.xml"}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.regex.RegexURLFilter", "params": {"regexFilterFile": "rules.txt"}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.metadata.MetadataFilter", "params": {"lang": "fr"}}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.basic.SelfURLFilter"}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.sitemap.SitemapFilter"}"#,
                r#"{"class": "org.apache.stormcrawler.filtering.robots.RobotsFilter", "params": {"fromCacheOnly": true}}"#,
            ]),
        ),
    ]);
    let filters = url_filters("urlfilters.json", &locator).expect("valid file");
    assert_eq!(filters.len(), 10);
    let page = "http://a.test/p";
    let kept = |link: &str| run(&filters, page, &[], link);
    assert_eq!(
        kept("http://a.test/old/x?z=1&utm_source=m#top").as_deref(),
        Some("http://a.test/new/x?z=1")
    );
    assert_eq!(kept("http://a.test/a/b/a"), None, "path repetition");
    assert_eq!(
        kept(&format!("http://a.test/{}", "x".repeat(60))),
        None,
        "length"
    );
    assert_eq!(kept("http://b.test/x"), None, "outside the host");
    assert_eq!(kept("http://a.test/doc.pdf"), None, "regex rule");
    assert_eq!(kept("http://a.test/p"), None, "self link");
    assert_eq!(
        run(&filters, page, &[(keys::DEPTH, "2")], "http://a.test/x"),
        None,
        "depth"
    );
    assert_eq!(
        run(&filters, page, &[("lang", "FR")], "http://a.test/x"),
        None,
        "metadata"
    );
    assert_eq!(
        run(
            &filters,
            page,
            &[(FOUND_SITEMAP_KEY, "true")],
            "http://a.test/x"
        ),
        None,
        "sitemap"
    );
    assert!(kept("http://a.test/x").is_some());
}

const FOUND_SITEMAP_KEY: &str = crate::filter::FOUND_SITEMAP;

#[test]
fn inline_rules_and_squall_s_default_normalizers() {
    let (_dir, locator) = dir_with(&[(
        "urlfilters.json",
        &url_file(&[
            r#"{"class": "com.digitalpebble.stormcrawler.filtering.regex.RegexURLNormalizer", "params": {}}"#,
            r#"{"class": "com.digitalpebble.stormcrawler.filtering.regex.RegexURLNormalizer", "params": {"urlNormalizers": [{"pattern": "^http:", "substitution": "https:"}]}}"#,
            r#"{"class": "com.digitalpebble.stormcrawler.filtering.regex.RegexURLFilter", "params": {"urlFilters": ["-/private/", "+."]}}"#,
        ])
        .replace("org.apache.stormcrawler.filtering.URLFilters", "com.digitalpebble.stormcrawler.filtering.URLFilters"),
    )]);
    let filters = url_filters("urlfilters.json", &locator).expect("valid file");
    let page = "http://a.test/";
    assert_eq!(
        run(
            &filters,
            page,
            &[],
            "http://a.test/x;jsessionid=ABC?a=1&PHPSESSID=0f&b=2"
        )
        .as_deref(),
        Some("https://a.test/x?a=1&b=2")
    );
    assert_eq!(
        run(&filters, page, &[], "http://a.test/p?sid=9").as_deref(),
        Some("https://a.test/p")
    );
    assert_eq!(run(&filters, page, &[], "http://a.test/private/x"), None);
}

#[test]
fn an_unsupported_class_is_named_with_its_file() {
    let (dir, locator) = dir_with(&[(
        "urlfilters.json",
        &url_file(&[r#"{"class": "org.apache.stormcrawler.filtering.regex.FastURLFilter"}"#]),
    )]);
    let err = url_filters("urlfilters.json", &locator)
        .err()
        .expect("unsupported");
    let message = err.to_string();
    assert!(
        message.contains("`org.apache.stormcrawler.filtering.regex.FastURLFilter`"),
        "{message}"
    );
    assert!(
        message.contains(&dir.path().join("urlfilters.json").display().to_string()),
        "{message}"
    );
    assert!(
        message.contains("filtering.basic.BasicURLFilter"),
        "lists what is supported: {message}"
    );
    // A parse filter in a URL filter file is not one either.
    let (_dir, locator) = dir_with(&[(
        "p.json",
        r#"{"org.apache.stormcrawler.parse.ParseFilters": [{"class": "org.apache.stormcrawler.jsoup.XPathFilter"}]}"#,
    )]);
    let err = parse_filters(FileKind::ParseFilters, "p.json", &locator)
        .err()
        .expect("unsupported");
    assert!(err.to_string().contains("jsoup.XPathFilter"), "{err}");
}

#[test]
fn bad_params_are_named() {
    for (filter, expected) in [
        (
            r#"{"class": "org.apache.stormcrawler.filtering.depth.MaxDepthFilter", "params": {"maxDepth": "deep"}}"#,
            "param `maxDepth` must be a whole number",
        ),
        (
            r#"{"class": "org.apache.stormcrawler.filtering.basic.BasicURLFilter", "params": {"maxLenght": 3}}"#,
            "param `maxLenght` is not known",
        ),
        (
            r#"{"class": "org.apache.stormcrawler.filtering.host.HostURLFilter", "params": {"ignoreOutsideHost": 1}}"#,
            "param `ignoreOutsideHost` must be true or false",
        ),
        (
            r#"{"class": "org.apache.stormcrawler.filtering.regex.RegexURLFilter", "params": {"urlFilters": ["+(unclosed"]}}"#,
            "(unclosed",
        ),
        (
            r#"{"class": "org.apache.stormcrawler.filtering.regex.RegexURLFilter", "params": {"urlFilters": ["keep"]}}"#,
            "param `urlFilters` rule 1",
        ),
    ] {
        let (_dir, locator) = dir_with(&[("u.json", &url_file(&[filter]))]);
        let err = url_filters("u.json", &locator).err().expect(filter);
        assert!(err.to_string().contains(expected), "{err}");
    }
}

#[test]
fn missing_files_and_bad_rule_files_are_named() {
    let (_dir, locator) = dir_with(&[(
        "u.json",
        &url_file(&[
            r#"{"class": "org.apache.stormcrawler.filtering.regex.RegexURLFilter", "params": {"regexFilterFile": "nowhere-rules.txt"}}"#,
        ]),
    )]);
    let err = url_filters("u.json", &locator)
        .err()
        .expect("missing rule file");
    assert!(
        matches!(err, FilterFileError::NotFound { ref name, .. } if name == "nowhere-rules.txt"),
        "{err}"
    );
    assert!(err.to_string().contains("RegexURLFilter"), "{err}");
    let err = url_filters("no-such-urlfilters.json", &locator)
        .err()
        .expect("missing file");
    assert!(err.to_string().contains("urlfilters.config.file"), "{err}");
    let (_dir, locator) = dir_with(&[
        ("bad.txt", "+ok\n-(?<=x)y\n"),
        (
            "u.json",
            &url_file(&[
                r#"{"class": "org.apache.stormcrawler.filtering.regex.RegexURLFilter", "params": {"regexFilterFile": "bad.txt"}}"#,
            ]),
        ),
    ]);
    let err = url_filters("u.json", &locator).err().expect("look-behind");
    let message = err.to_string();
    assert!(message.contains("bad.txt"), "{message}");
    assert!(message.contains("(?<=x)y"), "{message}");
}

#[test]
fn parse_filters_extract_and_reshape_metadata() {
    let (_dir, locator) = dir_with(&[(
        "parsefilters.json",
        r#"{"org.apache.stormcrawler.parse.ParseFilters": [
            {"class": "org.apache.stormcrawler.parse.filter.XPathFilter", "name": "XPathFilter",
             "params": {"parse.title": ["//META[@name='title']/@content", "//TITLE"], "parse.tags": "//META[@name='keywords']/@content"}},
            {"class": "org.apache.stormcrawler.parse.filter.LinkParseFilter", "params": {"pattern": "//FRAME/@src"}},
            {"class": "org.apache.stormcrawler.parse.filter.DomainParseFilter", "params": {"key": "site", "byHost": true}},
            {"class": "org.apache.stormcrawler.parse.filter.MimeTypeNormalization"},
            {"class": "org.apache.stormcrawler.parse.filter.CommaSeparatedToMultivaluedMetadata", "params": {"keys": "parse.tags"}}
        ]}"#,
    )]);
    let filters =
        parse_filters(FileKind::ParseFilters, "parsefilters.json", &locator).expect("valid");
    let page = br#"<html><head><title>T</title><meta name="keywords" content="a, b,c"></head>
        <frameset><frame src="menu.html"></frameset></html>"#;
    let url = Url::parse("http://www.a.test/d/").expect("URL");
    let mut parse = ParseResult::default();
    for filter in &filters {
        filter.filter(&url, page, &mut parse);
    }
    assert_eq!(parse.metadata.values("parse.title"), ["T"]);
    assert_eq!(parse.metadata.values("parse.tags"), ["a", "b", "c"]);
    assert_eq!(parse.metadata.first("site"), Some("www.a.test"));
    assert_eq!(parse.metadata.first("format"), Some("html"));
    let links: Vec<&str> = parse.links.iter().map(Url::as_str).collect();
    assert_eq!(links, ["http://www.a.test/d/menu.html"]);
}

#[test]
fn xpath_that_does_not_translate_or_compile_is_named() {
    for (expression, expected) in [("//DIV/html()", "html()"), ("//a[", "//a[")] {
        let text = format!(
            r#"{{"org.apache.stormcrawler.parse.JSoupFilters": [{{"class": "org.apache.stormcrawler.jsoup.XPathFilter", "params": {{"body": "{expression}"}}}}]}}"#
        );
        let (_dir, locator) = dir_with(&[("j.json", &text)]);
        let err = parse_filters(FileKind::JSoupFilters, "j.json", &locator)
            .err()
            .expect(expression);
        let message = err.to_string();
        assert!(message.contains("param `body`"), "{message}");
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn files_are_found_next_to_the_config_files() {
    let (dir, _) = dir_with(&[("urlfilters.json", &url_file(&[]))]);
    let locator = Locator::new(vec![
        Path::new("/nonexistent-squall").to_path_buf(),
        dir.path().to_path_buf(),
    ]);
    assert!(
        url_filters("urlfilters.json", &locator)
            .expect("found")
            .is_empty()
    );
}
