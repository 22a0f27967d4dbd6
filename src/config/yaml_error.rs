//! The line a YAML error is on, where the parser names none: a key given twice in one mapping
//! (the parser names only the key), aliases that expand too far (it names nothing).

/// The 1-based line of `text` that `error` is about, and the parser's words without their own
/// ` at line L column C`. A duplicate key is found at its second place; aliases that expand too
/// far at the first alias; anything else with no place of its own at line 1.
pub fn locate(error: &serde_norway::Error, text: &str) -> (usize, String) {
    let mut words = error.to_string();
    if let Some(location) = error.location() {
        let suffix = format!(" at line {} column {}", location.line(), location.column());
        if let Some(stripped) = words.strip_suffix(&suffix) {
            words = stripped.to_string();
        }
    }
    // (after the mapping's path, `a.b: `, when the mapping is not the top level)
    let duplicate = words
        .split_once("duplicate entry with key ")
        .map(|(_, key)| key.trim_matches('"').to_string());
    let line = match duplicate {
        // The parser's place for a duplicate is the mapping's, not the key's.
        Some(key) => duplicate_key_line(text, &key),
        None if words.starts_with("repetition limit exceeded") => {
            words.push_str(" (aliases expand too far)");
            first_alias_line(text)
        }
        None => error.location().map(|l| l.line()),
    };
    (line.unwrap_or(1), words)
}

/// The line where `key` is given a second time in the same block mapping (two places at the same
/// indentation with nothing less indented between); failing that, its first place.
fn duplicate_key_line(text: &str, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let places: Vec<usize> = (0..lines.len())
        .filter(|&at| defines(lines[at], key))
        .collect();
    for (n, &first) in places.iter().enumerate() {
        let indent = indentation(lines[first]);
        for &second in &places[n + 1..] {
            let between = &lines[first + 1..second];
            let same_block = between
                .iter()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .all(|l| indentation(l) >= indent);
            if !same_block {
                break;
            }
            if indentation(lines[second]) == indent {
                return Some(second + 1);
            }
        }
    }
    let fallback = lines.iter().position(|line| line.contains(key));
    places.first().copied().or(fallback).map(|at| at + 1)
}

/// Whether `line` gives `key` in a block mapping (`key:`, `"key":` or `'key':`, as an item of a
/// sequence too).
fn defines(line: &str, key: &str) -> bool {
    let content = line.trim_start().trim_start_matches("- ").trim_start();
    ["", "\"", "'"].iter().any(|quote| {
        content
            .strip_prefix(&format!("{quote}{key}{quote}"))
            .map(str::trim_start)
            .is_some_and(|rest| rest == ":" || rest.starts_with(": ") || rest.starts_with(":\t"))
    })
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The line of the first alias (`*name` for an anchor `&name` of the text).
fn first_alias_line(text: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            line.match_indices('*').any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let name: String = line[at + 1..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                let opens = before.is_none_or(|c| c.is_whitespace() || "[{,:".contains(c));
                opens && !name.is_empty() && text.contains(&format!("&{name}"))
            })
        })
        .map(|at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(text: &str) -> (usize, String) {
        let error = serde_norway::from_str::<serde_norway::Value>(text).expect_err("not YAML");
        locate(&error, text)
    }

    #[test]
    fn a_key_given_twice_is_found_at_its_second_place_in_the_same_mapping() {
        let text = "b:\n  x: 3\na:\n  x: 1\n\n  # note\n  \"x\": 2\nc: 1\n";
        let (line, words) = located(text);
        assert_eq!(
            (line, words.as_str()),
            (7, "a: duplicate entry with key \"x\"")
        );
        let (line, _) =
            located("fetcher.threads.number: 2\nhttp.agent.name: x\nhttp.agent.name: y\n");
        assert_eq!(line, 3);
    }

    #[test]
    fn aliases_that_expand_too_far_are_found_at_the_first_alias() {
        let mut text = "a: &a [1]\n".to_string();
        for (name, from) in [("b", "a"), ("c", "b"), ("d", "c"), ("e", "d"), ("f", "e")] {
            let uses = vec![format!("*{from}"); 9].join(",");
            text.push_str(&format!("{name}: &{name} [{uses}]\n"));
        }
        text.push_str(&format!("g: [{}]\n", ["*f"; 9].join(",")));
        let (line, words) = located(&text);
        assert_eq!(line, 2, "{words}");
        assert!(words.contains("repetition limit exceeded"), "{words}");
    }

    #[test]
    fn the_parser_s_own_place_is_kept() {
        let (line, words) = located("a: 1\nb: *nope\n");
        assert_eq!((line, words.as_str()), (2, "unknown anchor"));
        let (line, words) = located("a: 1\nb: [x\n");
        assert_eq!(line, 3, "{words}");
    }
}
