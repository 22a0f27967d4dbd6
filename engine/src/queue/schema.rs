//! The queues index: one small document per queue key, with the earliest due date of its URLs
//! (`nextDue`), a lease, and shared politeness state.
//!
//! The invariant every writer keeps: a queue's `nextDue` is never later than the earliest
//! `nextFetchDate` of its URLs (it may be earlier, which costs one query that finds nothing).
//!
//! Its field names are declared once, in [`fields`](super::fields).

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use squall::frontier::{LearnedPace, StatusWrite};

use super::edit_rules::{KeyedEdit, QueueEdit};
use super::fields::{
    BLOCKED_UNTIL, CRAWL_DELAY_SECONDS, FIRST_SEEN, HELD_DUE, KEY, LAST_UPDATED, LEASE_OWNER,
    LEASE_UNTIL, NEXT_DUE,
};
use super::pace::{PaceParams, pace_properties};
use crate::status_index::schema::{document_id, format_date, index_settings};

/// A date field of the queues index's mapping.
fn date_mapping() -> Value {
    json!({ "type": "date", "format": "date_optional_time" })
}

/// The queues index's settings and mapping.
pub fn queues_index_body(shards: u32, replicas: u32, refresh_interval: &str) -> Value {
    let mut body = json!({
        "settings": index_settings(shards, replicas, refresh_interval),
        "mappings": {
            "dynamic": "strict",
            "properties": {
                KEY: { "type": "keyword" },
                NEXT_DUE: date_mapping(),
                LEASE_OWNER: { "type": "keyword" },
                LEASE_UNTIL: date_mapping(),
                FIRST_SEEN: date_mapping(),
                LAST_UPDATED: date_mapping(),
                CRAWL_DELAY_SECONDS: { "type": "float" },
                BLOCKED_UNTIL: date_mapping(),
                HELD_DUE: date_mapping()
            }
        }
    });
    if let (Some(properties), Value::Object(pace)) = (
        body["mappings"]["properties"].as_object_mut(),
        pace_properties(),
    ) {
        properties.extend(pace);
    }
    body
}

/// The id of a queue's document: the hex SHA-256 of its key.
pub fn queue_id(key: &str) -> String {
    document_id(key)
}

/// What a batch of writes says about one queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueChange {
    /// The earliest due date written for the key.
    pub due: Option<DateTime<Utc>>,
    /// The latest Retry-After hold reported for the key.
    pub blocked_until: Option<DateTime<Utc>>,
    /// The crawl delay learned from the key's robots.txt, in seconds.
    pub crawl_delay: Option<f64>,
    /// The pace the fetcher learned last for the key.
    pub pace: Option<LearnedPace>,
}

impl QueueChange {
    /// The politeness state that `write` reports for its queue, with no due date.
    pub fn reported(write: &StatusWrite) -> QueueChange {
        QueueChange {
            due: None,
            blocked_until: write.queue.blocked_until,
            crawl_delay: write.queue.crawl_delay.map(|d| d.as_secs_f64()),
            pace: write.queue.pace,
        }
    }

    /// Folds `other` in: the earlier due date, the later hold, `other`'s crawl delay if it has one,
    /// the pace learned last.
    pub fn merge(&mut self, other: &QueueChange) {
        if let Some(due) = other.due {
            self.due = Some(self.due.map_or(due, |d| d.min(due)));
        }
        if let Some(blocked) = other.blocked_until {
            self.blocked_until = Some(self.blocked_until.map_or(blocked, |b| b.max(blocked)));
        }
        if other.crawl_delay.is_some() {
            self.crawl_delay = other.crawl_delay;
        }
        self.pace = LearnedPace::newer(self.pace, other.pace);
    }
}

/// The edit that creates the queue of `key` if missing, or lowers its `nextDue` to `due`.
pub(crate) fn lower_next_due(key: &str, due: DateTime<Utc>, now: DateTime<Utc>) -> KeyedEdit {
    let change = QueueChange {
        due: Some(due),
        ..QueueChange::default()
    };
    queue_update(key, &change, now)
}

/// The edit applying `change` to the queue of `key`, creating the queue if missing.
pub(crate) fn queue_update(key: &str, change: &QueueChange, now: DateTime<Utc>) -> KeyedEdit {
    let due = change.due.map(format_date);
    let blocked = change.blocked_until.map(format_date);
    let now = format_date(now);
    let mut upsert = new_queue(key, &now);
    if let Some(due) = &due {
        upsert[NEXT_DUE] = json!(due);
        upsert[HELD_DUE] = json!(due);
    }
    if let Some(blocked) = &blocked {
        upsert[BLOCKED_UNTIL] = json!(blocked);
    }
    if let Some(delay) = change.crawl_delay {
        upsert[CRAWL_DELAY_SECONDS] = json!(delay);
    }
    let pace = change.pace.as_ref().map(PaceParams::of);
    if let (Some(pace), Value::Object(fields)) = (&pace, &mut upsert) {
        pace.write_to(fields);
    }
    KeyedEdit {
        key: key.to_string(),
        edit: QueueEdit::Lower {
            due,
            blocked,
            delay: change.crawl_delay,
            pace,
            now,
        },
        upsert: Some(upsert),
    }
}

/// The edit that creates the queue of `key` when it is missing (with no `nextDue`: its URLs are
/// never due) and leaves an existing one alone.
pub(crate) fn ensure_queue(key: &str, now: DateTime<Utc>) -> KeyedEdit {
    let now = format_date(now);
    KeyedEdit {
        key: key.to_string(),
        edit: QueueEdit::Keep,
        upsert: Some(new_queue(key, &now)),
    }
}

/// A new queue document for `key`, written at `now`, with no due date.
fn new_queue(key: &str, now: &str) -> Value {
    json!({ KEY: key, FIRST_SEEN: now, LAST_UPDATED: now })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::utc;

    #[test]
    fn a_queue_upsert_creates_or_lowers() {
        let due = utc(2024, 1, 2, 3, 4, 5);
        let update = lower_next_due("a.test", due, due);
        assert_eq!(update.key, "a.test");
        let upsert = update.upsert.expect("an upsert");
        assert_eq!(
            upsert["nextDue"],
            json!("2024-01-02T03:04:05.000Z"),
            "the wire name"
        );
        assert_eq!(
            update.edit.painless()["params"]["due"],
            json!("2024-01-02T03:04:05.000Z")
        );
    }
}
