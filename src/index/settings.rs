//! The content indexer's settings: the `indexer.*` keys, read straight from the configuration
//! (each field names its key, `Default` holds its default), with StormCrawler's names for what goes
//! in a document.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::mapping::{MappingEntry, MetadataFilter};
use crate::settings::{KeyedSettings, keyed_settings, units};

keyed_settings! {
    /// Where parsed pages are indexed, and how a page becomes a document.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct IndexerSettings {
        /// `indexer.kind`: where parsed pages are indexed: `none`, `file` (JSON lines at
        /// `indexer.file`) or `opensearch` (the content index of the `es.indexer.*` keys, through
        /// `squall-engine`).
        "indexer.kind" => kind: IndexerKind = IndexerKind::None,
        /// `indexer.file`: the JSON-lines file of [`IndexerKind::File`] (appended to).
        "indexer.file" => file: PathBuf = PathBuf::from("squall-content.jsonl"),
        /// `indexer.url.fieldname`: the field holding the page's URL (its canonical URL when it
        /// gives one on its own domain); empty: none.
        "indexer.url.fieldname" => url_field: String = "url".to_string(),
        /// `indexer.text.fieldname`: the field holding the page's visible text; empty: none.
        "indexer.text.fieldname" => text_field: String = "content".to_string(),
        /// `indexer.text.maxlength`: characters of text indexed per page. -1: all (`None`).
        "indexer.text.maxlength" with "units::negative_is_none" => text_max_chars: Option<usize> =
            None,
        /// `indexer.canonical.name`: the metadata key holding a page's canonical URL; empty: the
        /// URL fetched is always used.
        "indexer.canonical.name" => canonical_key: String = "canonical".to_string(),
        /// `indexer.md.mapping`: the metadata indexed, each `key`, `key=field`, `key[index]` (one
        /// value) or `prefix*` (every key under it).
        "indexer.md.mapping" => mapping: Vec<MappingEntry> = default_mapping(),
        /// `indexer.md.filter`: `key=value`; only pages whose metadata has it are indexed. Empty:
        /// all (`None`).
        "indexer.md.filter" with "filter_text" => filter: Option<MetadataFilter> = None,
        /// `indexer.ignore.empty.fields`: leave out fields whose value is empty.
        "indexer.ignore.empty.fields" => ignore_empty_fields: bool = false,
    }
}

impl KeyedSettings for IndexerSettings {}

/// Where parsed pages are indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexerKind {
    /// Nowhere: no indexer stage runs.
    #[default]
    None,
    /// One JSON line per page in a local file ([`JsonLinesStore`](crate::index::JsonLinesStore)).
    File,
    /// An Elasticsearch or OpenSearch content index (the `squall-engine` crate), given to the
    /// crawler with [`CrawlerBuilder::content_store`](crate::topology::CrawlerBuilder::content_store).
    Opensearch,
}

/// `indexer.md.filter` as written: `key=value`, empty for none.
mod filter_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::MetadataFilter;

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<MetadataFilter>, D::Error> {
        let text = String::deserialize(deserializer)?;
        MetadataFilter::parse(&text).map_err(serde::de::Error::custom)
    }

    pub fn serialize<S: Serializer>(
        value: &Option<MetadataFilter>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(filter) => serializer.collect_str(filter),
            None => serializer.serialize_str(""),
        }
    }
}

/// The archetype's `indexer.md.mapping`: the title, keywords and description under their own
/// names, and the host and domain.
fn default_mapping() -> Vec<MappingEntry> {
    let named = |key: &str, field: Option<&str>| MappingEntry {
        key: key.to_string(),
        field: field.map(str::to_string),
        index: None,
        glob: false,
    };
    vec![
        named("parse.title", Some("title")),
        named("parse.keywords", Some("keywords")),
        named("parse.description", Some("description")),
        named("host", None),
        named("domain", None),
    ]
}
