//! Putting the generated Markdown between markers in an existing file, and the
//! relative path its image links need.

use std::path::{Component, Path, PathBuf};

use anyhow::{Result, bail};

/// The line after which the generated Markdown goes.
pub const BEGIN: &str = "<!-- results:begin -->";
/// The line before which the generated Markdown ends.
pub const END: &str = "<!-- results:end -->";

/// Replaces everything between the `BEGIN` and `END` marker lines of `doc`
/// with `generated`, keeping the marker lines and everything outside them.
pub fn splice(doc: &str, generated: &str) -> Result<String> {
    let mut offset = 0;
    let mut begin_end = None; // byte index just after the begin line
    let mut end_start = None; // byte index where the end line starts
    for line in doc.split_inclusive('\n') {
        let trimmed = line.trim();
        if begin_end.is_none() {
            if trimmed == BEGIN {
                begin_end = Some(offset + line.len());
            } else if trimmed == END {
                bail!("`{END}` comes before `{BEGIN}`");
            }
        } else if trimmed == END {
            end_start = Some(offset);
            break;
        }
        offset += line.len();
    }
    let Some(begin_end) = begin_end else {
        bail!("no line `{BEGIN}` found");
    };
    let Some(end_start) = end_start else {
        bail!("no line `{END}` found after `{BEGIN}`");
    };
    let newline = if doc.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(doc.len() + generated.len());
    out.push_str(&doc[..begin_end]);
    if !out.ends_with('\n') {
        out.push_str(newline);
    }
    out.push_str(newline);
    for line in generated.trim().lines() {
        out.push_str(line);
        out.push_str(newline);
    }
    out.push_str(newline);
    out.push_str(&doc[end_start..]);
    Ok(out)
}

/// The path of `target` relative to the directory `base`, with `/` separators,
/// ending in `/` unless empty; e.g. base `/a`, target `/a/b/c` → `b/c/`.
/// Both should be absolute (canonical); if they share no root the target is
/// returned whole.
pub fn relative_prefix(base: &Path, target: &Path) -> String {
    let base: Vec<Component<'_>> = base.components().collect();
    let target: Vec<Component<'_>> = target.components().collect();
    let common = base.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let rel: PathBuf = if common == 0 && !base.is_empty() {
        target.iter().collect()
    } else {
        base[common..]
            .iter()
            .map(|_| Component::ParentDir)
            .chain(target[common..].iter().copied())
            .collect()
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let mut prefix = parts.join("/");
    if prefix.starts_with("//") {
        // A root component joined with "/" gives "//": keep a single slash.
        prefix.remove(0);
    }
    if !prefix.is_empty() && !prefix.ends_with('/') {
        prefix.push('/');
    }
    prefix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_between_markers() -> Result<()> {
        let doc =
            "# Bench\n\nintro\n<!-- results:begin -->\nold\nstuff\n<!-- results:end -->\nafter\n";
        let out = splice(doc, "### New\n\ntext\n")?;
        assert_eq!(
            out,
            "# Bench\n\nintro\n<!-- results:begin -->\n\n### New\n\ntext\n\n<!-- results:end -->\nafter\n"
        );
        // Splicing again gives the same file.
        assert_eq!(splice(&out, "### New\n\ntext\n")?, out);
        Ok(())
    }

    #[test]
    fn adjacent_markers_and_no_trailing_newline() -> Result<()> {
        let doc = "<!-- results:begin -->\n<!-- results:end -->";
        assert_eq!(
            splice(doc, "x")?,
            "<!-- results:begin -->\n\nx\n\n<!-- results:end -->"
        );
        Ok(())
    }

    #[test]
    fn keeps_crlf() -> Result<()> {
        let doc = "a\r\n<!-- results:begin -->\r\nold\r\n<!-- results:end -->\r\n";
        assert_eq!(
            splice(doc, "n1\nn2")?,
            "a\r\n<!-- results:begin -->\r\n\r\nn1\r\nn2\r\n\r\n<!-- results:end -->\r\n"
        );
        Ok(())
    }

    #[test]
    fn missing_markers_are_errors() {
        let err = |doc: &str| {
            splice(doc, "x")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err("no markers\n").contains("results:begin"));
        assert!(err("<!-- results:begin -->\n").contains("results:end"));
        assert!(err("<!-- results:end -->\n<!-- results:begin -->\n").contains("before"));
    }

    #[test]
    fn relative_prefixes() {
        let p = |a: &str, b: &str| relative_prefix(Path::new(a), Path::new(b));
        assert_eq!(
            p("/work/main", "/work/main/benches/results"),
            "benches/results/"
        );
        assert_eq!(p("/work/main", "/work/main"), "");
        assert_eq!(
            p("/work/main/docs", "/work/main/benches/results"),
            "../benches/results/"
        );
        assert_eq!(p("/work/main/docs", "/work"), "../../");
    }
}
