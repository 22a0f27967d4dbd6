//! The status index as StormCrawler keeps it: mapping, document ids, and documents.
//!
//! A document looks like this (StormCrawler's `StatusUpdaterBolt`):
//!
//! ```json
//! { "url": "https://example.com/page", "status": "FETCHED", "key": "example.com",
//!   "nextFetchDate": "2024-05-02T10:00:00.000Z",
//!   "metadata": { "url%2Epath": ["https://example.com/"], "depth": ["1"] } }
//! ```
//!
//! Metadata values are arrays of strings, with `.` in keys escaped as `%2E`; `nextFetchDate` is left
//! out when the URL is never to be fetched again; the id is the hex SHA-256 of the URL. squall's
//! writer adds [`CREATION_DATE`] (when the URL was first stored; not in StormCrawler's documents,
//! which its readers ignore).

/// When a URL was first stored (URLFrontier's `creation_date`), as `nextFetchDate` is written; a
/// document without it (StormCrawler's, or one written before squall kept it) is undated.
pub const CREATION_DATE: &str = "creationDate";

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use squall::frontier::StatusWrite;
use squall::model::{CrawlUrl, Metadata, Status};
use url::Url;

/// Where the partition key is stored: StormCrawler's `es.status.routing.fieldname` /
/// `es.status.bucket.field` (`key` by default, or a metadata field such as `metadata.hostname`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyField {
    /// A top-level field (`key`).
    TopLevel(String),
    /// A metadata key (`metadata.hostname` stores the key as `metadata.hostname: [..]`).
    Metadata(String),
}

impl KeyField {
    /// Parses a field name: `metadata.X` is a metadata key, anything else a top-level field.
    pub fn parse(field: &str) -> KeyField {
        match field.strip_prefix("metadata.") {
            Some(key) => KeyField::Metadata(key.to_string()),
            None => KeyField::TopLevel(field.to_string()),
        }
    }

    /// The field name as used in queries and aggregations (`key`, `metadata.hostname`).
    pub fn query_field(&self) -> String {
        match self {
            KeyField::TopLevel(field) => field.clone(),
            KeyField::Metadata(key) => format!("metadata.{}", escape_key(key)),
        }
    }
}

impl Default for KeyField {
    fn default() -> Self {
        KeyField::TopLevel("key".to_string())
    }
}

/// The document id of a URL: the hex SHA-256 of its string.
pub fn document_id(url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    // (hex::encode goes a char at a time; encoding into a buffer is several times faster, and
    // the spouts and the writer compute an id for every URL they touch.)
    let mut text = [0u8; 64];
    match hex::encode_to_slice(digest, &mut text) {
        Ok(()) => text.iter().map(|&b| char::from(b)).collect(),
        Err(_) => hex::encode(digest),
    }
}

/// Escapes a metadata key for the index (`.` becomes `%2E`).
pub fn escape_key(key: &str) -> String {
    key.replace('.', "%2E")
}

/// Undoes [`escape_key`].
pub fn unescape_key(key: &str) -> String {
    key.replace("%2E", ".")
}

