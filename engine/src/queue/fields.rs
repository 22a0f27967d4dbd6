//! The field names of the queues index's documents, declared once: every query, update, script,
//! mapping and check of the crate spells them through these constants; and the one field of a URL
//! document that the queue code queries ([`NEXT_FETCH_DATE`]).
//!
//! In `serde_json::json!`, a constant in a key's place is its value: `json!({ NEXT_DUE: d })`
//! writes `{"nextDue": d}`; in a Painless script built with `format!`, `ctx._source.{NEXT_DUE}`.

/// The queue's key (host, domain or IP): a keyword.
pub const KEY: &str = "key";
/// No later than the earliest due date of the queue's URLs (missing: none is ever due).
pub const NEXT_DUE: &str = "nextDue";
/// Who holds the lease: the process's owner, `#`, and the hold's own name.
pub const LEASE_OWNER: &str = "leaseOwner";
/// Until when the lease holds; once the queue is given back, when it was given back (and so
/// how long it has cooled).
pub const LEASE_UNTIL: &str = "leaseUntil";
/// When the queue was first written.
pub const FIRST_SEEN: &str = "firstSeen";
/// When a writer last changed the queue (a due date, a Retry-After, a crawl delay; not a pace).
pub const LAST_UPDATED: &str = "lastUpdated";
/// The crawl delay learned from the queue's robots.txt, in seconds.
pub const CRAWL_DELAY_SECONDS: &str = "crawlDelaySeconds";
/// No fetch of the queue before this (a server's Retry-After).
pub const BLOCKED_UNTIL: &str = "blockedUntil";
/// The earliest due date written since the queue was last given back, which a release folds
/// into `nextDue` when the holder's read may have missed it.
pub const HELD_DUE: &str = "heldDue";
/// The pace a fetcher learned for the queue from its server's answers: the interval it keeps
/// between fetches, in seconds (a float).
pub const PACE_SECONDS: &str = "paceSeconds";
/// What set the pace (`http_429`, `retry_after`, `slow_answers`, `recovering`, ...): a keyword.
pub const PACE_CAUSE: &str = "paceCause";
/// Push-back incidents in a row when the pace was learned: an integer.
pub const PACE_STRIKES: &str = "paceStrikes";
/// The interval that last drew push-back, in seconds (null: none remembered).
pub const PACE_LIMIT_SECONDS: &str = "paceLimitSeconds";
/// When the pace was learned: a report learned earlier never overwrites it.
pub const PACE_UPDATED: &str = "paceUpdated";
/// A URL document's due date, in the urls index (StormCrawler's field).
pub const NEXT_FETCH_DATE: &str = "nextFetchDate";
