//! Reading a filter's params, with errors naming the file, the class and the param.

use serde_json::{Map, Value};

use super::FilterFileError;
use super::chain::Entry;

/// The params of one filter of a file.
pub(super) struct Params<'a> {
    path: &'a str,
    class: &'a str,
    fields: Map<String, Value>,
}

impl<'a> Params<'a> {
    /// The params of `entry`, in the file at `path`.
    pub(super) fn new(path: &'a str, entry: &'a Entry) -> Self {
        let fields = match &entry.params {
            Value::Object(fields) => fields.clone(),
            _ => Map::new(),
        };
        Params {
            path,
            class: &entry.class,
            fields,
        }
    }

    /// The error for `param`.
    pub(super) fn error(&self, param: &str, message: impl Into<String>) -> FilterFileError {
        FilterFileError::BadParam {
            path: self.path.to_string(),
            class: self.class.to_string(),
            param: param.to_string(),
            message: message.into(),
        }
    }

    /// Fails on a param not in `known` (a misspelt param would otherwise do nothing).
    pub(super) fn only(&self, known: &[&str]) -> Result<(), FilterFileError> {
        match self
            .fields
            .keys()
            .find(|name| !known.contains(&name.as_str()))
        {
            Some(unknown) if known.is_empty() => {
                Err(self.error(unknown, "is not known (this filter takes no params)"))
            }
            Some(unknown) => Err(self.error(
                unknown,
                format!("is not known (known: {})", known.join(", ")),
            )),
            None => Ok(()),
        }
    }

    /// Every param, in the file's order.
    pub(super) fn all(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.fields.iter()
    }

    /// A boolean param (`true`, `false`, or those as strings).
    pub(super) fn bool(&self, name: &str, default: bool) -> Result<bool, FilterFileError> {
        match self.fields.get(name) {
            None => Ok(default),
            Some(Value::Bool(value)) => Ok(*value),
            Some(Value::String(text)) if text.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(text)) if text.eq_ignore_ascii_case("false") => Ok(false),
            Some(other) => Err(self.error(name, format!("must be true or false, not {other}"))),
        }
    }

    /// A whole-number param (a number, or a number as a string).
    pub(super) fn int(&self, name: &str) -> Result<Option<i64>, FilterFileError> {
        match self.fields.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
            Some(Value::String(text)) if text.trim().parse::<i64>().is_ok() => {
                Ok(text.trim().parse().ok())
            }
            Some(other) => Err(self.error(name, format!("must be a whole number, not {other}"))),
        }
    }

    /// A string param.
    pub(super) fn string(&self, name: &str) -> Result<Option<String>, FilterFileError> {
        match self.fields.get(name) {
            None => Ok(None),
            Some(value) => text(value)
                .map(Some)
                .ok_or_else(|| self.error(name, format!("must be a string, not {value}"))),
        }
    }

    /// A list of strings, or one string.
    pub(super) fn strings(&self, name: &str) -> Result<Option<Vec<String>>, FilterFileError> {
        match self.fields.get(name) {
            None => Ok(None),
            Some(value) => strings(value).map(Some).ok_or_else(|| {
                self.error(
                    name,
                    format!("must be a string or a list of strings, not {value}"),
                )
            }),
        }
    }
}

/// A string, number or boolean as text (as Jackson's `asText` reads it).
pub(super) fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A list of texts, or one text as a list.
pub(super) fn strings(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Array(items) => items.iter().map(text).collect(),
        other => text(other).map(|one| vec![one]),
    }
}
