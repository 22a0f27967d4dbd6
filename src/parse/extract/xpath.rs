//! XPath 1.0 rules over the HTML5 DOM: the parsed page is copied into a document that `sxd-xpath`
//! evaluates on.

use ego_tree::iter::Edge;
use scraper::{Html, Node};
use sxd_document::Package;
use sxd_document::dom::{Document, Element};
use sxd_xpath::{Context, Factory, Value, XPath};

/// How deep elements nest in the copy. Parsing stopped soon after elements nested deeper than this;
/// the few deeper ones are kept, as children of the element at this depth, in document order. The
/// cap bounds the recursion of XPath's string values.
const MAX_DEPTH: usize = super::dom::MAX_DEPTH;

/// Why an expression with a namespace prefix is refused.
const NO_PREFIXES: &str = "names have no namespace prefixes here (HTML names have none): write \
                           `//title`, or `//*[local-name()='title']`";

/// A checked XPath expression. Compiled expressions cannot move between threads, so each page
/// compiles it again (a matter of microseconds, against the milliseconds of parsing the page).
#[derive(Debug)]
pub(super) struct XPathRule {
    expression: String,
}

impl XPathRule {
    /// Checks that `expression` compiles and evaluates on a one-element document (this catches
    /// unknown functions, variables and namespace prefixes, but those in predicates only when the
    /// predicate's step matches that element).
    pub(super) fn new(expression: &str) -> Result<Self, String> {
        // sxd-xpath panics on a prefix that no namespace is bound to, and none is.
        if has_namespace_prefix(expression) {
            return Err(NO_PREFIXES.to_string());
        }
        let rule = XPathRule {
            expression: expression.to_string(),
        };
        let package = Package::new();
        let document = package.as_document();
        let html = document.create_element("html");
        html.set_attribute_value("lang", "en");
        html.append_child(document.create_text("text"));
        document.root().append_child(html);
        rule.values(&document)?;
        Ok(rule)
    }

    fn compile(&self) -> Result<XPath, String> {
        match Factory::new().build(&self.expression) {
            Ok(Some(xpath)) => Ok(xpath),
            Ok(None) => Err("the expression is empty".to_string()),
            Err(error) => Err(error.to_string()),
        }
    }

    /// The values of the expression on `document`: each node's string value (an element's text
    /// content, an attribute's value, a text node's text) in document order, or the one string,
    /// number or boolean it computes.
    pub(super) fn values(&self, document: &Document<'_>) -> Result<Vec<String>, String> {
        let value = self
            .compile()?
            .evaluate(&Context::new(), document.root())
            .map_err(|error| error.to_string())?;
        Ok(match value {
            Value::Nodeset(nodes) => nodes
                .document_order()
                .iter()
                .map(|node| node.string_value())
                .collect(),
            other => vec![other.into_string()],
        })
    }
}

/// Whether `expression` has a prefixed name (`svg:title`, `svg:*`): in XPath 1.0, a `:` outside
/// string literals is either that or half of an axis's `::`.
fn has_namespace_prefix(expression: &str) -> bool {
    let mut chars = expression.chars().peekable();
    let mut quote = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(open), _) if c == open => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ':') if chars.peek() == Some(&':') => {
                chars.next();
            }
            (None, ':') => return true,
            (None, _) => {}
        }
    }
    false
}

/// A copy of the parsed page for XPath: elements, attributes, text and comments, with names
/// as HTML parses them (lowercase for HTML elements) and no namespaces, so `//svg/title` and
/// `//h1` both match without prefixes. Built without recursion, whatever the depth of the page.
pub(super) fn xpath_document(html: &Html) -> Package {
    let package = Package::new();
    let document = package.as_document();
    // Open elements down to MAX_DEPTH; `deeper` counts the open elements below it.
    let mut open: Vec<Element<'_>> = Vec::new();
    let mut deeper = 0usize;
    for edge in html.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(element) => {
                    let copy = document.create_element(element.name.local.as_ref());
                    for (name, value) in element.attrs.iter() {
                        copy.set_attribute_value(name.local.as_ref(), value);
                    }
                    match open.last() {
                        Some(parent) => parent.append_child(copy),
                        None => document.root().append_child(copy),
                    }
                    if open.len() < MAX_DEPTH {
                        open.push(copy);
                    } else {
                        deeper += 1;
                    }
                }
                Node::Text(text) => {
                    // Text outside any element (there is none in a parsed document) is dropped.
                    if let Some(parent) = open.last() {
                        parent.append_child(document.create_text(text));
                    }
                }
                Node::Comment(comment) => {
                    let copy = document.create_comment(comment);
                    match open.last() {
                        Some(parent) => parent.append_child(copy),
                        None => document.root().append_child(copy),
                    }
                }
                _ => {}
            },
            Edge::Close(node) if node.value().is_element() => {
                if deeper > 0 {
                    deeper -= 1;
                } else {
                    open.pop();
                }
            }
            Edge::Close(_) => {}
        }
    }
    package
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixed_names_are_found_outside_literals_and_axes() {
        assert!(has_namespace_prefix("//svg:title"));
        assert!(has_namespace_prefix("//div[svg:*]"));
        assert!(has_namespace_prefix("child::a:b"));
        assert!(!has_namespace_prefix("//a[@href='http://x']/@href"));
        assert!(!has_namespace_prefix("child::a/attribute::href"));
        assert!(!has_namespace_prefix(r#"concat("a:b", 'c:"d')"#));
        assert!(XPathRule::new("//div[svg:title]").is_err());
    }
}
