//! Rules compiled and evaluated (feature `extract`): CSS selectors on the page's HTML5 DOM
//! (scraper), XPath on a copy of it (sxd-xpath), the page parsed once for all of them.

use sxd_document::Package;

use super::Expression;
use super::css::CssRule;
use super::xpath::{XPathRule, xpath_document};
use super::{dom, simple_xpath};
use crate::parse::charset::decode_html;

/// What a compiled rule selects with.
#[derive(Debug)]
pub(super) enum Selects {
    Css(CssRule),
    XPath(XPathRule),
}

impl Selects {
    /// Whether the rule needs the page's copy for XPath.
    pub(super) fn is_xpath(&self) -> bool {
        matches!(self, Selects::XPath(_))
    }
}

/// `expression` compiled, or why it does not compile.
pub(super) fn compile(expression: &Expression) -> Result<Selects, String> {
    match expression {
        Expression::Css(text) => CssRule::new(text).map(Selects::Css),
        Expression::XPath(text) => xpath_rule(text),
    }
}

/// An XPath rule: as CSS when it has the simple shape that says the same
/// ([`simple_xpath`]), sparing the page's copy for XPath; else XPath.
fn xpath_rule(text: &str) -> Result<Selects, String> {
    let checked = XPathRule::new(text)?;
    match simple_xpath::css_equivalent(text).map(|css| CssRule::by_local_names(&css)) {
        Some(Ok(css)) => Ok(Selects::Css(css)),
        _ => Ok(Selects::XPath(checked)),
    }
}

/// A page parsed for the rules: its DOM, and its copy for XPath when a rule needs one.
pub(super) struct Page {
    html: scraper::Html,
    xpath: Option<Package>,
}

impl Page {
    /// `body` decoded and parsed, copied for XPath when `xpath`.
    pub(super) fn parse(body: &[u8], xpath: bool) -> Self {
        let html = dom::parse_html(&decode_html(body));
        let xpath = xpath.then(|| xpath_document(&html));
        Page { html, xpath }
    }

    /// What `selects` selects on the page (the rule's `key` names it in a failed XPath's log).
    pub(super) fn values(&self, selects: &Selects, key: &str) -> Vec<String> {
        match (selects, &self.xpath) {
            (Selects::Css(css), _) => css.values(&self.html),
            (Selects::XPath(xpath), Some(package)) => match xpath.values(&package.as_document()) {
                Ok(values) => values,
                Err(message) => {
                    tracing::debug!(%key, %message, "XPath evaluation failed");
                    Vec::new()
                }
            },
            (Selects::XPath(_), None) => Vec::new(),
        }
    }
}
