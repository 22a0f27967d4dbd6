//! The shape of a StormCrawler filter file: a top-level key naming the chain, with a list of
//! filters, each a class, a name and params.

use serde_json::Value;

use super::FilterFileError;

/// The package prefixes of StormCrawler's classes: 3.x (Apache) and 2.x (DigitalPebble).
pub const CLASS_PREFIXES: [&str; 2] = [
    "org.apache.stormcrawler.",
    "com.digitalpebble.stormcrawler.",
];

/// The three kinds of StormCrawler filter files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `urlfilters.json`: URL filters and normalizers (`urlfilters.config.file`).
    UrlFilters,
    /// `parsefilters.json`: parse filters (`parsefilters.config.file`).
    ParseFilters,
    /// `jsoupfilters.json`: filters on the parsed HTML (`jsoup.filters.config.file`).
    JSoupFilters,
}

impl FileKind {
    /// The class naming the chain, without its package prefix: the file's top-level key.
    pub fn chain_class(self) -> &'static str {
        match self {
            FileKind::UrlFilters => "filtering.URLFilters",
            FileKind::ParseFilters => "parse.ParseFilters",
            FileKind::JSoupFilters => "parse.JSoupFilters",
        }
    }

    /// The file's usual name.
    pub fn file_name(self) -> &'static str {
        match self {
            FileKind::UrlFilters => "urlfilters.json",
            FileKind::ParseFilters => "parsefilters.json",
            FileKind::JSoupFilters => "jsoupfilters.json",
        }
    }

    /// The config key that names such a file.
    pub fn key(self) -> &'static str {
        match self {
            FileKind::UrlFilters => "urlfilters.config.file",
            FileKind::ParseFilters => "parsefilters.config.file",
            FileKind::JSoupFilters => "jsoup.filters.config.file",
        }
    }
}

/// One filter of a chain.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entry {
    /// The class as written.
    pub class: String,
    /// The class without its package prefix (`filtering.basic.BasicURLFilter`).
    pub short: String,
    /// Its params: an object, or null when it has none.
    pub params: Value,
}

/// `class` without a StormCrawler package prefix (as written when it has none).
pub(super) fn short_class(class: &str) -> &str {
    CLASS_PREFIXES
        .iter()
        .find_map(|prefix| class.strip_prefix(prefix))
        .unwrap_or(class)
}

/// The filters of a file of this kind, in order.
pub(super) fn entries(
    path: &str,
    text: &str,
    kind: FileKind,
) -> Result<Vec<Entry>, FilterFileError> {
    let malformed = |message: String| FilterFileError::Malformed {
        path: path.to_string(),
        message,
    };
    let document: Value =
        serde_json::from_str(text).map_err(|e| malformed(format!("not valid JSON: {e}")))?;
    let Value::Object(top) = document else {
        return Err(malformed("the top level must be a JSON object".to_string()));
    };
    let chain = top.iter().find(|(key, _)| {
        short_class(key) == kind.chain_class() && key.as_str() != kind.chain_class()
    });
    let Some((_, list)) = chain else {
        let found: Vec<&str> = top.keys().map(String::as_str).collect();
        return Err(malformed(format!(
            "a {} file holds its filters under `{}{}` (or `{}{}`); found {}",
            kind.file_name(),
            CLASS_PREFIXES[0],
            kind.chain_class(),
            CLASS_PREFIXES[1],
            kind.chain_class(),
            if found.is_empty() {
                "nothing".to_string()
            } else {
                found.join(", ")
            }
        )));
    };
    let Value::Array(list) = list else {
        return Err(malformed("the filters must be a JSON list".to_string()));
    };
    list.iter()
        .enumerate()
        .map(|(index, filter)| {
            entry(filter).map_err(|message| malformed(format!("filter {}: {message}", index + 1)))
        })
        .collect()
}

/// One filter's class and params.
fn entry(filter: &Value) -> Result<Entry, String> {
    let Value::Object(fields) = filter else {
        return Err("must be a JSON object with a \"class\"".to_string());
    };
    let class = match fields.get("class") {
        Some(Value::String(class)) => class.trim().to_string(),
        Some(_) => return Err("\"class\" must be a string".to_string()),
        None => return Err("has no \"class\"".to_string()),
    };
    let params = fields.get("params").cloned().unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Null) {
        return Err(format!("{class}: \"params\" must be a JSON object"));
    }
    Ok(Entry {
        short: short_class(&class).to_string(),
        class,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_prefixes_name_the_chain_and_the_classes() {
        for prefix in CLASS_PREFIXES {
            let text = format!(
                r#"{{"{prefix}filtering.URLFilters": [
                    {{"class": " {prefix}filtering.basic.SelfURLFilter", "name": "Self"}},
                    {{"class": "{prefix}filtering.basic.BasicURLFilter", "params": {{"maxLength": 9}}}}
                ]}}"#
            );
            let list = entries("f.json", &text, FileKind::UrlFilters).expect("valid");
            assert_eq!(list.len(), 2);
            assert_eq!(list[0].short, "filtering.basic.SelfURLFilter");
            assert_eq!(list[0].params, Value::Null);
            assert_eq!(list[1].params["maxLength"], 9);
        }
    }

    #[test]
    fn a_file_of_another_kind_or_shape_is_refused_by_name() {
        let parse = r#"{"org.apache.stormcrawler.parse.ParseFilters": []}"#;
        let err = entries("p.json", parse, FileKind::UrlFilters).expect_err("wrong kind");
        let message = err.to_string();
        assert!(message.starts_with("p.json: "), "{message}");
        assert!(message.contains("filtering.URLFilters"), "{message}");
        assert!(message.contains("parse.ParseFilters"), "{message}");
        for (text, expected) in [
            ("{", "not valid JSON"),
            ("[]", "JSON object"),
            (
                r#"{"org.apache.stormcrawler.parse.ParseFilters": {}}"#,
                "JSON list",
            ),
            (
                r#"{"org.apache.stormcrawler.parse.ParseFilters": [{"name": "x"}]}"#,
                "filter 1: has no \"class\"",
            ),
            (
                r#"{"org.apache.stormcrawler.parse.ParseFilters": [{"class": "x", "params": 3}]}"#,
                "\"params\"",
            ),
        ] {
            let err = entries("p.json", text, FileKind::ParseFilters).expect_err(text);
            assert!(err.to_string().contains(expected), "{err}");
        }
    }
}
