//! An existing index is used as it is, but only when it is one squall can use: the fields it
//! reads and writes must be mapped with types it can query. An index with a foreign mapping (a
//! product catalogue named by mistake, an index whose `url` is text) is refused before anything is
//! written to it.

use serde_json::{Map, Value, json};

use crate::client::{EsClient, EsError, Method, RequestBody};
use crate::queue::fields;
use crate::queue::pace::pace_properties;

/// What is wrong with an existing index's mapping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "index `{index}` is not one squall can use as {role}: {problem}. Nothing was written to it; \
     name another index, or a new one that squall creates"
)]
pub struct ForeignMapping {
    /// The index (or alias) named.
    pub index: String,
    /// What squall wanted it for.
    pub role: String,
    /// The first field found missing or of another type.
    pub problem: String,
}

/// A field squall needs, and the types it can work with.
pub(crate) struct Needed<'a> {
    /// Its path (`url`, `metadata.hostname`).
    pub path: &'a str,
    /// The types that serve (`keyword`; `date`, `date_nanos`).
    pub types: &'static [&'static str],
    /// Whether the field may be missing from the mapping (a metadata field that no document has
    /// yet is mapped by the index's dynamic templates when one comes).
    pub optional: bool,
}

/// The fields of a status index (or urls index) whose partition key is in `key_field`.
pub(crate) fn status_fields(key_field: &str) -> Vec<Needed<'_>> {
    const KEYWORD: &[&str] = &["keyword"];
    const DATE: &[&str] = &["date", "date_nanos"];
    vec![
        Needed {
            path: "url",
            types: KEYWORD,
            optional: false,
        },
        Needed {
            path: "status",
            types: KEYWORD,
            optional: false,
        },
        Needed {
            path: "nextFetchDate",
            types: DATE,
            optional: false,
        },
        Needed {
            path: key_field,
            types: KEYWORD,
            optional: key_field.starts_with("metadata."),
        },
    ]
}

/// The fields of a queues index.
pub(crate) fn queue_fields() -> Vec<Needed<'static>> {
    const KEYWORD: &[&str] = &["keyword"];
    const DATE: &[&str] = &["date", "date_nanos"];
    vec![
        Needed {
            path: fields::KEY,
            types: KEYWORD,
            optional: false,
        },
        Needed {
            path: fields::NEXT_DUE,
            types: DATE,
            optional: false,
        },
        Needed {
            path: fields::LEASE_OWNER,
            types: KEYWORD,
            optional: false,
        },
        Needed {
            path: fields::LEASE_UNTIL,
            types: DATE,
            optional: false,
        },
        // The learned pace's: added when missing (see `add_pace_fields`), named when foreign.
        pace_field(fields::PACE_SECONDS, &["float", "double"]),
        pace_field(fields::PACE_CAUSE, KEYWORD),
        pace_field(fields::PACE_STRIKES, &["integer", "long"]),
        pace_field(fields::PACE_LIMIT_SECONDS, &["float", "double"]),
        pace_field(fields::PACE_UPDATED, DATE),
    ]
}

