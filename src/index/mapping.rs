//! Which metadata a content document holds: StormCrawler's `indexer.md.mapping` entries and its
//! `indexer.md.filter`.

use crate::model::Metadata;

/// Why an `indexer.md.mapping` entry or the `indexer.md.filter` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    /// An entry names no metadata key.
    #[error("entry {entry:?} names no metadata key")]
    EmptyKey {
        /// The entry as written.
        entry: String,
    },
    /// A glob (`prefix*`) with a field name or an index, which StormCrawler refuses too.
    #[error("entry {entry:?}: a glob (`prefix*`) can have neither a field name nor an index")]
    GlobWithAliasOrIndex {
        /// The entry as written.
        entry: String,
    },
    /// An index that is not a number a list can have.
    #[error("entry {entry:?}: the index in brackets is too large")]
    IndexTooLarge {
        /// The entry as written.
        entry: String,
    },
    /// The filter is not `key=value`.
    #[error("{filter:?} is not key=value")]
    FilterNotKeyValue {
        /// The filter as written.
        filter: String,
    },
}

/// One `indexer.md.mapping` entry: `key`, `key=field`, `key[index]`, `key[index]=field` or
/// `prefix*`; read from and written as that text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MappingEntry {
    /// The metadata key, or the prefix of a glob (without its `*`).
    pub key: String,
    /// The field name, when it is not the key's own.
    pub field: Option<String>,
    /// Only the value at this position (`key[0]`), when given.
    pub index: Option<usize>,
    /// Every key starting with [`key`](Self::key) is indexed under its own name.
    pub glob: bool,
}

impl MappingEntry {
    /// Reads one entry as StormCrawler does: the field name after the first `=`, an index in
    /// brackets cut from the key, a trailing `*` making a glob.
    pub fn parse(entry: &str) -> Result<MappingEntry, MappingError> {
        let (key, field) = match entry.split_once('=') {
            Some((key, field)) => (key.trim(), Some(field.trim().to_string())),
            None => (entry.trim(), None),
        };
        let (key, index) = split_index(key, entry)?;
        if key.is_empty() {
            return Err(MappingError::EmptyKey {
                entry: entry.to_string(),
            });
        }
        match key.strip_suffix('*') {
            Some(_) if field.is_some() || index.is_some() => {
                Err(MappingError::GlobWithAliasOrIndex {
                    entry: entry.to_string(),
                })
            }
            Some(prefix) => Ok(MappingEntry {
                key: prefix.to_string(),
                field: None,
                index: None,
                glob: true,
            }),
            None => Ok(MappingEntry {
                key: key.to_string(),
                field,
                index,
                glob: false,
            }),
        }
    }

    /// The fields this entry gives for `metadata`: (field name, values), none for a key that is
    /// absent, has no value, or has no value at the index asked for.
    pub fn fields<'m>(&self, metadata: &'m Metadata) -> Vec<(String, Vec<&'m str>)> {
        let matching: Vec<&str> = if self.glob {
            metadata
                .iter()
                .map(|(key, _)| key)
                .filter(|key| key.starts_with(&self.key))
                .collect()
        } else {
            vec![self.key.as_str()]
        };
        let mut fields = Vec::new();
        for key in matching {
            let values = metadata.values(key);
            let chosen: Vec<&str> = match self.index {
                None => values.iter().map(String::as_str).collect(),
                Some(index) => values.get(index).map(String::as_str).into_iter().collect(),
            };
            if chosen.is_empty() {
                continue;
            }
            let name = self.field.clone().unwrap_or_else(|| key.to_string());
            fields.push((name, chosen));
        }
        fields
    }
}

impl TryFrom<String> for MappingEntry {
    type Error = MappingError;

    fn try_from(entry: String) -> Result<Self, Self::Error> {
        MappingEntry::parse(&entry)
    }
}

impl From<MappingEntry> for String {
    /// The entry as written: `key[index]=field`, or `prefix*`.
    fn from(entry: MappingEntry) -> String {
        let mut text = entry.key;
        if let Some(index) = entry.index {
            text.push_str(&format!("[{index}]"));
        }
        if entry.glob {
            text.push('*');
        }
        if let Some(field) = entry.field {
            text.push('=');
            text.push_str(&field);
        }
        text
    }
}

