//! What happens to one document on its way from the source to the urls index: its key (kept, or
//! computed from the URL and added to the bucket field) and its `nextFetchDate`.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use squall::model::{PartitionMode, partition_key};

use crate::status_index::schema::{KeyField, escape_key, read_document};

/// When a document is due, as read from its `nextFetchDate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextFetch {
    /// No `nextFetchDate`: never to be fetched again (no constraint on its queue).
    Never,
    /// Due at this time.
    At(DateTime<Utc>),
    /// A `nextFetchDate` that could not be read; its queue is made due at once (the spout raises it
    /// again), which keeps the invariant.
    Unreadable,
}

impl NextFetch {
    /// The date to lower the queue's `nextDue` to, if any: an unreadable date counts as the epoch.
    pub fn due(self) -> Option<DateTime<Utc>> {
        match self {
            NextFetch::Never => None,
            NextFetch::At(date) => Some(date),
            NextFetch::Unreadable => Some(DateTime::<Utc>::UNIX_EPOCH),
        }
    }
}

/// A source document ready for the urls index.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedDocument {
    /// The document to write: the source unchanged, plus the key when the source had none.
    pub document: Value,
    /// Its queue key; `None` when the source has no key and no readable URL to compute one from.
    pub key: Option<String>,
    /// Whether the key was computed and added.
    pub key_added: bool,
    /// Its due date.
    pub next_fetch: NextFetch,
}

/// Prepares a source document: keeps its key when it has one in `key_field`, otherwise computes it
/// from the URL with `mode` and adds it (`metadata.X` fields get it as a one-element array).
pub fn prepare_document(
    source: &Value,
    key_field: &KeyField,
    mode: PartitionMode,
) -> PreparedDocument {
    let next_fetch = next_fetch_of(source);
    let mut document = source.clone();
    if let Some(key) = existing_key(source, key_field) {
        return PreparedDocument {
            document,
            key: Some(key),
            key_added: false,
            next_fetch,
        };
    }
    let computed = read_document(source, &KeyField::default())
        .ok()
        .map(|doc| partition_key(&doc.url.url, &doc.url.metadata, mode));
    let key_added = match &computed {
        Some(key) => insert_key(&mut document, key_field, key),
        None => false,
    };
    PreparedDocument {
        document,
        key: computed.filter(|_| key_added),
        key_added,
        next_fetch,
    }
}

/// A source document's due date, from its `nextFetchDate`.
fn next_fetch_of(source: &Value) -> NextFetch {
    match source.get("nextFetchDate") {
        None | Some(Value::Null) => NextFetch::Never,
        Some(value) => parse_date(value).map_or(NextFetch::Unreadable, NextFetch::At),
    }
}

/// What the copy needs of a source document given as text, read without building the whole
/// document: its key (it must have one in `key_field`) and its due date, as [`prepare_document`]
/// finds them. `None` when the document has no key of its own (or a shape this quick look does not
/// handle): it is then read whole and prepared.
pub(crate) fn quick_look(source: &str, key_field: &KeyField) -> Option<(String, NextFetch)> {
    let top: HashMap<&str, &RawValue> = serde_json::from_str(source).ok()?;
    let mut fields = Map::new();
    if let Some(date) = top.get("nextFetchDate") {
        fields.insert(
            "nextFetchDate".to_string(),
            serde_json::from_str(date.get()).ok()?,
        );
    }
    match key_field {
        KeyField::TopLevel(field) => {
            let value = top.get(field.as_str())?;
            fields.insert(field.clone(), serde_json::from_str(value.get()).ok()?);
        }
        KeyField::Metadata(name) => {
            let metadata: HashMap<&str, &RawValue> =
                serde_json::from_str(top.get("metadata")?.get()).ok()?;
            let escaped = escape_key(name);
            let value: Value = serde_json::from_str(metadata.get(escaped.as_str())?.get()).ok()?;
            fields.insert("metadata".to_string(), json!({ escaped: value }));
        }
    }
    let fields = Value::Object(fields);
    let key = existing_key(&fields, key_field)?;
    Some((key, next_fetch_of(&fields)))
}

/// The key a source document already has in `key_field` (a non-empty string, or the first of an
/// array).
pub fn existing_key(source: &Value, key_field: &KeyField) -> Option<String> {
    let value = match key_field {
        KeyField::TopLevel(field) => source.get(field),
        KeyField::Metadata(name) => source
            .get("metadata")
            .and_then(|metadata| metadata.get(escape_key(name))),
    };
    let text = match value? {
        Value::String(s) => Some(s.as_str()),
        Value::Array(items) => items.first().and_then(Value::as_str),
        _ => None,
    };
    text.filter(|s| !s.is_empty()).map(str::to_string)
}

/// Puts `key` into the document's bucket field; false when the document has no room for it (not an
/// object, or a `metadata` that is not an object).
fn insert_key(document: &mut Value, key_field: &KeyField, key: &str) -> bool {
    let Some(fields) = document.as_object_mut() else {
        return false;
    };
    match key_field {
        KeyField::TopLevel(field) => {
            fields.insert(field.clone(), json!(key));
            true
        }
        KeyField::Metadata(name) => {
            let metadata = fields
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            match metadata.as_object_mut() {
                Some(metadata) => {
                    metadata.insert(escape_key(name), json!([key]));
                    true
                }
                None => false,
            }
        }
    }
}

