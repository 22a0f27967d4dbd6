//! Flux's variable substitution, done on a file's text before it is read as YAML: `${name}` from a
//! properties file (Storm's `--filter`), `${ENV-NAME}` from the environment.

use std::collections::BTreeMap;
use std::path::Path;

use super::FluxError;
use crate::config::environment::unfilled_placeholder;

/// The values `${...}` placeholders take.
#[derive(Debug, Clone, Default)]
pub struct Substitutions {
    /// `${name}` → value, from a properties file; a name not listed is left as written.
    properties: BTreeMap<String, String>,
}

impl Substitutions {
    /// Reads a Java properties file (`name=value` or `name: value` lines; `#` and `!` start
    /// comments).
    pub fn from_properties_file(path: &Path) -> Result<Self, FluxError> {
        let text = crate::bounded_file::read_to_string(path, crate::bounded_file::PROPERTIES_FILE)?;
        let mut properties = BTreeMap::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let split = line.find(['=', ':']).map(|at| line.split_at(at));
            let (name, value) = match split {
                Some((name, rest)) => (name.trim(), rest[1..].trim()),
                None => (line, ""),
            };
            properties.insert(name.to_string(), value.to_string());
        }
        Ok(Substitutions { properties })
    }

    /// `text` with its placeholders replaced: properties first, then `${ENV-NAME}`. An
    /// environment variable that is not set is an error naming it and its line in `path`.
    pub fn apply(&self, path: &Path, text: &str) -> Result<String, FluxError> {
        let mut out = text.to_string();
        for (name, value) in &self.properties {
            out = out.replace(&format!("${{{name}}}"), value);
        }
        let out =
            crate::config::environment::expand(&out).map_err(|name| FluxError::Substitution {
                path: path.display().to_string(),
                line: line_of(text, &format!("${{ENV-{name}}}")),
                message: format!("environment variable {name} is not set"),
            })?;
        warn_unfilled(path, &out);
        Ok(out)
    }
}

/// Warns of each placeholder left in `text`, with its line, as Flux does (it leaves them as
/// written); the configuration refuses one in a value sent to sites.
fn warn_unfilled(path: &Path, text: &str) {
    for (at, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(placeholder) = unfilled_placeholder(rest) {
            tracing::warn!(
                "{}, line {}: {placeholder} is not filled: no --flux-filter property names it \
                 (left as written, as Flux leaves it)",
                path.display(),
                at + 1
            );
            rest = rest.split_once(placeholder).map_or("", |(_, after)| after);
        }
    }
}

/// The 1-based line of `text` where `needle` first appears (0 when it does not).
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .map_or(0, |at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounded_file::testing::{assert_over_the_bound, file_holding, padded_file};

    #[test]
    fn properties_then_environment_fill_the_placeholders() {
        let properties = "# comment\nagent.name = squall-test\nother: 2\n";
        let (_dir, file) = file_holding("dev.properties", properties);
        let substitutions = Substitutions::from_properties_file(&file).expect("read");
        let text = "a: ${agent.name}\nb: ${other}\nc: ${ENV-HOME}\nd: ${unknown}\n";
        let home = std::env::var("HOME").unwrap_or_default();
        let out = substitutions
            .apply(Path::new("x.flux"), text)
            .expect("apply");
        assert_eq!(
            out,
            format!("a: squall-test\nb: 2\nc: {home}\nd: ${{unknown}}\n")
        );
    }

    #[test]
    fn a_properties_file_over_its_bound_is_refused_by_name() {
        let over = crate::bounded_file::PROPERTIES_FILE.limit + 1;
        let (_dir, file) = padded_file("huge.properties", "#", "\n", over);
        let refused = Substitutions::from_properties_file(&file).expect_err("over");
        assert_over_the_bound(&refused, &file, "16777216 bytes for a properties file");
    }

    #[test]
    fn an_unset_environment_variable_is_named_with_its_line() {
        let text = "a: 1\nb: ${ENV-SQUALL_SURELY_NOT_SET_42}\n";
        let error = Substitutions::default()
            .apply(Path::new("x.flux"), text)
            .expect_err("unset");
        assert_eq!(
            error.to_string(),
            "x.flux, line 2: environment variable SQUALL_SURELY_NOT_SET_42 is not set"
        );
    }
}
