//! The XPath expressions StormCrawler's configurations mostly hold (`//meta[@name="x"]/@content`,
//! `//title`, `//frame/@src`) said as CSS rules: the same nodes in the same order, found on the
//! parsed page itself rather than on a copy made for XPath, several times cheaper a page.
//!
//! Only this shape is translated; any other expression stays XPath:
//! `//` step (`/` or `//` step)* (`/@name`)?, where a step is an element name or `*` with
//! predicates `[@name]` or `[@name="value"]` (value without quotes or backslashes). As on the
//! XPath copy, attributes match by their local name whatever their namespace (`*|name`, and
//! `@href` reads `xlink:href`), and values compare case-sensitively (the `s` flag).

/// The CSS rule (`selector` or `selector@attribute`, as [`CssRule`](super::css::CssRule) reads
/// it) that selects what `xpath` selects, when it has the shape above.
pub(super) fn css_equivalent(xpath: &str) -> Option<String> {
    let mut rest = xpath.trim().strip_prefix("//")?;
    let mut css = String::new();
    loop {
        let (step, after) = split_step(rest)?;
        css.push_str(&step_selector(step)?);
        if after.is_empty() {
            return Some(css);
        }
        if let Some(name) = after.strip_prefix("/@") {
            return is_name(name).then(|| format!("{css}@{name}"));
        }
        if let Some(next) = after.strip_prefix("//") {
            css.push(' ');
            rest = next;
        } else {
            css.push_str(" > ");
            rest = after.strip_prefix('/')?;
        }
    }
}

/// The first step of `path` and what follows it (starting with `/`, or empty).
fn split_step(path: &str) -> Option<(&str, &str)> {
    let mut in_predicate = false;
    let mut quote: Option<char> = None;
    for (i, c) in path.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if in_predicate => quote = Some(c),
            (None, '[') => in_predicate = true,
            (None, ']') => in_predicate = false,
            (None, '/') if !in_predicate => return Some((&path[..i], &path[i..])),
            _ => {}
        }
    }
    (quote.is_none() && !in_predicate).then_some((path, ""))
}

/// A step (`name[@a="v"][@b]`) as a CSS compound selector (`name[*|a="v" s][*|b]`).
fn step_selector(step: &str) -> Option<String> {
    let (name, mut predicates) = match step.find('[') {
        Some(at) => step.split_at(at),
        None => (step, ""),
    };
    if name != "*" && !is_name(name) {
        return None;
    }
    let mut css = name.to_string();
    while let Some(open) = predicates.strip_prefix('[') {
        let end = open.find(']')?;
        css.push_str(&attribute_selector(open[..end].strip_prefix('@')?)?);
        predicates = &open[end + 1..];
    }
    predicates.is_empty().then_some(css)
}

/// `name` or `name="value"` (either quote) as `[name]` or `[name="value" s]`.
fn attribute_selector(predicate: &str) -> Option<String> {
    let Some((name, value)) = predicate.split_once('=') else {
        return is_name(predicate.trim()).then(|| format!("[*|{}]", predicate.trim()));
    };
    let (name, value) = (name.trim(), value.trim());
    let quote = value.chars().next()?;
    let inner = value
        .strip_prefix(quote)?
        .strip_suffix(quote)
        .filter(|_| quote == '"' || quote == '\'')?;
    if !is_name(name) || inner.contains(['"', '\'', '\\']) {
        return None;
    }
    Some(format!("[*|{name}=\"{inner}\" s]"))
}

/// A plain element or attribute name (no prefix, no function, no axis).
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::super::{css::CssRule, dom, xpath, xpath::XPathRule};
    use super::css_equivalent;

    #[test]
    fn translated_rules_select_what_xpath_selects() {
        let page = r#"<html><head><title>T <b>x</b></title>
            <meta name="description" content="d1"><meta name="Description" content="d2">
            <link rel="canonical" href="/c"><link rel="CANONICAL" href="/C"><meta content="none">
            </head><body><div id="a"><ul><li>1</li><li>2<ul><li>3</li></ul></li></ul></div>
            <svg><a xlink:href="/h">x</a></svg><frameset><frame src="/f"></frameset>
            <p id="a">again</p></body></html>"#;
        let html = dom::parse_html(page);
        let package = xpath::xpath_document(&html);
        let document = package.as_document();
        for expression in [
            "//title",
            "//*[@name=\"description\"]/@content",
            "//*[@rel=\"canonical\"]/@href",
            "//meta/@content",
            "//meta[@content]/@name",
            "//div[@id=\"a\"]//li",
            "//div/ul/li",
            "//*[@id='a']",
            "//svg//a/@href",
            "//frame/@src",
            "//nothing/@at",
        ] {
            let css = css_equivalent(expression).expect("translated");
            let by_css = CssRule::by_local_names(&css).expect("css").values(&html);
            let by_xpath = XPathRule::new(expression).expect("xpath").values(&document);
            assert_eq!(Ok(by_css), by_xpath, "{expression} as {css}");
        }
    }

    #[test]
    fn the_usual_shapes_become_css() {
        for (xpath, css) in [
            ("//title", "title"),
            (
                "//*[@rel=\"canonical\"]/@href",
                "*[*|rel=\"canonical\" s]@href",
            ),
            (
                "//meta[@name='keywords']/@content",
                "meta[*|name=\"keywords\" s]@content",
            ),
            ("//frame/@src", "frame@src"),
            ("//div[@id=\"a\"]//ul/li", "div[*|id=\"a\" s] ul > li"),
            ("//link[@rel][@href]/@href", "link[*|rel][*|href]@href"),
            (
                "//a[@type=\"text/html\"]/@href",
                "a[*|type=\"text/html\" s]@href",
            ),
        ] {
            assert_eq!(css_equivalent(xpath).as_deref(), Some(css), "{xpath}");
        }
    }

    #[test]
    fn anything_else_stays_xpath() {
        for xpath in [
            "//title/text()",
            "normalize-space(//h1)",
            "count(//img)",
            "//ul/li[1]",
            "//a[contains(@href, 'x')]",
            "/html/head/title",
            "//a[@title=\"it's\"]",
            "//svg:title",
            "//a/@href/..",
            "//div[@id=\"a\"",
        ] {
            assert_eq!(css_equivalent(xpath), None, "{xpath}");
        }
    }
}
