//! Which protocol fetches which URL scheme: the `protocol.schemes` key, read straight from the
//! configuration.

use std::collections::BTreeMap;

use crate::settings::{KeyedSettings, keyed_settings};

keyed_settings! {
    /// Which protocol fetches which URL scheme, by name.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ProtocolSettings {
        /// `protocol.schemes`: scheme (lowercase) to protocol name. `http` is built in (it serves
        /// `http` and `https` by default); other names are registered with
        /// [`CrawlerBuilder::named_protocol`](crate::topology::CrawlerBuilder::named_protocol).
        "protocol.schemes" => schemes: BTreeMap<String, String> = http_for_both(),
    }
}

impl KeyedSettings for ProtocolSettings {}

/// `http` and `https` fetched by the protocol named `http`.
fn http_for_both() -> BTreeMap<String, String> {
    ["http", "https"]
        .into_iter()
        .map(|scheme| (scheme.to_string(), "http".to_string()))
        .collect()
}
