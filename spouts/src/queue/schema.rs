//! The queues index: one small document per queue key, with the earliest due date of its URLs
//! (`nextDue`), a lease, and shared politeness state.
//!
//! The invariant every writer keeps: a queue's `nextDue` is never later than the earliest
//! `nextFetchDate` of its URLs (it may be earlier, which costs one query that finds nothing).

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::client::BulkOperation;
use crate::status_index::schema::{document_id, format_date};

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
                "blockedUntil": { "type": "date", "format": "date_optional_time" },
                "heldDue": { "type": "date", "format": "date_optional_time" }
            }
        }
    })
}

/// The id of a queue's document: the hex SHA-256 of its key.
pub fn queue_id(key: &str) -> String {
    document_id(key)
}

/// The painless script a writer runs on a queue per batch: lowers `nextDue` to `params.due`
/// (never raising it), pushes `blockedUntil` later to `params.blocked`, and records `params.delay` as
/// the crawl delay; each parameter may be null.
///
/// Every due date written is also recorded, whether or not it lowers `nextDue`: `heldDue` keeps the
/// earliest one since the queue was last given back, and `lastUpdated` when the last one was
/// written. A release folds `heldDue` into `nextDue` when that write may not have been visible to
/// the owner's read of the urls index (see [`RELEASE_QUEUE`]), so no URL written moments before a
/// release is stranded. Dates are compared as strings: every writer uses [`format_date`]'s
/// fixed-width UTC form.
pub const LOWER_NEXT_DUE: &str = "boolean changed = false; \
    if (params.due != null) { \
      if (ctx._source.heldDue == null || ctx._source.heldDue.compareTo(params.due) > 0) { ctx._source.heldDue = params.due } \
      if (ctx._source.nextDue == null || ctx._source.nextDue.compareTo(params.due) > 0) { ctx._source.nextDue = params.due } \
      changed = true } \
    if (params.blocked != null && (ctx._source.blockedUntil == null || ctx._source.blockedUntil.compareTo(params.blocked) < 0)) \
    { ctx._source.blockedUntil = params.blocked; changed = true } \
    if (params.delay != null && ctx._source.crawlDelaySeconds != params.delay) \
    { ctx._source.crawlDelaySeconds = params.delay; changed = true } \
    if (changed) { ctx._source.lastUpdated = params.now } else { ctx.op = 'noop' }";

/// The painless script that extends a lease to `params.until`, only for its owner `params.owner`
/// (a no-op otherwise: the lease was lost).
pub const RENEW_LEASE: &str = "if (ctx._source.leaseOwner == params.owner) \
    { ctx._source.leaseUntil = params.until } else { ctx.op = 'noop' }";

/// The painless script that gives a queue back, only for its lease owner `params.owner`.
///
/// `nextDue` becomes `params.next`, the earliest date the owner's read found among the queue's URLs
/// (null for none) — or `heldDue` if earlier, when the last due date was written at or after
/// `params.seenBefore`: such a write may not have shown in that read (the owner passes the time of
/// its claim less the urls index's visibility delay). `nextDue` is never raised otherwise, so it
/// stays no later than the earliest URL. The lease is cleared and `leaseUntil` set to `params.now`,
/// which puts the queue behind the due queues that waited longer.
pub const RELEASE_QUEUE: &str = "if (ctx._source.leaseOwner != params.owner) { ctx.op = 'noop' } else { \
    def next = params.next; def held = ctx._source.heldDue; def written = ctx._source.lastUpdated; \
    if (held != null && written != null && written.compareTo(params.seenBefore) >= 0 && (next == null || next.compareTo(held) > 0)) { next = held } \
    ctx._source.nextDue = next; ctx._source.remove('heldDue'); ctx._source.leaseOwner = null; \
    ctx._source.leaseUntil = params.now }";

/// The painless script that drops a lease without touching `nextDue`, only for its owner
/// `params.owner`: for a queue given back while it may still have due URLs (its hold ran out, or the
/// process holds more than its share, or it stops). `nextDue` was not raised while the queue was
/// held, so it is still no later than the earliest URL.
pub const DROP_LEASE: &str = "if (ctx._source.leaseOwner != params.owner) { ctx.op = 'noop' } else { \
    ctx._source.leaseOwner = null; ctx._source.leaseUntil = params.now }";

/// What a batch of writes says about one queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueChange {
    /// The earliest due date written for the key.
    pub due: Option<DateTime<Utc>>,
    /// The latest Retry-After hold reported for the key.
    pub blocked_until: Option<DateTime<Utc>>,
    /// The crawl delay learned from the key's robots.txt, in seconds.
    pub crawl_delay: Option<f64>,
}

/// A bulk `update` that creates the queue of `key` if missing, or lowers its `nextDue` to `due`.
pub fn lower_next_due(
    queues_index: &str,
    key: &str,
    due: DateTime<Utc>,
    now: DateTime<Utc>,
) -> BulkOperation {
    let change = QueueChange {
        due: Some(due),
        ..QueueChange::default()
    };
    queue_update(queues_index, key, &change, now)
}

/// A bulk `update` applying `change` to the queue of `key`, creating it if missing.
pub fn queue_update(
    queues_index: &str,
    key: &str,
    change: &QueueChange,
    now: DateTime<Utc>,
) -> BulkOperation {
    let due = change.due.map(format_date);
    let blocked = change.blocked_until.map(format_date);
    let now = format_date(now);
    let mut upsert = json!({ "key": key, "firstSeen": now, "lastUpdated": now });
    if let Some(due) = &due {
        upsert["nextDue"] = json!(due);
        upsert["heldDue"] = json!(due);
    }
    if let Some(blocked) = &blocked {
        upsert["blockedUntil"] = json!(blocked);
    }
    if let Some(delay) = change.crawl_delay {
        upsert["crawlDelaySeconds"] = json!(delay);
    }
    let script = json!({ "source": LOWER_NEXT_DUE, "lang": "painless",
        "params": { "due": due, "blocked": blocked, "delay": change.crawl_delay, "now": now } });
    queue_upsert(queues_index, key, script, upsert)
}

/// A bulk `update` of the queue of `key` that runs `script` on it, or creates it as `upsert` when
/// missing (retried by the engine on concurrent changes).
pub fn queue_upsert(queues_index: &str, key: &str, script: Value, upsert: Value) -> BulkOperation {
    let update = json!({ "script": script, "upsert": upsert });
    BulkOperation::update(queue_id(key), update)
        .in_index(queues_index)
        .retry_on_conflict(5)
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
        let update = lower_next_due("queues", "a.test", due, due);
        assert_eq!(update.id, queue_id("a.test"));
        assert_eq!(update.index.as_deref(), Some("queues"));
        let body = update.body.expect("a body");
        assert_eq!(body["upsert"]["nextDue"], json!("2024-01-02T03:04:05.000Z"));
        assert_eq!(
            body["script"]["params"]["due"],
            json!("2024-01-02T03:04:05.000Z")
        );
    }
}
