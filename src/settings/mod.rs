//! Settings types that read their own configuration keys: each field names its key
//! (`#[serde(rename = "fetcher.server.delay")]`), its doc is the key's doc, `Default` holds the
//! keys' defaults, and [`units`] reads StormCrawler's units. The configuration hands such a type
//! the keys it names ([`KeyedSettings`]) and nothing copies them on.

pub mod units;

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
