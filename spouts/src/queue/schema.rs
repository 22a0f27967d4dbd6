//! The queues index: one small document per queue key, with the earliest due date of its URLs
//! (`nextDue`), a lease, and shared politeness state.
//!
//! The invariant every writer keeps: a queue's `nextDue` is never later than the earliest
//! `nextFetchDate` of its URLs (it may be earlier, which costs one query that finds nothing).

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::schema::{document_id, format_date};

/// The queues index's settings and mapping.
pub fn queues_index_body(shards: u32, replicas: u32, refresh_interval: &str) -> Value {
    json!({
        "settings": { "index": {
            "number_of_shards": shards,
            "number_of_replicas": replicas,
            "refresh_interval": refresh_interval
        } },
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "key": { "type": "keyword" },
                "nextDue": { "type": "date", "format": "date_optional_time" },
                "leaseOwner": { "type": "keyword" },
                "leaseUntil": { "type": "date", "format": "date_optional_time" },
                "firstSeen": { "type": "date", "format": "date_optional_time" },
                "lastUpdated": { "type": "date", "format": "date_optional_time" },
                "crawlDelaySeconds": { "type": "float" },
                "blockedUntil": { "type": "date", "format": "date_optional_time" }
            }
        }
    })
}

/// The id of a queue's document: the hex SHA-256 of its key.
pub fn queue_id(key: &str) -> String {
    document_id(key)
}

/// The painless script that lowers `nextDue` to `params.due` (and never raises it). Dates are compared
/// as strings: every writer uses [`format_date`]'s fixed-width UTC form.
pub const LOWER_NEXT_DUE: &str = "if (ctx._source.nextDue == null || \
    ctx._source.nextDue.compareTo(params.due) > 0) { ctx._source.nextDue = params.due; \
    ctx._source.lastUpdated = params.now } else { ctx.op = 'noop' }";

/// A bulk `update` pair that creates the queue of `key` if missing, or lowers its `nextDue` to `due`.
pub fn lower_next_due(
    queues_index: &str,
    key: &str,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
) -> [Value; 2] {
    let due = format_date(due);
    let now = format_date(now);
    [
        json!({ "update": { "_index": queues_index, "_id": queue_id(key), "retry_on_conflict": 5 } }),
        json!({
            "script": { "source": LOWER_NEXT_DUE, "lang": "painless",
                        "params": { "due": due, "now": now } },
            "upsert": { "key": key, "nextDue": due, "firstSeen": now, "lastUpdated": now }
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_queue_upsert_creates_or_lowers() {
        let due = Utc
            .with_ymd_and_hms(2024, 1, 2, 3, 4, 5)
            .single()
            .expect("date");
        let [action, body] = lower_next_due("queues", "a.test", due, due);
        assert_eq!(action["update"]["_id"], json!(queue_id("a.test")));
        assert_eq!(body["upsert"]["nextDue"], json!("2024-01-02T03:04:05.000Z"));
        assert_eq!(
            body["script"]["params"]["due"],
            json!("2024-01-02T03:04:05.000Z")
        );
    }
}