/// The date format StormCrawler writes: ISO 8601 with milliseconds, in UTC.
pub fn format_date(date: DateTime<Utc>) -> String {
    date.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The settings of an index this crawler creates: its shards, replicas and refresh interval.
pub fn index_settings(shards: u32, replicas: u32, refresh_interval: &str) -> Value {
    json!({ "index": {
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        "refresh_interval": refresh_interval
    } })
}

/// The status index's settings and mapping (StormCrawler's `status.mapping`).
pub fn status_index_body(shards: u32, replicas: u32, refresh_interval: &str) -> Value {
    json!({
        "settings": index_settings(shards, replicas, refresh_interval),
        "mappings": {
            "dynamic_templates": [{ "metadata": {
                "path_match": "metadata.*",
                "match_mapping_type": "string",
                "mapping": { "type": "keyword" }
            } }],
            "_source": { "enabled": true },
            "properties": {
                "key": { "type": "keyword", "index": true },
                "nextFetchDate": { "type": "date", "format": "date_optional_time" },
                "status": { "type": "keyword" },
                "url": { "type": "keyword" }
            }
        }
    })
}

/// Primary shards of a status index this crawler creates when `es.status.index.shards` is not
/// set: as StormCrawler's index script, one for each of its archetype's ten spout instances, which
/// each read their own shards.
pub const STATUS_INDEX_SHARDS: u32 = 10;

/// Primary shards of the queue frontier's urls index when `es.status.index.shards` is not set.
/// Its reads go by queue, not by spout instance, and every shard takes part in each read and in
/// each refresh: with the archetype's files at 1 s (53,000 URLs), 10 shards cost the engine
/// 0.71-1.0 ms a crawled page and 2 shards 0.43-0.51 (docs/design/engine-work.md). Two shards
/// hold 10 M URLs well within the engine's advice on shard size, and spread the writes over two
/// nodes of a cluster.
pub const URLS_INDEX_SHARDS: u32 = 2;

/// The urls index's settings and mapping: the status index's, sorted on disk by due date then URL,
/// so that a search for the earliest due URLs of some queues (sorted the same way, without a total
/// hit count) stops as soon as it has its page instead of visiting every due URL of those queues —
/// a big host's backlog no longer costs every read.
pub fn urls_index_body(shards: u32, replicas: u32, refresh_interval: &str) -> Value {
    let mut body = status_index_body(shards, replicas, refresh_interval);
    body["settings"]["index"]["sort"] = json!({
        "field": ["nextFetchDate", "url"],
        "order": ["asc", "asc"],
        "missing": ["_last", "_last"]
    });
    body["mappings"]["properties"][CREATION_DATE] =
        json!({ "type": "date", "format": "date_optional_time" });
    body
}

/// The document for a status write.
pub fn status_document(write: &StatusWrite, key_field: &KeyField) -> Value {
    let mut metadata = Map::new();
    for (key, values) in write.url.metadata.iter() {
        metadata.insert(escape_key(key), json!(values));
    }
    if let KeyField::Metadata(name) = key_field {
        metadata.insert(escape_key(name), json!([write.key]));
    }
    let mut doc = Map::new();
    doc.insert("url".into(), json!(write.url.url.as_str()));
    doc.insert("status".into(), json!(write.status.as_str()));
    doc.insert("metadata".into(), Value::Object(metadata));
    if let KeyField::TopLevel(field) = key_field {
        doc.insert(field.clone(), json!(write.key));
    }
    if let Some(next) = write.next_fetch {
        doc.insert("nextFetchDate".into(), json!(format_date(next)));
    }
    Value::Object(doc)
}

/// A status document read back from the index.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDocument {
    /// The URL and its metadata (keys unescaped).
    pub url: CrawlUrl,
    /// The partition key, when the document has one.
    pub key: Option<String>,
    /// The status, when it is one of the five.
    pub status: Option<Status>,
    /// When it is due; `None` means never.
    pub next_fetch: Option<DateTime<Utc>>,
    /// When it was first stored ([`CREATION_DATE`]); `None` for an undated document.
    pub created: Option<DateTime<Utc>>,
}

/// Why a status document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The document has no `url` field, or it is not a string.
    #[error("unreadable status document: no url field")]
    MissingUrl,
    /// The `url` field is not a valid absolute URL.
    #[error("unreadable status document: url {url:?}: {reason}")]
    InvalidUrl {
        /// The field's value.
        url: String,
        /// Why it is not a URL.
        reason: String,
    },
}

/// Reads a document's `_source`, as written by squall or by StormCrawler.
pub fn read_document(
    source: &Value,
    key_field: &KeyField,
) -> Result<StoredDocument, DocumentError> {
    let url = source
        .get("url")
        .and_then(Value::as_str)
        .ok_or(DocumentError::MissingUrl)?;
    let url = Url::parse(url).map_err(|e| DocumentError::InvalidUrl {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    let mut metadata = Metadata::new();
    if let Some(Value::Object(fields)) = source.get("metadata") {
        for (key, value) in fields {
            let values = match value {
                Value::Array(items) => items.iter().filter_map(value_as_string).collect(),
                other => value_as_string(other).into_iter().collect(),
            };
            metadata.set_values(unescape_key(key), values);
        }
    }
    let key = match key_field {
        KeyField::TopLevel(field) => source
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string),
        KeyField::Metadata(name) => {
            let value = metadata.first(name).map(str::to_string);
            metadata.remove(name);
            value
        }
    };
    let status = source
        .get("status")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok());
    let date = |field: &str| {
        source
            .get(field)
            .and_then(Value::as_str)
            .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
            .map(|d| d.with_timezone(&Utc))
    };
    Ok(StoredDocument {
        url: CrawlUrl { url, metadata },
        key,
        status,
        next_fetch: date("nextFetchDate"),
        created: date(CREATION_DATE),
    })
}

