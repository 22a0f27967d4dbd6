//! Rules without the `extract` feature: no HTML5 parser, CSS selectors or XPath in this build, so
//! every expression is refused, naming the feature, and no rule exists to evaluate.

use super::Expression;

/// What a compiled rule selects with: nothing can be compiled in this build.
#[derive(Debug)]
pub(super) enum Selects {}

impl Selects {
    /// Whether the rule needs the page's copy for XPath.
    pub(super) fn is_xpath(&self) -> bool {
        match *self {}
    }
}

/// Why `expression` cannot be compiled: the feature it needs.
pub(super) fn compile(expression: &Expression) -> Result<Selects, String> {
    Err(format!(
        "{} needs squall's `extract` feature, which this build leaves out",
        match expression {
            Expression::Css(_) => "a CSS selector",
            Expression::XPath(_) => "an XPath expression",
        }
    ))
}

/// A page for rules that cannot exist: nothing is parsed.
pub(super) struct Page;

impl Page {
    /// Nothing to parse the page for.
    pub(super) fn parse(_body: &[u8], _xpath: bool) -> Self {
        Page
    }

    /// Never called: no rule compiles.
    pub(super) fn values(&self, selects: &Selects, _key: &str) -> Vec<String> {
        match *selects {}
    }
}
