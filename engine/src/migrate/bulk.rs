//! The migration's bulk writes: bodies written line by line into one buffer (a document's source
//! goes in as the bytes read, never rebuilt), every item must succeed; those refused with 429 (the
//! engine's write queue full) are sent again, with a growing wait, a few times.

use std::ops::Range;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use serde_json::Value;

use crate::client::{BulkResponse, EsClient, Method, RequestBody};

use super::MigrateError;

/// How bulk items refused with 429 are retried.
const BULK_RETRIES: u32 = 6;

/// What the engine is asked to answer of a bulk: enough to judge every item.
const FILTER_PATH: &str = "errors,items.*.status,items.*.result,items.*._id,items.*.error";

/// What a bulk did.
#[derive(Debug, Default)]
pub(crate) struct BulkOutcome {
    /// Documents created (not replaced or updated).
    pub created: u64,
}

/// A bulk body being written: newline-delimited JSON, and where each operation's lines are (so
/// that the items refused can be sent again).
#[derive(Debug, Default)]
pub(crate) struct RawBulk {
    body: Vec<u8>,
    items: Vec<Range<usize>>,
}

impl RawBulk {
    /// Operations in the body.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there is no operation.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Bytes in the body.
    pub fn bytes(&self) -> usize {
        self.body.len()
    }

    /// Adds an `index` of `source` (a JSON object's text) under `id`. A raw line feed can only be
    /// whitespace between tokens in JSON (inside strings it is escaped), so any is made a space.
    pub fn push_index(&mut self, id: &str, source: &str) {
        let start = self.body.len();
        self.body.extend_from_slice(b"{\"index\":{\"_id\":");
        // Writing a string into a vector does not fail.
        let _ = serde_json::to_writer(&mut self.body, id);
        self.body.extend_from_slice(b"}}\n");
        let document = self.body.len();
        self.body.extend_from_slice(source.as_bytes());
        for byte in &mut self.body[document..] {
            if *byte == b'\n' {
                *byte = b' ';
            }
        }
        self.body.push(b'\n');
        self.items.push(start..self.body.len());
    }
}

/// Sends a bulk body to `index`, retrying the items refused with 429; fails on any other item
/// error.
pub(crate) async fn send(
    client: &EsClient,
    index: &str,
    raw: RawBulk,
) -> Result<BulkOutcome, MigrateError> {
    let mut outcome = BulkOutcome::default();
    let total = raw.len();
    let path = format!("/{index}/_bulk");
    let mut body = Bytes::from(raw.body);
    let mut items = raw.items;
    let mut wait = Duration::from_millis(500);
    let mut attempt = 0;
    while !items.is_empty() {
        let text = client
            .request_text(
                Method::Post,
                &path,
                &[("filter_path", FILTER_PATH)],
                Some(RequestBody::NdJsonBytes(body.clone())),
            )
            .await?;
        let answer: Value = serde_json::from_str(&text).map_err(|e| {
            MigrateError::Unexpected(format!("the answer to {path} is not JSON: {e}"))
        })?;
        let answer = BulkResponse::parse(answer, items.len(), &path)?;
        let mut retry = Vec::new();
        let mut failed = 0;
        let mut first = None;
        for (item, range) in answer.items.iter().zip(items) {
            if item.is_success() {
                outcome.created += u64::from(item.is_created());
            } else if item.status == 429 && attempt < BULK_RETRIES {
                retry.push(range);
            } else {
                failed += 1;
                first.get_or_insert_with(|| {
                    format!(
                        "{}: {} (HTTP {}, id {})",
                        item.error_type(),
                        item.reason().unwrap_or(""),
                        item.status,
                        item.id.as_deref().unwrap_or("?")
                    )
                });
            }
        }
        if failed > 0 {
            return Err(MigrateError::Bulk {
                index: index.to_string(),
                failed,
                total,
                first: first.unwrap_or_default(),
            });
        }
        if retry.is_empty() {
            break;
        }
        let mut again = BytesMut::new();
        let mut kept = Vec::with_capacity(retry.len());
        for range in retry {
            let start = again.len();
            again.extend_from_slice(&body[range]);
            kept.push(start..again.len());
        }
        body = again.freeze();
        items = kept;
        attempt += 1;
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(10));
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bodies_are_written_line_by_line() {
        let mut raw = RawBulk::default();
        raw.push_index("a\"1", "{\"url\":\n\"u\"}");
        raw.push_index("b", "{}");
        assert_eq!(raw.len(), 2);
        let text = String::from_utf8(raw.body.clone()).expect("text");
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("one JSON value per line"))
            .collect();
        assert_eq!(
            lines,
            vec![
                json!({ "index": { "_id": "a\"1" } }),
                json!({ "url": "u" }),
                json!({ "index": { "_id": "b" } }),
                json!({}),
            ]
        );
        assert_eq!(raw.bytes(), text.len());
        assert_eq!(
            &text[raw.items[1].clone()],
            text.split_inclusive('\n').skip(2).collect::<String>()
        );
    }
}
