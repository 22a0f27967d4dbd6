//! Each key's one default, as an example file documents it: the keys a settings type reads with
//! the value each takes when it is absent, written the way a file writes it (through the type's
//! own serde, so that seconds read as seconds), and the check that a file lists every one of them
//! at that value.

use serde::Serialize;
use serde_json::Value;

/// The keys `T` reads and the value each takes when the key is absent, one entry a key: `T`'s
/// `Default` serialized through serde (so a `Duration` read in seconds is written in seconds, `-1`
/// stands for none where the key says so), as a file would write it. Fields that are not keys
/// (`#[serde(skip)]`) are not listed.
///
/// ```
/// #[derive(serde::Serialize, Default)]
/// struct Keys {
///     #[serde(rename = "pages.max")]
///     max: u32,
/// }
/// let defaults = squall::settings::documented_defaults::<Keys>();
/// assert_eq!(defaults, vec![("pages.max".to_string(), serde_json::json!(0))]);
/// ```
pub fn documented_defaults<T: Serialize + Default>() -> Vec<(String, Value)> {
    match serde_json::to_value(T::default()) {
        Ok(Value::Object(fields)) => fields.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// What an example file says wrong about `defaults` (as [`documented_defaults`] lists them),
/// each key written in the file as `prefix` followed by its name: a key the file does not set, or
/// sets to another value than its default (numbers compared by value: `10` and `10.0` agree). Each
/// line names the key, and the file's value and the default. Empty when the file documents every
/// key at its one default; the file's other keys are not looked at.
///
/// ```
/// use serde_json::json;
/// let defaults = vec![
///     ("tabs".to_string(), json!(4)),
///     ("delay".to_string(), json!(1.0)),
/// ];
/// let file = "browser.tabs: 4\nbrowser.delay: 1\n";
/// assert!(squall::settings::undocumented_defaults(&defaults, file, "browser.").is_empty());
/// let wrong = squall::settings::undocumented_defaults(&defaults, "browser.tabs: 8\n", "browser.");
/// assert_eq!(wrong.len(), 2);
/// assert!(wrong[0].contains("browser.tabs"));
/// assert!(wrong[1].contains("browser.delay"));
/// ```
pub fn undocumented_defaults(
    defaults: &[(String, Value)],
    file: &str,
    prefix: &str,
) -> Vec<String> {
    let listed = match file_values(file) {
        Ok(listed) => listed,
        Err(message) => return vec![message],
    };
    defaults
        .iter()
        .filter_map(|(key, default)| {
            let name = format!("{prefix}{key}");
            match listed.get(&name) {
                None => Some(format!(
                    "`{name}` is not in the file (its default: {default})"
                )),
                Some(value) if numbers_as_floats(value) != numbers_as_floats(default) => Some(
                    format!("`{name}`: the file says {value}, the default is {default}"),
                ),
                Some(_) => None,
            }
        })
        .collect()
}

/// The top-level keys of a YAML file and their values, as JSON values.
fn file_values(file: &str) -> Result<serde_json::Map<String, Value>, String> {
    let yaml: serde_norway::Value =
        serde_norway::from_str(file).map_err(|error| format!("the file is not YAML: {error}"))?;
    match serde_json::to_value(yaml) {
        Ok(Value::Object(values)) => Ok(values),
        Ok(Value::Null) => Ok(serde_json::Map::new()),
        Ok(_) => Err("the file is not a mapping of keys".to_string()),
        Err(error) => Err(format!("the file's values are not plain data: {error}")),
    }
}

/// `value` with every number as a float, so that `10` and `10.0` compare equal.
fn numbers_as_floats(value: &Value) -> Value {
    match value {
        Value::Number(number) => number
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| value.clone(), Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(numbers_as_floats).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, field)| (key.clone(), numbers_as_floats(field)))
                .collect(),
        ),
        _ => value.clone(),
    }
}
