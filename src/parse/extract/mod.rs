//! [`ExtractFilter`]: copies what CSS selectors or XPath expressions select in a page into its
//! metadata, as StormCrawler's XPathFilter does.

#[cfg(feature = "extract")]
mod css;
#[cfg(feature = "extract")]
mod dom;
#[cfg(feature = "extract")]
mod simple_xpath;
#[cfg(feature = "extract")]
mod xpath;

#[cfg(not(feature = "extract"))]
#[path = "absent.rs"]
mod select;
#[cfg(feature = "extract")]
mod select;

use std::fmt;

use url::Url;

use self::select::{Page, Selects};
use super::{ParseFilter, ParseResult};
use crate::model::Metadata;

/// What selects values in a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expression {
    /// A CSS selector. Each matching element gives its text content; with `@name` (or Scrapy's
    /// `::attr(name)`) after the selector, its attribute `name` instead (elements without it give
    /// nothing): `a.next@href`, `meta[name=description]::attr(content)`. A `@` that belongs to the
    /// selector itself is escaped (`.md\@wide`) or inside an attribute selector (`[href*="@"]`).
    Css(String),
    /// An XPath 1.0 expression, evaluated on the page's HTML5 DOM with HTML names (lowercase, no
    /// namespace prefix). A node-set gives each node's string value in document order: an
    /// element's text content, an attribute's value (`//link[@rel='canonical']/@href`), a text
    /// node's text (`//title/text()`); a string, number or boolean is one value
    /// (`normalize-space(//h1)`, `count(//img)`).
    XPath(String),
}

impl Expression {
    /// The expression as written.
    pub fn as_str(&self) -> &str {
        match self {
            Expression::Css(text) | Expression::XPath(text) => text,
        }
    }

    /// `css` or `xpath`, as in the configuration keys `parsefilter.css` and `parsefilter.xpath`.
    pub fn kind(&self) -> &'static str {
        match self {
            Expression::Css(_) => "css",
            Expression::XPath(_) => "xpath",
        }
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expression::Css(text) => write!(f, "CSS selector `{text}`"),
            Expression::XPath(text) => write!(f, "XPath `{text}`"),
        }
    }
}

/// An expression that does not compile: names the metadata key it was for and the expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("metadata key `{key}`: invalid {expression}: {message}")]
pub struct ExtractError {
    /// The metadata key the expression was given for.
    pub key: String,
    /// The expression.
    pub expression: Expression,
    /// Why it does not compile.
    pub message: String,
}

/// A compiled rule: where values go, and what selects them.
#[derive(Debug)]
struct Rule {
    key: String,
    selects: Selects,
}

