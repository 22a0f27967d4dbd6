use super::*;

const PAGE: &str = r#"<!DOCTYPE html>
<html><head>
  <title> The   page </title>
  <link rel="canonical" href="https://a.test/page">
  <meta name="description" content="  About
     things ">
</head><body>
  <h1>  Main
      <em>title</em> </h1>
  <div class="post"><p>First <b>bold</b> para.</p><p>Second</p></div>
  <ul><li>one</li><li> </li><li>two<ul><li>two.one</li></ul></li><li>three</li></ul>
  <a class="next" href="/p2">Next</a><a class="next">no href</a><a class="next" href="/p3">More</a>
</body></html>"#;

fn css(expression: &str) -> Expression {
    Expression::Css(expression.to_string())
}

fn xpath(expression: &str) -> Expression {
    Expression::XPath(expression.to_string())
}

/// `metadata` with what `filter` extracts from `page` added.
fn extracted(filter: &ExtractFilter, page: &[u8], mut metadata: Metadata) -> Metadata {
    filter.extract(page, &mut metadata);
    metadata
}

/// A filter of `rules`, which must be valid.
fn filter<'a>(rules: impl IntoIterator<Item = (&'a str, Expression)>) -> ExtractFilter {
    ExtractFilter::new(rules).expect("valid")
}

/// What one rule for `key` adds to empty metadata on `page`.
fn values(expression: Expression, page: &str) -> Vec<String> {
    let metadata = extracted(
        &filter([("key", expression)]),
        page.as_bytes(),
        Metadata::new(),
    );
    metadata.values("key").to_vec()
}

/// Checks, for each `(rule, values)`, that the rule alone gives these values on `page`.
#[track_caller]
fn check(page: &str, cases: &[(Expression, &[&str])]) {
    for (expression, expected) in cases {
        assert_eq!(
            values(expression.clone(), page),
            *expected,
            "{expression:?}"
        );
    }
}

/// Each rule alone on `PAGE`, with what it must give.
#[test]
fn one_rule_gives_its_values_on_the_page() {
    let in_order = &["one", "twotwo.one", "two.one", "three"];
    check(
        PAGE,
        &[
            // CSS gives each match's text, collapsed and trimmed.
            (css("h1"), &["Main title"]),
            (css("title"), &["The page"]),
            (css("div.post p"), &["First bold para.", "Second"]),
            // CSS attribute forms give the attribute of the matches that have it (HTML names).
            (css("a.next@href"), &["/p2", "/p3"]),
            (css("a.next::attr(href)"), &["/p2", "/p3"]),
            (css("A.next@HREF"), &["/p2", "/p3"]),
            (css("meta[name=description]@content"), &["About things"]),
            // XPath text nodes, attributes and elements (an element gives its text content).
            (xpath("//title/text()"), &["The page"]),
            (
                xpath("//link[@rel='canonical']/@href"),
                &["https://a.test/page"],
            ),
            (xpath("//div[@class='post']"), &["First bold para.Second"]),
            (xpath("//h1/text()"), &["Main"]),
            // XPath strings, numbers and booleans are one value.
            (xpath("normalize-space(//h1)"), &["Main title"]),
            (xpath("string(//a[2])"), &["no href"]),
            (xpath("concat(//a[1]/@href, '#', count(//li))"), &["/p2#5"]),
            (xpath("count(//a)"), &["3"]),
            (xpath("boolean(//h1)"), &["true"]),
            (xpath("string(//nothing)"), &[]),
            // Several matches come in document order, without empty values (a union too).
            (css("li"), in_order),
            (xpath("//li"), in_order),
            (
                xpath("//li[last()] | //li[1]"),
                &["one", "two.one", "three"],
            ),
        ],
    );
}

#[test]
fn several_matches_come_in_the_tree_s_order() {
    // The parser moves the paragraph out of the table, before it: the order is the tree's.
    let fostered = "<table><tr><td>cell</td></tr><p>fostered</p></table>";
    check(
        fostered,
        &[
            (css("td, p"), &["fostered", "cell"]),
            (xpath("//td | //p"), &["fostered", "cell"]),
        ],
    );
    check("<title>t</title>x", &[(css("html"), &["tx"])]); // the root too
}

