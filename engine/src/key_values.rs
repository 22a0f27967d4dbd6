//! Value shapes StormCrawler's `es.*` / `opensearch.*` keys take, shared by the frontier's keys and
//! the content indexer's.

use serde::{Deserialize, Serialize};
use squall::config::ConfigError;

/// A key that takes one string or a list of them (StormCrawler reads both).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// The values, trimmed, empty ones left out; one string is split at `sep` when given.
    pub fn values(&self, sep: &[char]) -> Vec<String> {
        let items: Vec<String> = match self {
            OneOrMany::One(text) if sep.is_empty() => vec![text.clone()],
            OneOrMany::One(text) => text.split(sep).map(str::to_string).collect(),
            OneOrMany::Many(items) => items.clone(),
        };
        items
            .into_iter()
            .map(|item| item.trim().to_string())
            .filter(|item| !item.is_empty())
            .collect()
    }

    /// Node addresses: a list, or one string separated by `,` or `;`.
    pub fn addresses(&self) -> Vec<String> {
        self.values(&[',', ';'])
    }
}

/// The connection to the nodes `key` names, checked now, so that a bad address is named before
/// anything connects.
pub(crate) fn connection_for(
    key: &str,
    list: Vec<String>,
) -> Result<crate::client::ConnectionSettings, ConfigError> {
    let invalid = |message: String| ConfigError::InvalidValue {
        key: key.to_string(),
        message,
    };
    if list.is_empty() {
        return Err(invalid("names no node".to_string()));
    }
    let entries: Vec<&str> = list.iter().map(String::as_str).collect();
    crate::client::ConnectionSettings::for_addresses(&entries).map_err(|e| invalid(e.to_string()))
}