/// `key[12]` → (`key`, Some(12)); the first bracketed number is the index, as in StormCrawler.
fn split_index<'k>(key: &'k str, entry: &str) -> Result<(&'k str, Option<usize>), MappingError> {
    let Some(open) = key.find('[') else {
        return Ok((key, None));
    };
    let rest = &key[open + 1..];
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || !rest[digits..].starts_with(']') {
        return Ok((key, None));
    }
    let index = rest[..digits]
        .parse()
        .map_err(|_| MappingError::IndexTooLarge {
            entry: entry.to_string(),
        })?;
    Ok((&key[..open], Some(index)))
}

/// `indexer.md.filter`: a page is indexed only when its metadata has `key` with `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataFilter {
    key: String,
    value: String,
}

impl MetadataFilter {
    /// Reads `key=value` (both trimmed); an empty filter is none.
    pub fn parse(filter: &str) -> Result<Option<MetadataFilter>, MappingError> {
        if filter.trim().is_empty() {
            return Ok(None);
        }
        match filter.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => Ok(Some(MetadataFilter {
                key: key.trim().to_string(),
                value: value.trim().to_string(),
            })),
            _ => Err(MappingError::FilterNotKeyValue {
                filter: filter.to_string(),
            }),
        }
    }

    /// Whether `metadata` passes.
    pub fn admits(&self, metadata: &Metadata) -> bool {
        metadata.values(&self.key).contains(&self.value)
    }
}

impl std::fmt::Display for MetadataFilter {
    /// The filter as written: `key=value`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> MappingEntry {
        MappingEntry::parse(text).expect("valid entry")
    }

    #[test]
    fn entries_are_read_in_every_form() {
        assert_eq!(
            entry(" parse.title = title "),
            MappingEntry {
                key: "parse.title".into(),
                field: Some("title".into()),
                index: None,
                glob: false
            }
        );
        assert_eq!(entry("domain").field, None);
        let indexed = entry("parse.keywords[1]=first");
        assert_eq!(
            (indexed.key.as_str(), indexed.index),
            ("parse.keywords", Some(1))
        );
        assert!(entry("parse.*").glob);
        assert_eq!(entry("parse.*").key, "parse.");
    }

    #[test]
    fn bad_entries_are_named() {
        let glob = MappingEntry::parse("parse.*=x").expect_err("glob with alias");
        assert!(glob.to_string().contains("parse.*=x"), "{glob}");
        assert!(MappingEntry::parse("parse.*[0]").is_err());
        assert!(MappingEntry::parse("=field").is_err());
        assert!(MappingEntry::parse("a[99999999999999999999999]").is_err());
        assert!(MetadataFilter::parse("noequals").is_err());
        assert_eq!(MetadataFilter::parse(" ").expect("empty"), None);
    }

    #[test]
    fn fields_follow_the_entry() {
        let mut metadata = Metadata::new();
        metadata.set_values("parse.keywords", vec!["a".into(), "b".into()]);
        metadata.set("parse.title", "T");
        metadata.set("other", "o");
        let fields = entry("parse.keywords").fields(&metadata);
        assert_eq!(fields, [("parse.keywords".to_string(), vec!["a", "b"])]);
        let second = entry("parse.keywords[1]=kw").fields(&metadata);
        assert_eq!(second, [("kw".to_string(), vec!["b"])]);
        assert!(entry("parse.keywords[2]").fields(&metadata).is_empty());
        assert!(entry("absent").fields(&metadata).is_empty());
        let mut globbed: Vec<String> = entry("parse.*")
            .fields(&metadata)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        globbed.sort();
        assert_eq!(globbed, ["parse.keywords", "parse.title"]);
    }

    #[test]
    fn the_filter_needs_the_value() {
        let filter = MetadataFilter::parse("lang = en")
            .expect("valid")
            .expect("some");
        let mut metadata = Metadata::new();
        assert!(!filter.admits(&metadata));
        metadata.set_values("lang", vec!["fr".into(), "en".into()]);
        assert!(filter.admits(&metadata));
    }
}
