//! Reading the benchmarks' JSON: the repeated measurement every section shares, a file that may
//! be missing, and parse errors that name the offending field.

use std::path::Path;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;

pub use squall_bench_schema::Spread;

/// Reads and parses `dir/name`, or returns `None` if it does not exist.
pub fn read_optional<T: DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    parse(&text)
        .map(Some)
        .with_context(|| format!("parsing {}", path.display()))
}

/// Parses JSON text, naming the path of the offending field on error.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "?" || path == "." {
            anyhow::anyhow!("{}", e.into_inner())
        } else {
            anyhow::anyhow!("at field `{path}`: {}", e.into_inner())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names_the_field() {
        let err = parse::<Vec<Spread>>(r#"[{"median": "fast", "min": 1, "max": 2}]"#)
            .err()
            .map(|e| format!("{e:#}"))
            .unwrap_or_default();
        assert!(err.contains("[0].median"), "{err}");
    }
}