/// Reads a date the way the status mapping (`date_optional_time`) accepts it: ISO 8601 with or
/// without an offset (UTC when none), a bare date, or epoch milliseconds.
pub fn parse_date(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::String(text) => parse_date_text(text.trim()),
        Value::Number(number) => number
            .as_i64()
            .or_else(|| number.as_f64().map(|f| f as i64))
            .and_then(|millis| Utc.timestamp_millis_opt(millis).single()),
        Value::Array(items) if items.len() == 1 => items.first().and_then(parse_date),
        _ => None,
    }
}

fn parse_date_text(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(date) = DateTime::parse_from_rfc3339(text) {
        return Some(date.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%z"] {
        if let Ok(date) = DateTime::parse_from_str(text, format) {
            return Some(date.with_timezone(&Utc));
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(date) = NaiveDateTime::parse_from_str(text, format) {
            return Some(date.and_utc());
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return date.and_hms_opt(0, 0, 0).map(|d| d.and_utc());
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<i64>()
            .ok()
            .and_then(|millis| Utc.timestamp_millis_opt(millis).single());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status_index::schema::format_date;
    use crate::testing::utc;

    #[test]
    fn a_key_in_the_source_is_kept() {
        let source = json!({ "url": "https://a.test/x", "key": "custom", "status": "DISCOVERED" });
        let prepared = prepare_document(&source, &KeyField::default(), PartitionMode::ByHost);
        assert_eq!(prepared.document, source);
        assert_eq!(prepared.key.as_deref(), Some("custom"));
        assert!(!prepared.key_added);
        assert_eq!(prepared.next_fetch, NextFetch::Never);
    }

    #[test]
    fn a_missing_key_is_computed_and_added() {
        let source = json!({ "url": "https://News.Example.co.uk/x", "status": "FETCHED",
                             "nextFetchDate": "2024-05-02T10:00:00.000Z" });
        let prepared = prepare_document(&source, &KeyField::default(), PartitionMode::ByDomain);
        assert_eq!(prepared.key.as_deref(), Some("example.co.uk"));
        assert_eq!(prepared.document["key"], json!("example.co.uk"));
        assert!(prepared.key_added);
        assert_eq!(
            prepared.next_fetch.due().map(format_date).as_deref(),
            Some("2024-05-02T10:00:00.000Z")
        );

        let field = KeyField::parse("metadata.hostname");
        let with_metadata = json!({ "url": "http://b.test/", "metadata": { "depth": ["1"] } });
        let prepared = prepare_document(&with_metadata, &field, PartitionMode::ByHost);
        assert_eq!(
            prepared.document["metadata"],
            json!({ "depth": ["1"], "hostname": ["b.test"] })
        );
        let again = prepare_document(&prepared.document, &field, PartitionMode::ByHost);
        assert_eq!(again.document, prepared.document);
        assert!(!again.key_added);
    }

    #[test]
    fn the_quick_look_finds_what_preparing_finds() {
        let top = KeyField::default();
        let metadata = KeyField::parse("metadata.hostname");
        let sources = [
            json!({ "url": "https://a.test/", "key": "a.test", "nextFetchDate": "2024-05-02T10:00:00Z" }),
            json!({ "url": "https://a.test/", "key": ["a.test"], "nextFetchDate": 1_714_644_000_000_i64 }),
            json!({ "url": "https://a.test/", "key": "k", "nextFetchDate": "soon" }),
            json!({ "url": "https://a.test/", "key": "k", "nextFetchDate": null }),
            json!({ "url": "https://a.test/", "metadata": { "hostname": ["h"] }, "nextFetchDate": "2024-05-02" }),
            json!({ "url": "https://a.test/", "key": "" }),
            json!({ "url": "https://a.test/", "metadata": "odd" }),
            json!({ "status": "ERROR" }),
        ];
        for source in &sources {
            for field in [&top, &metadata] {
                let text = source.to_string();
                let prepared = prepare_document(source, field, PartitionMode::ByHost);
                match quick_look(&text, field) {
                    Some((key, next_fetch)) => {
                        assert!(!prepared.key_added, "{source}");
                        assert_eq!(Some(key), prepared.key, "{source}");
                        assert_eq!(next_fetch, prepared.next_fetch, "{source}");
                    }
                    None => assert!(prepared.key_added || prepared.key.is_none(), "{source}"),
                }
            }
        }
        assert!(quick_look("[1]", &top).is_none());
    }

    #[test]
    fn documents_without_url_keep_their_shape() {
        let source = json!({ "status": "ERROR" });
        let prepared = prepare_document(&source, &KeyField::default(), PartitionMode::ByHost);
        assert_eq!(prepared.document, source);
        assert_eq!(prepared.key, None);
    }

    #[test]
    fn dates_in_the_mappings_formats() {
        let expected = utc(2024, 5, 2, 10, 0, 0);
        for text in [
            "2024-05-02T10:00:00Z",
            "2024-05-02T10:00:00.000Z",
            "2024-05-02T12:00:00+02:00",
            "2024-05-02T10:00:00.000+0000",
            "2024-05-02T10:00:00",
            "2024-05-02T10:00",
            "1714644000000",
        ] {
            assert_eq!(parse_date(&json!(text)), Some(expected), "{text}");
        }
        assert_eq!(parse_date(&json!(1_714_644_000_000_i64)), Some(expected));
        assert!(parse_date(&json!("2024-05-02")).is_some());
        assert_eq!(parse_date(&json!("soon")), None);
        assert_eq!(
            NextFetch::Unreadable.due(),
            Some(DateTime::<Utc>::UNIX_EPOCH)
        );
    }
}
