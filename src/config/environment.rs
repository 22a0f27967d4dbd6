//! `${ENV-NAME}` placeholders, as Storm's Flux writes them: replaced by the environment variable
//! `NAME`, so that a secret (a password, an API key) lives in the environment rather than in a file.
//! Flux files have them replaced in their text; configuration files in their values.

use serde_norway::Value;

use super::ConfigError;

/// `text` with every `${ENV-NAME}` replaced by the variable's value; the name of the first variable
/// that is not set is the error. A `${ENV-` without its closing `}` is left as written.
pub fn expand(text: &str) -> Result<String, String> {
    let mut result = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${ENV-") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 6..start + end];
        let value = std::env::var(name).map_err(|_| name.to_string())?;
        result.push_str(&rest[..start]);
        result.push_str(&value);
        rest = &rest[start + end + 1..];
    }
    result.push_str(rest);
    Ok(result)
}

/// `value` (the value of `key` in a configuration file) with its placeholders replaced, in text
/// and in the texts of a list; the key names a variable that is not set. The message does not
/// hold the value.
pub(super) fn expand_value(key: &str, value: Value) -> Result<Value, ConfigError> {
    let unset = |name: String| ConfigError::InvalidValue {
        key: key.to_string(),
        message: format!("environment variable {name} (named by ${{ENV-{name}}}) is not set"),
    };
    match value {
        Value::String(text) if text.contains("${ENV-") => {
            expand(&text).map(Value::String).map_err(unset)
        }
        Value::Sequence(items) => items
            .into_iter()
            .map(|item| expand_value(key, item))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Sequence),
        other => Ok(other),
    }
}

/// The first `${...}` placeholder of `text` (with its braces): one that nothing filled, once
/// substitution is done.
pub fn unfilled_placeholder(text: &str) -> Option<&str> {
    let start = text.find("${")?;
    let end = text[start..].find('}')?;
    Some(&text[start..start + end + 1])
}

/// Refuses an unfilled placeholder in the value of a key whose value squall sends to sites
/// (`http.*`: the User-Agent, custom headers, credentials), rather than send it as written.
pub(super) fn refuse_unfilled(key: &str, value: &Value) -> Result<(), ConfigError> {
    if !key.starts_with("http.") {
        return Ok(());
    }
    let texts: Vec<&str> = match value {
        Value::String(text) => vec![text.as_str()],
        Value::Sequence(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match texts.into_iter().find_map(unfilled_placeholder) {
        Some(placeholder) => Err(ConfigError::InvalidValue {
            key: key.to_string(),
            message: format!(
                "it holds {placeholder}, a placeholder nothing filled (a --flux-filter \
                 properties file names the values of ${{name}}; ${{ENV-NAME}} takes an environment \
                 variable): squall does not send it to sites as written"
            ),
        }),
        None => Ok(()),
    }
}

/// Whether a key's value may be a secret (a password, a key, a token): shown as `***`.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "password",
        "pass",
        "api.key",
        "secret",
        "token",
        "credentials",
    ]
    .iter()
    .any(|word| key.ends_with(word) || key.contains(&format!("{word}.")))
        && !key.ends_with(".file")
}

/// Writes keys and values for `Debug`, with the values of [secret keys](is_secret_key) hidden.
pub(super) fn debug_keys(
    f: &mut std::fmt::Formatter<'_>,
    mapping: &serde_norway::Mapping,
) -> std::fmt::Result {
    let mut map = f.debug_map();
    for (key, value) in mapping {
        let name = key.as_str().unwrap_or_default();
        if is_secret_key(name) {
            map.entry(&name, &"***");
        } else {
            map.entry(&name, value);
        }
    }
    map.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_the_environment_and_an_unset_variable_is_named() {
        let home = std::env::var("HOME").unwrap_or_default();
        assert_eq!(
            expand("at ${ENV-HOME}/x").as_deref(),
            Ok(&*format!("at {home}/x"))
        );
        assert_eq!(expand("no ${ENV-open").as_deref(), Ok("no ${ENV-open"));
        assert_eq!(
            expand("${ENV-SQUALL_SURELY_UNSET_VARIABLE}"),
            Err("SQUALL_SURELY_UNSET_VARIABLE".to_string())
        );
        let list = Value::Sequence(vec![Value::from("${ENV-HOME}"), Value::from(3)]);
        let expanded = expand_value("k", list).expect("set");
        assert_eq!(
            expanded,
            Value::Sequence(vec![Value::from(home), Value::from(3)])
        );
        let error = expand_value(
            "es.api.key",
            Value::from("${ENV-SQUALL_SURELY_UNSET_VARIABLE}"),
        )
        .expect_err("unset");
        assert!(error.to_string().contains("es.api.key"), "{error}");
        assert!(
            error.to_string().contains("SQUALL_SURELY_UNSET_VARIABLE"),
            "{error}"
        );
    }

    #[test]
    fn an_unfilled_placeholder_in_a_value_sent_to_sites_is_refused() {
        let built = |assignments: &[&str]| {
            let mut builder = crate::config::ConfigBuilder::new();
            for assignment in assignments {
                builder = builder.set(assignment)?;
            }
            builder.build()
        };
        let error = built(&["http.agent.name=${agent.name}"]).expect_err("unfilled");
        let message = error.to_string();
        assert!(message.contains("`http.agent.name`"), "{message}");
        assert!(
            message.contains("holds ${agent.name}, a placeholder"),
            "{message}"
        );
        let headers = "http.custom.headers=[\"X-Ok=1\", \"X-Key=${ENV-KEY}\"]";
        let error = built(&["http.agent.name=ok", headers]).expect_err("unfilled");
        assert!(error.to_string().contains("${ENV-KEY}"), "{error}");
        // Elsewhere it is left to the key's own reading; a `$` alone is no placeholder.
        built(&["http.agent.name=ok", "es.status.index.name=crawl-${x}"]).expect("kept");
        built(&["http.agent.name=price$5 {x}"]).expect("no placeholder");
        assert_eq!(unfilled_placeholder("a ${b} ${c}"), Some("${b}"));
        assert_eq!(unfilled_placeholder("a ${b"), None);
    }

    #[test]
    fn debug_hides_the_values_of_secret_keys() {
        let builder = crate::config::ConfigBuilder::new()
            .set("es.api.key=id:very-secret")
            .and_then(|b| b.set("es.password=hunter2"))
            .and_then(|b| b.set("http.proxy.pass=proxy-secret"))
            .and_then(|b| b.set("es.api.key.file=/run/key"))
            .and_then(|b| b.set("http.agent.name=shown"))
            .expect("keys");
        let shown = format!("{builder:?}");
        for secret in ["very-secret", "hunter2", "proxy-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(
            shown.contains("/run/key") && shown.contains("shown"),
            "{shown}"
        );
        let config = builder.build().expect("valid");
        let shown = format!("{:?}", config.extensions);
        assert!(
            !shown.contains("very-secret") && !shown.contains("hunter2"),
            "{shown}"
        );
    }
}