fn pace_field(path: &'static str, types: &'static [&'static str]) -> Needed<'static> {
    Needed {
        path,
        types,
        optional: true,
    }
}

/// Checks the mapping of every index behind `index` for `needed`; `role` names what the index is
/// for in the message ("the status index"). Gives the mappings it read (`GET <index>/_mapping`).
pub(crate) async fn check_mapping(
    client: &EsClient,
    index: &str,
    role: &str,
    needed: &[Needed<'_>],
) -> Result<Value, MappingCheckError> {
    let answer = client
        .request(Method::Get, &format!("/{index}/_mapping"), &[], None)
        .await?;
    let Value::Object(indices) = &answer else {
        return Ok(answer);
    };
    for mapping in indices.values() {
        if let Some(problem) = first_problem(&mapping["mappings"], needed) {
            return Err(MappingCheckError::Foreign(ForeignMapping {
                index: index.to_string(),
                role: role.to_string(),
                problem,
            }));
        }
    }
    Ok(answer)
}

/// Why an index could not be checked, or what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum MappingCheckError {
    /// The mapping could not be read.
    #[error(transparent)]
    Engine(#[from] EsError),
    /// The mapping is not one squall can use.
    #[error(transparent)]
    Foreign(#[from] ForeignMapping),
}

/// Adds the learned pace's fields that an existing queues index lacks (one made by a squall
/// before them): an additive change, which an index mapped `"dynamic": "strict"` takes. Nothing
/// is sent when every field is there, so opening needs no right to change a mapping then.
/// `mapping` is what [`check_mapping`] read with [`queue_fields`] (which names a pace field of
/// another type).
pub(crate) async fn add_pace_fields(
    client: &EsClient,
    index: &str,
    mapping: &Value,
) -> Result<(), EsError> {
    let Value::Object(pace) = pace_properties() else {
        return Ok(());
    };
    let lacking: Map<String, Value> = pace
        .into_iter()
        .filter(|(field, _)| match mapping {
            Value::Object(indices) => indices
                .values()
                .any(|mapping| field_type(&mapping["mappings"], field).is_none()),
            _ => false,
        })
        .collect();
    if lacking.is_empty() {
        return Ok(());
    }
    let body = json!({ "properties": lacking });
    let path = format!("/{index}/_mapping");
    client
        .request(Method::Put, &path, &[], Some(RequestBody::Json(body)))
        .await
        .map(|_| ())
}

/// The first needed field that `mappings` lacks or maps with another type.
fn first_problem(mappings: &Value, needed: &[Needed<'_>]) -> Option<String> {
    needed
        .iter()
        .find_map(|field| match field_type(mappings, field.path) {
            Some(kind) if field.types.contains(&kind) => None,
            Some(kind) => Some(format!(
                "field `{}` is mapped as {kind}, where squall needs {}",
                field.path,
                field.types.join(" or ")
            )),
            None if field.optional => None,
            None => Some(format!("it has no field `{}` in its mapping", field.path)),
        })
}

/// The type of the field at `path` (`a.b`: property `b` of object `a`).
fn field_type<'a>(mappings: &'a Value, path: &str) -> Option<&'a str> {
    let mut node = mappings;
    for part in path.split('.') {
        node = node.get("properties")?.get(part)?;
    }
    match node.get("type").and_then(Value::as_str) {
        Some(kind) => Some(kind),
        None if node.get("properties").is_some() => Some("object"),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_status_mapping_passes_and_a_foreign_one_is_named() {
        let status = json!({ "properties": {
            "url": { "type": "keyword" }, "status": { "type": "keyword" },
            "nextFetchDate": { "type": "date" }, "key": { "type": "keyword" },
            "metadata": { "dynamic": "true", "properties": { "hostname": { "type": "keyword" } } } } });
        assert_eq!(first_problem(&status, &status_fields("key")), None);
        assert_eq!(
            first_problem(&status, &status_fields("metadata.hostname")),
            None
        );
        assert_eq!(
            first_problem(&status, &status_fields("metadata.domain")),
            None
        );
        let products = json!({ "properties": {
            "name": { "type": "text" }, "price": { "type": "float" } } });
        assert_eq!(
            first_problem(&products, &status_fields("key")).as_deref(),
            Some("it has no field `url` in its mapping")
        );
        let text_url = json!({ "properties": {
            "url": { "type": "text", "fields": { "keyword": { "type": "keyword" } } } } });
        assert_eq!(
            first_problem(&text_url, &status_fields("key")).as_deref(),
            Some("field `url` is mapped as text, where squall needs keyword")
        );
        assert!(first_problem(&json!({}), &queue_fields()).is_some());
    }

    #[test]
    fn a_queues_mapping_may_lack_the_pace_but_not_map_it_otherwise() {
        let mut queues = json!({ "properties": {
            "key": { "type": "keyword" }, "nextDue": { "type": "date" },
            "leaseOwner": { "type": "keyword" }, "leaseUntil": { "type": "date" } } });
        assert_eq!(
            first_problem(&queues, &queue_fields()),
            None,
            "made before it"
        );
        queues["properties"]["paceCause"] = json!({ "type": "text" });
        assert_eq!(
            first_problem(&queues, &queue_fields()).as_deref(),
            Some("field `paceCause` is mapped as text, where squall needs keyword")
        );
    }
}
