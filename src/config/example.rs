//! Checking an example configuration file of a crate's keys against the type that reads them.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_norway::Value;

use super::{ConfigBuilder, field_names, listed_keys};

/// Checks an example file of the keys `T` reads under `prefixes` (those going on with one of
/// `others` left out, as [`CrawlConfig::extension_except`](super::CrawlConfig::extension_except)
/// reads them): that it lists every key `T` knows, written under the first prefix, one
/// `key: value` a line, and sets each to its default. The error names the keys missing, the keys
/// not known, or the keys whose value is not the default.
///
/// ```
/// // The keys a crate reads under `browser.` (one of the prefixes the core keeps for other crates).
/// #[derive(serde::Serialize, serde::Deserialize, Default)]
/// #[serde(default)]
/// struct Keys {
///     tabs: u32,
/// }
/// squall::config::check_example::<Keys>("browser.tabs: 0\n", &["browser."], &[])
///     .expect("the example lists every key at its default");
/// let error = squall::config::check_example::<Keys>("browser.tabs: 3\n", &["browser."], &[]);
/// assert!(error.unwrap_err().contains("browser.tabs"));
/// let error = squall::config::check_example::<Keys>("", &["browser."], &[]);
/// assert!(error.unwrap_err().contains("tabs"));
/// ```
pub fn check_example<T>(text: &str, prefixes: &[&str], others: &[&str]) -> Result<(), String>
where
    T: DeserializeOwned + Serialize + Default,
{
    let canonical = prefixes.first().copied().unwrap_or_default();
    let mut listed: Vec<String> = listed_keys(text, canonical)
        .into_iter()
        .filter(|key| !others.iter().any(|other| key.starts_with(other)))
        .collect();
    let mut known = field_names::<T>();
    listed.sort();
    known.sort();
    let missing: Vec<&String> = known.iter().filter(|k| !listed.contains(k)).collect();
    let unknown: Vec<&String> = listed.iter().filter(|k| !known.contains(k)).collect();
    if !missing.is_empty() || !unknown.is_empty() {
        return Err(format!(
            "keys missing under {canonical}: {missing:?}; keys not known: {unknown:?}"
        ));
    }
    let config = ConfigBuilder::new()
        .yaml_str(text)
        .and_then(|builder| builder.set("http.agent.name=example"))
        .and_then(ConfigBuilder::build)
        .map_err(|e| e.to_string())?;
    let read: T = config
        .extension_except(prefixes, others)
        .map_err(|e| e.to_string())?;
    let (Ok(Value::Mapping(read)), Ok(Value::Mapping(defaults))) = (
        serde_norway::to_value(read),
        serde_norway::to_value(T::default()),
    ) else {
        return Err("the keys do not serialize as a mapping".to_string());
    };
    let differing: Vec<String> = defaults
        .iter()
        .filter(|(key, value)| read.get(*key) != Some(*value))
        .filter_map(|(key, _)| key.as_str().map(|k| format!("{canonical}{k}")))
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(format!("not at their default: {differing:?}"))
    }
}
