//! What a file of keys and a settings type say about the keys they hold.

use serde::Serialize;
use serde_norway::Value;

/// The keys a YAML example file sets under `prefix` (without it), in file order: one `key: value`
/// per line, as the shipped example files write them.
pub fn listed_keys(text: &str, prefix: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix(prefix)?.split_once(':'))
        .map(|(key, _)| key.to_string())
        .collect()
}

/// The serde names of the fields of a struct of keys, from its default value, in field order: the
/// keys a section read with [`CrawlConfig::extension`](super::CrawlConfig::extension) knows (without
/// their prefix), e.g. to check that an example file lists them all.
pub fn field_names<T: Serialize + Default>() -> Vec<String> {
    match serde_norway::to_value(T::default()) {
        Ok(Value::Mapping(mapping)) => mapping
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}
