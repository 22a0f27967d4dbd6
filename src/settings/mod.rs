//! Settings types that read their own configuration keys: each field names its key
//! (`#[serde(rename = "fetcher.server.delay")]`), its doc is the key's doc, `Default` holds the
//! keys' defaults, and [`units`] reads StormCrawler's units. The configuration hands such a type
//! the keys it names ([`KeyedSettings`]) and nothing copies them on. The stages declare theirs
//! with `keyed_settings!`, one line per key: its name, its unit, its field, type and default; the
//! other crates declare theirs with it too (`squall::keyed_settings!`), with its prefix form for
//! keys read alike under several prefixes.

mod documented;
mod keyed;
pub mod units;

pub use documented::{documented_defaults, undocumented_defaults};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A stage's settings read straight from the configuration keys its fields name.
pub trait KeyedSettings: Serialize + DeserializeOwned + Default {
    /// Checks what reading each value alone cannot: the first key whose value makes no sense, and
    /// why. None by default.
    fn check(&self) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// For [`KeyedSettings::check`]: the first of `counts` (a key and its value) that is 0, refused as
/// "must be at least 1".
pub fn at_least_one(counts: &[(&'static str, usize)]) -> Result<(), (&'static str, String)> {
    match counts.iter().find(|(_, value)| *value == 0) {
        Some((key, _)) => Err((key, "must be at least 1".to_string())),
        None => Ok(()),
    }
}

pub use crate::keyed_settings;
pub use keyed::{KeyPrefix, Prefixed};