#[test]
fn rules_add_to_a_key_in_their_order_after_what_it_held() {
    let filter = filter([
        ("links", xpath("//a/@href")),
        ("title", css("title")),
        ("links", css("link@href")),
    ]);
    assert_eq!(filter.len(), 3);
    let held = Metadata::from_iter([("links", "earlier")]);
    let metadata = extracted(&filter, PAGE.as_bytes(), held);
    assert_eq!(
        metadata.values("links"),
        ["earlier", "/p2", "/p3", "https://a.test/page"]
    );
    assert_eq!(metadata.values("title"), ["The page"]);
}

#[test]
fn a_key_that_matches_nothing_is_left_untouched() {
    let filter = filter([
        ("kept", css("table td")),
        ("absent", xpath("//table//td/text()")),
        ("empty", css("ul > li:nth-child(2)")),
    ]);
    let held = Metadata::from_iter([("kept", "a"), ("kept", "b")]);
    let metadata = extracted(&filter, PAGE.as_bytes(), held);
    assert_eq!(metadata.values("kept"), ["a", "b"]);
    assert!(!metadata.contains("absent"));
    assert!(!metadata.contains("empty"), "only whitespace is no value");
}

#[test]
fn as_a_parse_filter_it_adds_to_the_parse_result() {
    let filter = filter([("h1", css("h1"))]);
    let mut parse = ParseResult::default();
    let url = Url::parse("https://a.test/page").expect("url");
    filter.filter(&url, PAGE.as_bytes(), &mut parse);
    assert_eq!(parse.metadata.first("h1"), Some("Main title"));
    assert!(parse.links.is_empty(), "nothing else changes");
}

#[test]
fn an_empty_filter_does_nothing() {
    let filter = filter([]);
    assert!(filter.is_empty());
    let metadata = extracted(&filter, PAGE.as_bytes(), Metadata::new());
    assert!(metadata.is_empty());
}

#[test]
fn invalid_expressions_are_errors_naming_key_and_expression() {
    let cases = [
        ("css.key", css("h1[")),
        ("css.empty", css("")),
        ("css.attr", css("a::attr()")),
        ("xpath.key", xpath("//h1[")),
        ("xpath.empty", xpath("  ")),
        ("xpath.function", xpath("normalize-spaces(//h1)")),
        ("xpath.variable", xpath("$title")),
        ("xpath.prefix", xpath("//svg:title")),
    ];
    for (key, expression) in cases {
        let rules = [("fine", css("h1")), (key, expression.clone())];
        let error = ExtractFilter::new(rules).expect_err(expression.as_str());
        assert_eq!(error.key, key);
        assert_eq!(error.expression, expression);
        let text = error.to_string();
        assert!(text.contains(key), "{text}");
        assert!(text.contains(expression.as_str()), "{text}");
    }
}

#[test]
fn the_page_s_encoding_is_honoured() {
    let page = b"<meta charset=windows-1252><h1>Caf\xe9 cr\xe8me</h1>";
    let filter = filter([("h1", xpath("//h1")), ("css", css("h1"))]);
    let metadata = extracted(&filter, page, Metadata::new());
    assert_eq!(metadata.values("h1"), ["Café crème"]);
    assert_eq!(metadata.values("css"), ["Café crème"]);
}

#[test]
fn foreign_content_matches_by_local_names() {
    let page = r#"<svg><title>Logo</title><a xlink:href="/home"><text>Home</text></a></svg>
        <math><mi>x</mi></math>"#;
    check(
        page,
        &[
            (xpath("//svg/title"), &["Logo"]),
            (xpath("//svg//a/@href"), &["/home"]),
            (xpath("//math/mi/text()"), &["x"]),
            (css("svg title"), &["Logo"]),
        ],
    );
}

