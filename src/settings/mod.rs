//! Settings types that read their own configuration keys: each field names its key
//! (`#[serde(rename = "fetcher.server.delay")]`), its doc is the key's doc, `Default` holds the
//! keys' defaults, and [`units`] reads StormCrawler's units. The configuration hands such a type
//! the keys it names ([`KeyedSettings`]) and nothing copies them on. The stages declare theirs
//! with `keyed_settings!`, one line per key: its name, its unit, its field, type and default.

mod documented;
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

/// Declares a settings type that reads its own keys, one line per key after the key's doc:
///
/// ```text
/// "fetcher.server.delay" with "units::seconds" => server_delay: Duration = Duration::from_secs(1),
/// ```
///
/// the key's name in a file, optionally the [`units`] adapter that reads it (a path from the
/// calling module), then the field, its type and the key's default. Fields that are not keys (set
/// by the configuration from other keys, or in code) follow in a `derived { ... }` block, with
/// their defaults. The type gets serde's reading (unknown keys refused, missing keys at their
/// default) and `Default`; the caller adds its derives and implements [`KeyedSettings`].
macro_rules! keyed_settings {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $key:literal $(with $with:literal)? => $field:ident: $type:ty = $default:expr,
            )*
            $(derived {
                $(
                    $(#[$derived_meta:meta])*
                    $derived:ident: $derived_type:ty = $derived_default:expr,
                )*
            })?
        }
    ) => {
        #[serde_with::serde_as]
        $(#[$meta])*
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        $vis struct $name {
            $(
                $(#[$field_meta])*
                #[serde(rename = $key)]
                $(#[serde(with = $with)])?
                pub $field: $type,
            )*
            $($(
                $(#[$derived_meta])*
                #[serde(skip)]
                pub $derived: $derived_type,
            )*)?
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default,)*
                    $($($derived: $derived_default,)*)?
                }
            }
        }
    };
}

pub(crate) use keyed_settings;
