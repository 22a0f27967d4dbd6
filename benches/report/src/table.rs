//! Markdown tables and the paragraph of a section whose file is missing, shared by every section.

/// What a section or stage says when its benchmark did not run.
pub const NOT_RUN: &str = "not run in this run";

/// Renders a Markdown table; `|` inside cells is escaped.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let line = |cells: &mut dyn Iterator<Item = String>| {
        let cells: Vec<String> = cells.map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(&mut header.iter().map(|h| h.to_string()));
    out.push_str(&line(&mut header.iter().map(|_| "---".to_string())));
    for row in rows {
        out.push_str(&line(&mut row.iter().cloned()));
    }
    out
}

/// A paragraph saying the file behind a section was not there.
pub fn not_run(file: &str) -> String {
    format!("_{}_ (no `{file}`).\n", capitalised(NOT_RUN))
}

/// The text with its first letter in upper case.
fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_escapes_pipes() {
        let t = table(&["a", "b"], &[vec!["x|y".into(), "z".into()]]);
        assert_eq!(t, "| a | b |\n| --- | --- |\n| x\\|y | z |\n");
    }
}
