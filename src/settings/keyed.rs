//! `keyed_settings!`, the one way a settings type is declared in every crate, and its prefix form:
//! a settings type read as a section of another, under a prefix of its own ([`Prefixed`]).

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_with::with_prefix::WithPrefix;

/// Declares a settings type that reads its own keys, one line per key after the key's doc:
///
/// ```text
/// "fetcher.server.delay" with "units::seconds" => server_delay: Duration = Duration::from_secs(1),
/// ```
///
/// the key's name in a file, optionally the [`units`](crate::settings::units) adapter that reads
/// it (a path from the calling module: `squall::settings::units::seconds` from another crate), then
/// the field, its type and the key's default. Fields that are not keys (set by the configuration
/// from other keys, or in code) follow in a `derived { ... }` block, with their defaults. The type
/// gets serde's reading (unknown keys refused, missing keys at their default) and `Default`; the
/// caller adds its derives and implements [`KeyedSettings`](crate::settings::KeyedSettings).
/// Another crate calls it as `squall::keyed_settings!` (it needs `serde` itself). A key read
/// through one of serde_with's adapters names it as its `with` path:
/// `"addresses" with "As::<OneOrMany<Same, PreferOne>>" => addresses: Vec<String> = ...`.
///
/// **The prefix form.** Keys that several parts of a crate read alike, each under its own prefix
/// (the engine's connection keys under `es.status.`, `es.indexer.`, `es.metrics.` and the shared
/// `es.`), are declared once as a `section struct`, and read within another settings type from a
/// `sections { ... }` block at its top, one line a section:
///
/// ```text
/// pub section struct ClusterSettings { "user" => user: String = String::new(), ... }
///
/// pub struct FrontierSettings {
///     sections {
///         /// the shared keys: `es.user`, ...
///         shared: ClusterSettings,
///         /// the frontier's own: `es.status.user`, ...
///         "status." as StatusKeys => status: ClusterSettings,
///     }
///     "status.index.name" => index: String = "status".to_string(),
/// }
/// ```
///
/// A section without a prefix reads its keys as they are; one with a prefix declares the marker
/// type (`StatusKeys`) that names it and is held as a [`Prefixed`]. Every key of every section is a
/// key of the type that holds them, so an unknown key is refused, with the closest known one, as
/// for the others. A section type gets the one fallback rule, its `over`: each key as the section
/// sets it, else as the section it falls back to does; a key at its default is not set. Its
/// `keys_set` names the keys a section sets (so that an error names the key as it was written).
///
/// ```
/// squall::keyed_settings! {
///     /// How one part reaches its server.
///     #[derive(Debug, Clone, PartialEq)]
///     pub section struct Access {
///         /// `user`: who we are (empty: the shared key's).
///         "user" => user: String = String::new(),
///         /// `timeout`: seconds.
///         "timeout" => timeout: f64 = 30.0,
///     }
/// }
/// squall::keyed_settings! {
///     /// The `demo.*` keys.
///     #[derive(Debug, Clone, PartialEq)]
///     pub struct Demo {
///         sections {
///             /// `demo.user`, `demo.timeout`: shared.
///             shared: Access,
///             /// `demo.index.user`, ...: the index's own, over the shared ones.
///             "index." as IndexKeys => index: Access,
///         }
///         /// `demo.pages`: pages at once.
///         "pages" => pages: u32 = 4,
///     }
/// }
/// let mut demo = Demo::default();
/// demo.shared.user = "crawler".to_string();
/// demo.index.timeout = 5.0;
/// let index = demo.index.over(&demo.shared);
/// assert_eq!((index.user.as_str(), index.timeout), ("crawler", 5.0));
/// assert_eq!(demo.index.keys_set(), ["timeout"]);
/// let keys = squall::config::field_names::<Demo>();
/// assert!(keys.contains(&"index.user".to_string()) && keys.contains(&"user".to_string()));
/// ```
#[macro_export]
macro_rules! keyed_settings {
    (@struct [$($deny:ident)?]
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
        sections {
            $(
                $(#[$section_meta:meta])*
                $($prefix:literal as $marker:ident =>)? $section:ident: $section_type:ty,
            )*
        }
    ) => {
        $($(
            #[doc = concat!("The prefix `", $prefix, "` of the keys of [`", stringify!($name),
                "`]'s section `", stringify!($section), "`.")]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
            $vis struct $marker;

            impl $crate::settings::KeyPrefix for $marker {
                const PREFIX: &'static str = $prefix;
            }
        )?)*

        $(#[$meta])*
        #[derive(::serde::Serialize, ::serde::Deserialize)]
        #[serde(default $(, $deny)?)]
        $vis struct $name {
            $(
                $(#[$section_meta])*
                #[serde(flatten)]
                pub $section: $crate::keyed_settings!(@section_type $($marker)?; $section_type),
            )*
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

        impl ::std::default::Default for $name {
            fn default() -> Self {
                $name {
                    $($section: ::std::default::Default::default(),)*
                    $($field: $default,)*
                    $($($derived: $derived_default,)*)?
                }
            }
        }
    };
    (@section_type ; $section_type:ty) => { $section_type };
    (@section_type $marker:ident; $section_type:ty) => {
        $crate::settings::Prefixed<$marker, $section_type>
    };
    (
        $(#[$meta:meta])*
        $vis:vis section struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $key:literal $(with $with:literal)? => $field:ident: $type:ty = $default:expr,
            )*
        }
    ) => {
        $crate::keyed_settings!(@struct []
            $(#[$meta])*
            $vis struct $name {
                $($(#[$field_meta])* $key $(with $with)? => $field: $type = $default,)*
            }
            sections {}
        );

        impl $name {
            /// These keys over `fallback`'s, the one fallback rule of a section: each key as this
            /// section sets it, else as `fallback` does. A key at its default is not set.
            pub fn over(&self, fallback: &Self) -> Self {
                let unset = <Self as ::std::default::Default>::default();
                $name {
                    $($field: if self.$field == unset.$field {
                        fallback.$field.clone()
                    } else {
                        self.$field.clone()
                    },)*
                }
            }

            /// The keys this section sets (those not at their default), in declaration order.
            pub fn keys_set(&self) -> ::std::vec::Vec<&'static str> {
                let unset = <Self as ::std::default::Default>::default();
                let mut set = ::std::vec::Vec::new();
                $(if self.$field != unset.$field {
                    set.push($key);
                })*
                set
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            sections { $($sections:tt)* }
            $($rest:tt)*
        }
    ) => {
        $crate::keyed_settings!(@struct []
            $(#[$meta])*
            $vis struct $name { $($rest)* }
            sections { $($sections)* }
        );
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident { $($rest:tt)* }
    ) => {
        $crate::keyed_settings!(@struct [deny_unknown_fields]
            $(#[$meta])*
            $vis struct $name { $($rest)* }
            sections {}
        );
    };
}

/// The prefix a section's keys are written under within the settings type that holds it,
/// e.g. `status.` (declared by `keyed_settings!`'s `sections` block).
pub trait KeyPrefix {
    /// The prefix, ending in `.`.
    const PREFIX: &'static str;
}

/// The keys of `T` written under `P`'s prefix within another settings type: the frontier's
/// `status.user` is `T`'s `user`. Reads as `T` (it dereferences to it).
pub struct Prefixed<P, T> {
    keys: T,
    prefix: PhantomData<fn() -> P>,
}

impl<P, T> Prefixed<P, T> {
    /// `keys`, to be written under `P`'s prefix.
    pub fn new(keys: T) -> Self {
        Prefixed {
            keys,
            prefix: PhantomData,
        }
    }

    /// The keys, without their prefix.
    pub fn into_keys(self) -> T {
        self.keys
    }
}

impl<P, T> Deref for Prefixed<P, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.keys
    }
}

impl<P, T> DerefMut for Prefixed<P, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.keys
    }
}

impl<P, T: Default> Default for Prefixed<P, T> {
    fn default() -> Self {
        Prefixed::new(T::default())
    }
}

impl<P, T: Clone> Clone for Prefixed<P, T> {
    fn clone(&self) -> Self {
        Prefixed::new(self.keys.clone())
    }
}

impl<P, T: PartialEq> PartialEq for Prefixed<P, T> {
    fn eq(&self, other: &Self) -> bool {
        self.keys == other.keys
    }
}

impl<P: KeyPrefix, T: fmt::Debug> fmt::Debug for Prefixed<P, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prefixed")
            .field("prefix", &P::PREFIX)
            .field("keys", &self.keys)
            .finish()
    }
}

impl<P: KeyPrefix, T: Serialize> Serialize for Prefixed<P, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.keys.serialize(WithPrefix {
            delegate: serializer,
            prefix: P::PREFIX,
        })
    }
}

impl<'de, P: KeyPrefix, T: Deserialize<'de>> Deserialize<'de> for Prefixed<P, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(WithPrefix {
            delegate: deserializer,
            prefix: P::PREFIX,
        })
        .map(Prefixed::new)
    }
}