/// A [`ParseFilter`] that adds to a page's metadata the values that CSS selectors or XPath
/// expressions select in it, like StormCrawler's XPathFilter. It needs squall's `extract` feature
/// (the HTML5 parser, CSS selectors and XPath): without it, [`ExtractFilter::new`] refuses any
/// rule, naming the feature.
///
/// Each rule maps a metadata key to an [`Expression`]. The values of every match are added to the
/// key ([`Metadata::add`]), in document order and in the order of the rules, with runs of
/// whitespace collapsed to one space and the ends trimmed; empty values are skipped, and a key
/// that nothing matches is left as it was. The page is parsed once, by an HTML5 parser (html5ever),
/// for all the rules, and only when there are rules; its encoding comes from its byte order mark or
/// its `<meta charset>`, else UTF-8, else a guess. Pages rendered by a browser reach parse filters
/// as their serialized DOM, so the same rules serve static and rendered pages.
///
/// The configuration keys `parsefilter.css` and `parsefilter.xpath` build this filter for a
/// crawler; whether the values are stored with the page's status or passed to its outlinks is up
/// to `metadata.persist` and `metadata.transfer`, as for any metadata.
///
/// ```
/// use squall::parse::{Expression, ExtractFilter, ParseFilter, ParseResult};
///
/// let filter = ExtractFilter::new([
///     ("title", Expression::Css("h1".into())),
///     ("next", Expression::Css("a[rel=next]@href".into())),
///     ("canonical", Expression::XPath("//link[@rel='canonical']/@href".into())),
///     ("tags", Expression::XPath("//ul[@class='tags']/li/text()".into())),
/// ])?;
/// let page = br#"<html><head><link rel=canonical href="https://example.org/a"></head>
///     <body><h1>  A   title </h1><ul class=tags><li>rust</li><li>crawl</li></ul>
///     <a rel=next href="/b">next</a></body></html>"#;
/// let mut parse = ParseResult::default();
/// let url = url::Url::parse("https://example.org/a")?;
/// filter.filter(&url, page, &mut parse);
/// assert_eq!(parse.metadata.first("title"), Some("A title"));
/// assert_eq!(parse.metadata.first("next"), Some("/b"));
/// assert_eq!(parse.metadata.first("canonical"), Some("https://example.org/a"));
/// assert_eq!(parse.metadata.values("tags"), ["rust", "crawl"]);
///
/// let invalid = ExtractFilter::new([("title", Expression::XPath("//h1[".into()))]);
/// assert_eq!(invalid.expect_err("does not compile").key, "title");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ExtractFilter {
    rules: Vec<Rule>,
    /// Whether any rule is XPath (the page is then copied for XPath once).
    xpath: bool,
    /// Whether a key takes the values of its first rule that gives any, and no more.
    first_match: bool,
}

impl ExtractFilter {
    /// A filter with these rules (metadata key, expression), applied in this order. Every
    /// expression is checked: the first that does not compile is the error.
    pub fn new<K: Into<String>>(
        rules: impl IntoIterator<Item = (K, Expression)>,
    ) -> Result<Self, ExtractError> {
        let rules = rules
            .into_iter()
            .map(|(key, expression)| {
                let key = key.into();
                match select::compile(&expression) {
                    Ok(selects) => Ok(Rule { key, selects }),
                    Err(message) => Err(ExtractError {
                        key,
                        expression,
                        message,
                    }),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let xpath = rules.iter().any(|rule| rule.selects.is_xpath());
        Ok(ExtractFilter {
            rules,
            xpath,
            first_match: false,
        })
    }

    /// With `true`, a key takes the values of the first of its rules (in their order) that gives
    /// any value on the page, and its later rules are skipped, as StormCrawler's XPathFilter reads
    /// a list of expressions for one key: alternatives, best first; a value the key already holds
    /// is not added again. By default every rule adds.
    #[must_use]
    pub fn first_match_per_key(mut self, first_match: bool) -> Self {
        self.first_match = first_match;
        self
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there is no rule (the filter then does nothing, and parses nothing).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Adds to `metadata` the values the rules select in the HTML page `body`.
    pub fn extract(&self, body: &[u8], metadata: &mut Metadata) {
        if self.rules.is_empty() {
            return;
        }
        let page = Page::parse(body, self.xpath);
        let mut filled: Vec<&str> = Vec::new();
        for rule in &self.rules {
            if self.first_match && filled.contains(&rule.key.as_str()) {
                continue;
            }
            for value in page.values(&rule.selects, &rule.key) {
                let value = collapse_whitespace(&value);
                if value.is_empty() {
                    continue;
                }
                filled.push(rule.key.as_str());
                // Alternatives read what the page says once: a value the key holds (the
                // canonical URL the parser recorded) is not added again.
                if !(self.first_match && metadata.values(&rule.key).contains(&value)) {
                    metadata.add(rule.key.as_str(), value);
                }
            }
        }
    }
}

impl ParseFilter for ExtractFilter {
    fn filter(&self, _url: &Url, body: &[u8], parse: &mut ParseResult) {
        self.extract(body, &mut parse.metadata);
    }
}

/// `text` with each run of whitespace made one space, and none at the ends.
fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(all(test, feature = "extract"))]
mod tests;
