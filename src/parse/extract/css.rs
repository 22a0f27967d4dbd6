//! CSS rules: a selector, and optionally the attribute whose value is taken instead of the text.

use scraper::{ElementRef, Html, Selector};

/// A compiled CSS rule.
#[derive(Debug)]
pub(super) struct CssRule {
    selector: Selector,
    attribute: Option<String>,
    /// Whether the attribute is read by its local name whatever its namespace (`href` reads
    /// `xlink:href`), as XPath on squall's DOM reads it: for rules translated from XPath.
    local_names: bool,
}

impl CssRule {
    /// Compiles `expression`: a selector, optionally followed by `@name` or `::attr(name)` to
    /// take the attribute `name` of each match instead of its text.
    pub(super) fn new(expression: &str) -> Result<Self, String> {
        let (selector, attribute) = split_attribute(expression);
        if let Some(name) = attribute
            && (name.is_empty() || !name.chars().all(is_attribute_name_char))
        {
            return Err(format!("`{name}` is not an attribute name"));
        }
        let selector = Selector::parse(selector).map_err(|error| error.to_string())?;
        Ok(CssRule {
            selector,
            // HTML attribute names are lowercase in the parsed document.
            attribute: attribute.map(str::to_ascii_lowercase),
            local_names: false,
        })
    }

    /// [`new`](Self::new), the attribute read by its local name in any namespace.
    pub(super) fn by_local_names(expression: &str) -> Result<Self, String> {
        let mut rule = CssRule::new(expression)?;
        rule.local_names = true;
        Ok(rule)
    }

    /// Each match's value, in document order: its attribute when the rule names one (matches
    /// without it give nothing), else its text content.
    pub(super) fn values(&self, html: &Html) -> Vec<String> {
        // Elements in the tree, in tree order (`Html::select` goes by order of creation, and
        // would also see elements the parser took out of the tree).
        let Some(root) = html.tree.root().children().find_map(ElementRef::wrap) else {
            return Vec::new();
        };
        let root_matches = self.selector.matches(&root).then_some(root);
        root_matches
            .into_iter()
            .chain(root.select(&self.selector))
            .filter_map(|element| match &self.attribute {
                Some(name) if self.local_names => element
                    .value()
                    .attrs
                    .iter()
                    .find(|(qualified, _)| &*qualified.local == name.as_str())
                    .map(|(_, value)| value.to_string()),
                Some(name) => element.value().attr(name).map(str::to_string),
                None => Some(text_content(element)),
            })
            .collect()
    }
}

/// The concatenated text of an element's descendants, as the DOM's `textContent`.
fn text_content(element: ElementRef<'_>) -> String {
    element.text().collect()
}

/// Splits `selector@name` or `selector::attr(name)` into the selector and the attribute name.
/// A `@` counts only when it is not escaped (`\@`) and what follows it could be an attribute name,
/// so one inside an attribute selector (`a[href^="mailto:x@y"]`) stays part of the selector.
fn split_attribute(expression: &str) -> (&str, Option<&str>) {
    let expression = expression.trim();
    if let Some(head) = expression.strip_suffix(')')
        && let Some((selector, name)) = head.rsplit_once("::attr(")
    {
        return (selector.trim_end(), Some(name.trim()));
    }
    match expression.rsplit_once('@') {
        Some((selector, name))
            if !selector.ends_with('\\')
                && !name.is_empty()
                && name.chars().all(is_attribute_name_char) =>
        {
            (selector.trim_end(), Some(name))
        }
        _ => (expression, None),
    }
}

/// Whether `c` may appear in an attribute name as HTML parses them.
fn is_attribute_name_char(c: char) -> bool {
    !(c.is_whitespace()
        || c.is_control()
        || matches!(c, '"' | '\'' | '>' | '/' | '=' | '[' | ']' | '(' | ')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_suffixes() {
        assert_eq!(split_attribute("a.next@href"), ("a.next", Some("href")));
        assert_eq!(split_attribute(" a.next @href "), ("a.next", Some("href")));
        assert_eq!(
            split_attribute("a.next::attr(href)"),
            ("a.next", Some("href"))
        );
        assert_eq!(split_attribute("h1"), ("h1", None));
        let mailto = r#"a[href^="mailto:x@y"]"#;
        assert_eq!(split_attribute(mailto), (mailto, None));
        assert_eq!(split_attribute(r"p.md\@wide"), (r"p.md\@wide", None));
        assert_eq!(
            split_attribute(r#"a[title="x@y"]@href"#),
            (r#"a[title="x@y"]"#, Some("href"))
        );
    }

    #[test]
    fn invalid_rules_are_refused() {
        assert!(CssRule::new("h1[").is_err());
        assert!(CssRule::new("@href").is_err(), "no selector");
        assert!(CssRule::new("a::attr()").is_err(), "no attribute name");
        assert!(CssRule::new("a::attr(x y)").is_err());
        assert!(CssRule::new("").is_err());
    }
}
