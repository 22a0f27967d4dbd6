//! The rule files of StormCrawler's regex filter (`+`/`-` lines) and regex normalizer (XML).

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;
use quick_xml::reader::Reader;

use super::FilterFileError;

/// The name of the normalizer rules StormCrawler ships in its jar, which squall ships too.
pub const DEFAULT_NORMALIZERS_NAME: &str = "default-regex-normalizers.xml";

/// squall's own `default-regex-normalizers.xml`: removes session ids from paths and queries.
pub const DEFAULT_NORMALIZERS: &str = include_str!("default-regex-normalizers.xml");

/// One line of a regex filter file: `+regex` keeps, `-regex` drops; empty lines and lines that
/// start with `#` or a space are skipped; any other first character is an error. `Ok(None)` for a
/// skipped line.
pub(super) fn filter_rule(line: &str) -> Result<Option<(bool, String)>, String> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut chars = line.chars();
    match chars.next() {
        None | Some('#' | ' ' | '\n') => Ok(None),
        Some('+') => Ok(Some((true, chars.as_str().to_string()))),
        Some('-') => Ok(Some((false, chars.as_str().to_string()))),
        Some(other) => Err(format!(
            "a rule starts with + (keep) or - (drop), or the line with # (comment), not {other:?}"
        )),
    }
}

/// The rules of a regex filter file, in order.
pub(super) fn filter_rules(path: &str, text: &str) -> Result<Vec<(bool, String)>, FilterFileError> {
    let mut rules = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let rule = filter_rule(line).map_err(|message| FilterFileError::BadRule {
            path: path.to_string(),
            location: format!("line {}", index + 1),
            message,
        })?;
        rules.extend(rule);
    }
    Ok(rules)
}

/// The rules of a normalizer file: `<regex-normalize>` holding `<regex>` elements, each with a
/// `<pattern>` and a `<substitution>` (empty when missing), in order.
pub(super) fn normalizer_rules(
    path: &str,
    xml: &str,
) -> Result<Vec<(String, String)>, FilterFileError> {
    let bad = |location: String, message: String| FilterFileError::BadRule {
        path: path.to_string(),
        location,
        message,
    };
    let mut reader = Reader::from_str(xml);
    let mut state = NormalizerState::default();
    loop {
        let position = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| bad(format!("byte {position}"), format!("not valid XML: {e}")))?;
        let result = match event {
            Event::Eof => break,
            Event::Start(e) => state.start(e.local_name().into_inner()),
            Event::Empty(e) => state
                .start(e.local_name().into_inner())
                .and_then(|()| state.end()),
            Event::End(_) => state.end(),
            Event::Text(t) => {
                state.text(&t.xml10_content());
                Ok(())
            }
            Event::CData(t) => {
                state.text(&t.xml10_content());
                Ok(())
            }
            Event::GeneralRef(r) => {
                let name = r.xml10_content().to_string();
                match r.resolve_char_ref() {
                    Ok(Some(c)) => state.text(&c.to_string()),
                    _ => state.text(resolve_predefined_entity(&name).unwrap_or_default()),
                }
                Ok(())
            }
            _ => Ok(()),
        };
        result.map_err(|message| bad(format!("rule {}", state.rules.len() + 1), message))?;
    }
    if let Some(open) = state.open.last() {
        return Err(bad(
            "the end".to_string(),
            format!("<{open}> is not closed"),
        ));
    }
    Ok(state.rules)
}

/// Where the reader is in a normalizer file.
#[derive(Debug, Default)]
struct NormalizerState {
    /// Open elements, outermost first.
    open: Vec<String>,
    pattern: Option<String>,
    substitution: Option<String>,
    rules: Vec<(String, String)>,
}

impl NormalizerState {
    fn start(&mut self, name: &str) -> Result<(), String> {
        match (self.open.len(), name) {
            (0, "regex-normalize") | (1, "regex") => {}
            (0, other) => {
                return Err(format!(
                    "the root element is <{other}>, not <regex-normalize>"
                ));
            }
            (1, other) => return Err(format!("<{other}> where a <regex> was expected")),
            (2, "pattern") => self.pattern = Some(String::new()),
            (2, "substitution") => self.substitution = Some(String::new()),
            _ => {}
        }
        self.open.push(name.to_string());
        Ok(())
    }

    fn end(&mut self) -> Result<(), String> {
        if self.open.len() == 2 {
            let pattern = self.pattern.take().filter(|p| !p.trim().is_empty());
            let Some(pattern) = pattern else {
                return Err("a <regex> without a <pattern>".to_string());
            };
            self.rules
                .push((pattern, self.substitution.take().unwrap_or_default()));
        }
        self.open.pop();
        Ok(())
    }

    fn text(&mut self, text: &str) {
        let field = match self.open.get(2).map(String::as_str) {
            Some("pattern") => &mut self.pattern,
            Some("substitution") => &mut self.substitution,
            _ => return,
        };
        if let Some(field) = field {
            field.push_str(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_lines_keep_drop_or_are_skipped() {
        let text = "# comment\n\n+^http://a\\.test/\r\n-\\.png$\n ignored\n+.\n";
        let rules = filter_rules("f.txt", text).expect("valid");
        assert_eq!(
            rules,
            [
                (true, "^http://a\\.test/".to_string()),
                (false, "\\.png$".to_string()),
                (true, ".".to_string())
            ]
        );
        let err = filter_rules("f.txt", "+a\nregex\n").expect_err("no sign");
        let message = err.to_string();
        assert!(message.contains("f.txt: line 2"), "{message}");
    }

    #[test]
    fn normalizer_files_give_patterns_and_substitutions_in_order() {
        let xml = r#"<?xml version="1.0"?>
            <!-- comment -->
            <regex-normalize>
              <regex><pattern>a&amp;b</pattern><substitution>$1&#38;</substitution></regex>
              <regex><pattern><![CDATA[x<y]]></pattern><substitution/></regex>
              <regex><pattern>z</pattern></regex>
            </regex-normalize>"#;
        let rules = normalizer_rules("n.xml", xml).expect("valid");
        let expected = [("a&b", "$1&"), ("x<y", ""), ("z", "")];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect();
        assert_eq!(rules, expected);
        let shipped =
            normalizer_rules(DEFAULT_NORMALIZERS_NAME, DEFAULT_NORMALIZERS).expect("valid");
        assert_eq!(shipped.len(), 5);
    }

    #[test]
    fn bad_normalizer_files_are_named() {
        for (xml, expected) in [
            ("<rules/>", "<rules>, not <regex-normalize>"),
            (
                "<regex-normalize><rule/></regex-normalize>",
                "<rule> where a <regex>",
            ),
            (
                "<regex-normalize><regex><substitution>x</substitution></regex></regex-normalize>",
                "rule 1: a <regex> without a <pattern>",
            ),
            ("<regex-normalize><regex>", ""),
        ] {
            let err = normalizer_rules("n.xml", xml).expect_err(xml);
            assert!(err.to_string().contains(expected), "{err}");
            assert!(err.to_string().starts_with("n.xml: "), "{err}");
        }
    }
}