fn value_as_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::utc;

    #[test]
    fn the_status_index_is_stormcrawlers_to_the_letter() {
        let published: Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/stormcrawler/status.mapping"
        ))
        .expect("StormCrawler's status.mapping is JSON");
        assert_eq!(status_index_body(10, 1, "5s"), published);
    }

    fn write(status: Status, next: Option<DateTime<Utc>>) -> StatusWrite {
        let mut url = CrawlUrl::new(Url::parse("https://example.com/page").expect("url"));
        url.metadata.set("url.path", "https://example.com/");
        url.metadata.set("depth", "1");
        StatusWrite {
            url,
            key: "example.com".to_string(),
            status,
            next_fetch: next,
            queue: Default::default(),
        }
    }

    #[test]
    fn document_ids_are_sha256_of_the_url() {
        assert_eq!(
            document_id("https://example.com/"),
            "0f115db062b7c0dd030b16878c99dea5c354b49dc37b38eb8846179c7783e9d7"
        );
    }

    #[test]
    fn documents_have_stormcrawlers_shape() {
        let date = utc(2024, 5, 2, 10, 0, 0);
        let doc = status_document(&write(Status::Fetched, Some(date)), &KeyField::default());
        assert_eq!(
            doc,
            json!({
                "url": "https://example.com/page",
                "status": "FETCHED",
                "key": "example.com",
                "nextFetchDate": "2024-05-02T10:00:00.000Z",
                "metadata": { "url%2Epath": ["https://example.com/"], "depth": ["1"] }
            })
        );
        let never = status_document(&write(Status::Error, None), &KeyField::default());
        assert!(
            never.get("nextFetchDate").is_none(),
            "never: no date at all"
        );
    }

    #[test]
    fn key_in_metadata_and_round_trip() {
        let field = KeyField::parse("metadata.hostname");
        assert_eq!(field.query_field(), "metadata.hostname");
        let date = utc(2024, 5, 2, 10, 0, 0);
        let original = write(Status::Discovered, Some(date));
        let doc = status_document(&original, &field);
        assert_eq!(doc["metadata"]["hostname"], json!(["example.com"]));
        assert!(doc.get("key").is_none());
        let read = read_document(&doc, &field).expect("readable");
        assert_eq!(read.url, original.url);
        assert_eq!(read.key.as_deref(), Some("example.com"));
        assert_eq!(read.status, Some(Status::Discovered));
        assert_eq!(read.next_fetch, Some(date));
    }

    #[test]
    fn stormcrawler_documents_are_read() {
        let doc = json!({
            "url": "http://sc.test/a", "status": "FETCH_ERROR",
            "nextFetchDate": "2024-01-01T00:00:00Z",
            "metadata": { "fetch%2Eerror%2Ecount": ["2"], "hostname": ["sc.test"], "n": [3] },
            "key": "sc.test"
        });
        let read = read_document(&doc, &KeyField::default()).expect("readable");
        assert_eq!(read.url.metadata.first("fetch.error.count"), Some("2"));
        assert_eq!(read.url.metadata.first("n"), Some("3"));
        assert_eq!(read.status, Some(Status::FetchError));
        assert!(read.next_fetch.is_some());
        let bad = read_document(&json!({ "status": "FETCHED" }), &KeyField::default());
        assert_eq!(bad, Err(DocumentError::MissingUrl));
        let relative = read_document(&json!({ "url": "/a" }), &KeyField::default());
        assert!(matches!(relative, Err(DocumentError::InvalidUrl { .. })));
    }
}
