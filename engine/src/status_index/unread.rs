//! Replacing a status document no spout read while keeping its creation date, on an engine that
//! runs no Painless (an Elasticsearch node without its modules, or scripts turned off).
//!
//! With Painless, the writer sends one scripted update that keeps the date the document has. Without
//! it, the writer reads each such document's date and version first (a realtime `_mget`, which sees
//! every acknowledged write), then writes the replacement carrying that date only if the document is
//! still that version (`if_seq_no` / `if_primary_term`), or creates it dated now when it was missing.
//! Either write fails with a conflict when another writer got there in between; the writer then
//! reads again, as the engine's own retries of a scripted update would. So the date kept is always
//! the one of the version replaced.

use serde_json::{Value, json};

use super::schema::CREATION_DATE;
use crate::client::{BulkOperation, EsClient, EsError, Method, RequestBody};

/// An unread document as just read.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Current {
    /// Not there: the replacement creates it, dated now.
    Missing,
    /// There, with its creation date (`None` when undated) and version.
    Found {
        /// The creation date, as stored.
        created: Option<Value>,
        /// The version read (`_seq_no`).
        seq_no: i64,
        /// The version read (`_primary_term`).
        primary_term: i64,
    },
}

impl Current {
    /// The write that replaces the document read by `document` (the new status document, undated),
    /// keeping the date read, or creating it dated `now`.
    pub(super) fn replacement(
        &self,
        id: String,
        mut document: Value,
        now: &Value,
    ) -> BulkOperation {
        match self {
            Current::Missing => {
                document[CREATION_DATE] = now.clone();
                BulkOperation::create(id, document)
            }
            Current::Found {
                created,
                seq_no,
                primary_term,
            } => {
                if let Some(created) = created {
                    document[CREATION_DATE] = created.clone();
                }
                BulkOperation::index(id, document).if_version(*seq_no, *primary_term)
            }
        }
    }
}

/// Reads, as of now, the creation date and version of each document `(id, routing)` of `index`:
/// per document, what it is, or why the engine could not read it (a shard unavailable). Fails as a
/// whole only when the engine cannot be reached or answers what squall cannot read.
pub(super) async fn read_current(
    client: &EsClient,
    index: &str,
    docs: &[(String, Option<String>)],
) -> Result<Vec<Result<Current, String>>, EsError> {
    let path = format!("/{index}/_mget");
    let asked: Vec<Value> = docs
        .iter()
        .map(|(id, routing)| match routing {
            Some(routing) => json!({ "_id": id, "routing": routing }),
            None => json!({ "_id": id }),
        })
        .collect();
    let answer = client
        .request(
            Method::Post,
            &path,
            &[("realtime", "true"), ("_source_includes", CREATION_DATE)],
            Some(RequestBody::Json(json!({ "docs": asked }))),
        )
        .await?;
    let answered = answer["docs"].as_array().cloned().unwrap_or_default();
    if answered.len() != docs.len() {
        return Err(EsError::Decode {
            path,
            message: format!(
                "{} documents asked, {} answered",
                docs.len(),
                answered.len()
            ),
        });
    }
    Ok(answered.iter().map(current).collect())
}

/// One `_mget` answer document.
fn current(doc: &Value) -> Result<Current, String> {
    if let Some(error) = doc.get("error") {
        return Err(error.to_string());
    }
    if doc["found"].as_bool() != Some(true) {
        return Ok(Current::Missing);
    }
    match (doc["_seq_no"].as_i64(), doc["_primary_term"].as_i64()) {
        (Some(seq_no), Some(primary_term)) => Ok(Current::Found {
            created: doc["_source"]
                .get(CREATION_DATE)
                .filter(|date| !date.is_null())
                .cloned(),
            seq_no,
            primary_term,
        }),
        _ => Err(format!("no version in {doc}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_found_document_keeps_its_date_and_is_replaced_only_at_its_version() {
        let doc = json!({ "_id": "x", "found": true, "_seq_no": 7, "_primary_term": 2,
            "_source": { CREATION_DATE: "2026-01-02T03:04:05.000Z" } });
        let read = current(&doc).expect("read");
        let now = json!("2026-12-07T00:00:00.000Z");
        let write = read.replacement("x".into(), json!({ "status": "FETCHED" }), &now);
        let lines: crate::client::BulkRequest = std::iter::once(write).collect();
        let lines = lines.lines();
        assert_eq!(lines[0]["index"]["if_seq_no"], 7);
        assert_eq!(lines[0]["index"]["if_primary_term"], 2);
        assert_eq!(lines[1][CREATION_DATE], "2026-01-02T03:04:05.000Z");
        assert_eq!(lines[1]["status"], "FETCHED");
    }

    #[test]
    fn an_undated_document_stays_undated_and_a_missing_one_is_created_dated_now() {
        let undated = json!({ "found": true, "_seq_no": 1, "_primary_term": 1, "_source": {} });
        let now = json!("2026-12-07T00:00:00.000Z");
        let write = current(&undated)
            .expect("read")
            .replacement("x".into(), json!({}), &now);
        let request: crate::client::BulkRequest = std::iter::once(write).collect();
        assert!(request.lines()[1].get(CREATION_DATE).is_none());

        let missing = current(&json!({ "_id": "x", "found": false })).expect("read");
        assert_eq!(missing, Current::Missing);
        let write = missing.replacement("x".into(), json!({}), &now);
        let request: crate::client::BulkRequest = std::iter::once(write).collect();
        let lines = request.lines();
        assert!(lines[0].get("create").is_some());
        assert_eq!(lines[1][CREATION_DATE], now);
    }

    #[test]
    fn a_document_the_engine_could_not_read_says_why() {
        let failed =
            json!({ "_id": "x", "error": { "type": "no_shard_available_action_exception" } });
        let why = current(&failed).expect_err("not read");
        assert!(why.contains("no_shard_available"), "{why}");
    }
}
