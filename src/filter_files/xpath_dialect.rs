//! StormCrawler's XPath expressions as XPath 1.0 on squall's HTML DOM.
//!
//! StormCrawler's jsoup filters evaluate XPath with Xsoup, whose dialect ends an expression with a
//! function step: `//TITLE/allText()` (all the text), `//P/ownText()` (the element's own text),
//! `//P/tidyText()`, `//A/text()`. Its parse filters evaluate XPath on a DOM built from the page.
//! Both match tag names whatever their case (`//META`). squall's DOM has lowercase HTML names, an
//! element's string value is all its text and whitespace is collapsed anyway, so an expression is
//! translated by lowercasing it outside string literals and mapping the final function step.

/// Xsoup's final function steps with no XPath 1.0 counterpart here.
const UNSUPPORTED: [&str; 3] = ["outerhtml()", "html()", "regex("];

/// `expression` in XPath 1.0 for squall's DOM; an error names what has no counterpart.
pub(super) fn translate(expression: &str) -> Result<String, String> {
    let trimmed = expression.trim();
    if trimmed.starts_with("serialize(") {
        return Err("serialize() (the matched HTML) is not supported".to_string());
    }
    let (mut lowered, masked) = lower_outside_literals(trimmed);
    if let Some(function) = UNSUPPORTED.iter().find(|f| masked.contains(*f)) {
        let name = function.trim_end_matches("()").trim_end_matches('(');
        return Err(format!("the Xsoup function {name}() is not supported"));
    }
    for (step, replacement) in [
        ("/alltext()", ""),
        ("/tidytext()", ""),
        ("/owntext()", "/text()"),
    ] {
        if masked.ends_with(step) {
            lowered.truncate(lowered.len() - step.len());
            lowered.push_str(replacement);
            return Ok(lowered);
        }
    }
    if let Some(step) = ["alltext()", "tidytext()", "owntext()"]
        .iter()
        .find(|f| masked.contains(*f))
    {
        return Err(format!("{step} is only supported as the last step"));
    }
    Ok(lowered)
}

/// `expression` lowercased outside its string literals, and a copy with the literals' contents
/// blanked (the same length), to search for names.
fn lower_outside_literals(expression: &str) -> (String, String) {
    let mut lowered = String::with_capacity(expression.len());
    let mut masked = String::with_capacity(expression.len());
    let mut quote: Option<char> = None;
    for c in expression.chars() {
        match quote {
            Some(open) if c == open => {
                quote = None;
                lowered.push(c);
                masked.push(c);
            }
            Some(_) => {
                lowered.push(c);
                masked.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                lowered.extend(c.to_lowercase());
                masked.extend(c.to_lowercase());
            }
        }
    }
    (lowered, masked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xsoup_steps_and_uppercase_names_become_xpath() {
        let cases = [
            ("//TITLE/allText()", "//title"),
            (
                r#"//META[@name="Keywords"]/@content"#,
                r#"//meta[@name="Keywords"]/@content"#,
            ),
            (
                "//DIV[@class='A B']/ownText()",
                "//div[@class='A B']/text()",
            ),
            ("//P/tidyText()", "//p"),
            ("//A/text()", "//a/text()"),
            ("string(//H1)", "string(//h1)"),
            (
                "//*[@rel=\"canonical\"]/@href",
                "//*[@rel=\"canonical\"]/@href",
            ),
        ];
        for (xsoup, xpath) in cases {
            assert_eq!(translate(xsoup).as_deref(), Ok(xpath), "{xsoup}");
        }
    }

    #[test]
    fn functions_without_a_counterpart_are_named() {
        for (expression, named) in [
            ("//DIV/html()", "html()"),
            ("//DIV/outerHtml()", "outerhtml()"),
            ("//A/regex(@href, 'x')", "regex()"),
            ("serialize(//DIV)", "serialize()"),
            ("//P/allText()/x", "alltext()"),
        ] {
            let err = translate(expression).expect_err(expression);
            assert!(err.contains(named), "{err}");
        }
        assert_eq!(
            translate("//p[.='html()']").as_deref(),
            Ok("//p[.='html()']")
        );
    }
}