/// Pages built to break parsers: every rule runs on each, and nothing panics.
#[test]
fn hostile_html_does_not_panic() {
    let deep = format!(
        "<h1>before</h1>{}<span>deep</span>{}after",
        "<div>".repeat(400),
        "</div>".repeat(400)
    );
    let too_deep = format!("<h1>before</h1>{}<h1>deep</h1>", "<ul><li>".repeat(100_000));
    let deep_inline = format!("{}x", "<b><i><u><s>".repeat(3000));
    let attributes = format!(
        "<p {}>many</p>",
        (0..5000).map(|i| format!("a{i}=v ")).collect::<String>()
    );
    let long_attribute = format!("<a href=\"{}\">long</a>", "x".repeat(1 << 20));
    let pages: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"\xff\xfe\x00\x00\xc3\x28\xa0\xa1\x80<h1>\x00\xf0\x28\x8c\x28</h1>".to_vec(),
        b"<h1 \"a=1 <b=2 =c ='d' x:y=z xmlns:q=w q:r=s>weird names</h1>".to_vec(),
        b"<table><tr><td><table><h1>misnested</td></p></p></li></table><h1>".to_vec(),
        b"<template><h1>in a template</h1></template><frameset><frame></frameset>".to_vec(),
        b"<!-- unclosed comment <h1>no".to_vec(),
        b"<script><h1>not a tag</h1></script><style>h1{}</style><h1>real".to_vec(),
        b"<svg><foreignObject><math><mi><h1>deep foreign</h1></mi></math></foreignObject></svg>"
            .to_vec(),
        b"<meta charset=utf-16><meta charset=replacement><h1>labels</h1>".to_vec(),
        b"<meta charset=\"iso-2022-kr\"><h1>replacement</h1>".to_vec(),
        b"<![CDATA[<h1>]]><?php echo 1 ?><!DOCTYPE><h1 a b a b>dup</h1>".to_vec(),
        deep.into_bytes(),
        too_deep.into_bytes(),
        deep_inline.into_bytes(),
        attributes.into_bytes(),
        long_attribute.into_bytes(),
    ];
    let filter = filter([
        ("h1", css("h1")),
        ("all", css("*")),
        ("href", css("*@href")),
        ("not", css(":not(h1) > span")),
        ("xh1", xpath("//h1")),
        ("any", xpath("//*/@*")),
        ("text", xpath("//text()")),
        ("body", xpath("string(/)")),
        ("span", xpath("//span/ancestor::*[1]")),
        ("comments", xpath("//comment()")),
    ]);
    for page in &pages {
        extracted(&filter, page, Metadata::new());
    }
    let metadata = extracted(&filter, &pages[11], Metadata::new());
    assert_eq!(metadata.first("span"), Some("deep"), "below the depth cap");
    assert!(
        metadata
            .first("body")
            .is_some_and(|text| text.ends_with("deepafter"))
    );
    assert_eq!(metadata.values("not"), ["deep"]);
    let metadata = extracted(&filter, &pages[12], Metadata::new());
    assert_eq!(
        metadata.values("h1"),
        ["before"],
        "read up to the depth cap"
    );
}

#[test]
fn whitespace_collapses_to_single_spaces() {
    assert_eq!(collapse_whitespace("  a \n\t b\u{a0}c  "), "a b c");
    assert_eq!(collapse_whitespace(" \n "), "");
}

#[test]
fn with_first_match_per_key_a_key_takes_its_first_rule_that_gives_values() {
    let filter = filter([
        ("title", xpath("//meta[@name='title']/@content")),
        ("title", xpath("//title")),
        ("title", xpath("//h1")),
        ("links", xpath("//a/@href")),
        ("links", css("link@href")),
    ])
    .first_match_per_key(true);
    let metadata = extracted(&filter, PAGE.as_bytes(), Metadata::new());
    assert_eq!(metadata.values("title"), ["The page"]);
    assert_eq!(metadata.values("links"), ["/p2", "/p3"]);
}
