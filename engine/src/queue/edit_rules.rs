//! The changes squall makes to a queue document that depend on what the document holds: each one
//! written twice, as the Painless script the engine runs, and as the same rule in Rust for engines
//! that run no scripts (then written back with a conditional write, see [`edit_apply`](super::edit_apply)).
//!
//! The two forms must agree on every document: `engine/tests/queue_updates.rs` runs both on random
//! documents against a real engine and compares the results.
//!
//! Dates are compared as strings: every writer uses
//! [`format_date`](crate::status_index::schema::format_date)'s fixed-width UTC form.

use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use super::fields::{
    BLOCKED_UNTIL, CRAWL_DELAY_SECONDS, HELD_DUE, LAST_UPDATED, LEASE_OWNER, LEASE_UNTIL, NEXT_DUE,
};
use super::pace::{PaceParams, painless_pace_rule};

/// The Painless source of [`QueueEdit::Lower`]: lowers `nextDue` to `params.due` (never raising it),
/// pushes `blockedUntil` later to `params.blocked`, records `params.delay` as the crawl delay, and
/// writes the learned pace `params.pace` when it is newer than the stored one; each parameter may
/// be null.
///
/// Every due date written is also recorded, whether or not it lowers `nextDue`: `heldDue` keeps the
/// earliest one since the queue was last given back, and `lastUpdated` when the last one was
/// written. A release folds `heldDue` into `nextDue` when that write may not have been visible to
/// the owner's read of the urls index (see [`RELEASE_QUEUE`]), so no URL written moments before a
/// release is stranded. A pace alone leaves `lastUpdated` as it was: it changes no URL, and claims
/// read `lastUpdated` to know which writes their reads may miss.
pub static LOWER_NEXT_DUE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "boolean changed = false; \
        if (params.due != null) {{ \
          if (ctx._source.{HELD_DUE} == null || ctx._source.{HELD_DUE}.compareTo(params.due) > 0) {{ ctx._source.{HELD_DUE} = params.due }} \
          if (ctx._source.{NEXT_DUE} == null || ctx._source.{NEXT_DUE}.compareTo(params.due) > 0) {{ ctx._source.{NEXT_DUE} = params.due }} \
          changed = true }} \
        if (params.blocked != null && (ctx._source.{BLOCKED_UNTIL} == null || ctx._source.{BLOCKED_UNTIL}.compareTo(params.blocked) < 0)) \
        {{ ctx._source.{BLOCKED_UNTIL} = params.blocked; changed = true }} \
        if (params.delay != null && ctx._source.{CRAWL_DELAY_SECONDS} != params.delay) \
        {{ ctx._source.{CRAWL_DELAY_SECONDS} = params.delay; changed = true }} \
        {pace} \
        if (changed) {{ ctx._source.{LAST_UPDATED} = params.now }} else if (!paced) {{ ctx.op = 'noop' }}",
        pace = painless_pace_rule()
    )
});

/// The Painless source of [`QueueEdit::Renew`]: extends a lease to `params.until`, only for its
/// owner `params.owner` (a no-op otherwise: the lease was lost). It never shortens the lease: a
/// renewal that arrives late, after a later one, leaves the later end (and still counts as done).
pub static RENEW_LEASE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "if (ctx._source.{LEASE_OWNER} == params.owner) {{ \
        if (ctx._source.{LEASE_UNTIL} == null || ctx._source.{LEASE_UNTIL}.compareTo(params.until) < 0) \
        {{ ctx._source.{LEASE_UNTIL} = params.until }} }} else {{ ctx.op = 'noop' }}"
    )
});

/// The Painless source of [`QueueEdit::Release`]: gives a queue back, only for its lease owner
/// `params.owner`.
///
/// `nextDue` becomes `params.next`, the earliest date the owner's read found among the queue's URLs
/// (null for none) — or `heldDue` if earlier, when the last due date was written at or after
/// `params.seenBefore`: such a write may not have shown in that read (the owner passes the time of
/// its claim less the urls index's visibility delay). `nextDue` is never raised otherwise, so it
/// stays no later than the earliest URL. The lease is cleared and `leaseUntil` set to `params.now`,
/// which puts the queue behind the due queues that waited longer.
pub static RELEASE_QUEUE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "if (ctx._source.{LEASE_OWNER} != params.owner) {{ ctx.op = 'noop' }} else {{ \
        def next = params.next; def held = ctx._source.{HELD_DUE}; def written = ctx._source.{LAST_UPDATED}; \
        if (held != null && written != null && written.compareTo(params.seenBefore) >= 0 && (next == null || next.compareTo(held) > 0)) {{ next = held }} \
        ctx._source.{NEXT_DUE} = next; ctx._source.remove('{HELD_DUE}'); ctx._source.{LEASE_OWNER} = null; \
        ctx._source.{LEASE_UNTIL} = params.now }}"
    )
});

/// The Painless source of [`QueueEdit::DropLease`]: drops a lease without touching `nextDue`, only
/// for its owner `params.owner`.
pub static DROP_LEASE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "if (ctx._source.{LEASE_OWNER} != params.owner) {{ ctx.op = 'noop' }} else {{ \
        ctx._source.{LEASE_OWNER} = null; ctx._source.{LEASE_UNTIL} = params.now }}"
    )
});

/// The Painless source of [`QueueEdit::Keep`]: changes nothing.
pub const KEEP: &str = "ctx.op = 'noop'";

/// One edit of the queue `key`, creating the queue as `upsert` when it is missing.
#[derive(Debug, Clone)]
pub struct KeyedEdit {
    /// The queue's key.
    pub key: String,
    /// The change.
    pub edit: QueueEdit,
    /// The document to create when the queue does not exist (none: leave it missing).
    pub upsert: Option<Value>,
}

/// A change to one queue document that depends on what it holds. Dates are in
/// [`format_date`](crate::status_index::schema::format_date)'s form.
#[derive(Debug, Clone, PartialEq)]
pub enum QueueEdit {
    /// A writer's report for the queue: the earliest due date written, the latest Retry-After hold,
    /// the crawl delay from robots.txt, the pace learned last ([`LOWER_NEXT_DUE`]).
    Lower {
        /// The earliest due date written.
        due: Option<String>,
        /// Fetching is held until then.
        blocked: Option<String>,
        /// The crawl delay, in seconds.
        delay: Option<f64>,
        /// The pace the fetcher learned.
        pace: Option<PaceParams>,
        /// When the report is written.
        now: String,
    },
    /// Extends `owner`'s lease to `until` ([`RENEW_LEASE`]).
    Renew {
        /// The lease holder.
        owner: String,
        /// The new end of the lease.
        until: String,
    },
    /// `owner` gives the queue back, due at `next` ([`RELEASE_QUEUE`]).
    Release {
        /// The lease holder.
        owner: String,
        /// The earliest date the owner's read found (none: no URL is due).
        next: Option<String>,
        /// The owner's claim, less the urls index's visibility delay.
        seen_before: String,
        /// When the queue is given back.
        now: String,
    },
    /// `owner` gives the queue back without touching `nextDue` ([`DROP_LEASE`]).
    DropLease {
        /// The lease holder.
        owner: String,
        /// When the queue is given back.
        now: String,
    },
    /// Nothing: with an upsert, creates the queue if it is missing ([`KEEP`]).
    Keep,
}

impl QueueEdit {
    /// The edit as an update's `script`: its Painless source and parameters.
    pub fn painless(&self) -> Value {
        let (source, params) = match self {
            QueueEdit::Lower {
                due,
                blocked,
                delay,
                pace,
                now,
            } => (
                LOWER_NEXT_DUE.as_str(),
                json!({ "due": due, "blocked": blocked, "delay": delay, "now": now,
                        "pace": pace.as_ref().map(PaceParams::script_params) }),
            ),
            QueueEdit::Renew { owner, until } => (
                RENEW_LEASE.as_str(),
                json!({ "owner": owner, "until": until }),
            ),
            QueueEdit::Release {
                owner,
                next,
                seen_before,
                now,
            } => (
                RELEASE_QUEUE.as_str(),
                json!({ "owner": owner, "next": next, "seenBefore": seen_before, "now": now }),
            ),
            QueueEdit::DropLease { owner, now } => {
                (DROP_LEASE.as_str(), json!({ "owner": owner, "now": now }))
            }
            QueueEdit::Keep => (KEEP, json!({})),
        };
        json!({ "source": source, "lang": "painless", "params": params })
    }

    /// Applies the edit to a document's source, as its script would; `false` when the script
    /// would choose `noop` (then the source is left as it was).
    pub fn apply(&self, source: &mut Map<String, Value>) -> bool {
        match self {
            QueueEdit::Lower {
                due,
                blocked,
                delay,
                pace,
                now,
            } => lower(
                source,
                Reported {
                    due: due.as_deref(),
                    blocked: blocked.as_deref(),
                    delay: *delay,
                    pace: pace.as_ref(),
                },
                now,
            ),
            QueueEdit::Renew { owner, until } => {
                if !owned_by(source, owner) {
                    return false;
                }
                if date(source, LEASE_UNTIL).is_none_or(|end| end < until.as_str()) {
                    source.insert(LEASE_UNTIL.into(), json!(until));
                }
                true
            }
            QueueEdit::Release {
                owner,
                next,
                seen_before,
                now,
            } => release(source, owner, next.as_deref(), seen_before, now),
            QueueEdit::DropLease { owner, now } => {
                if !owned_by(source, owner) {
                    return false;
                }
                source.insert(LEASE_OWNER.into(), Value::Null);
                source.insert(LEASE_UNTIL.into(), json!(now));
                true
            }
            QueueEdit::Keep => false,
        }
    }
}

/// A date field, when set.
fn date<'a>(source: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    source.get(field).and_then(Value::as_str)
}

fn owned_by(source: &Map<String, Value>, owner: &str) -> bool {
    date(source, LEASE_OWNER) == Some(owner)
}

/// What a [`QueueEdit::Lower`] reports, borrowed.
struct Reported<'a> {
    due: Option<&'a str>,
    blocked: Option<&'a str>,
    delay: Option<f64>,
    pace: Option<&'a PaceParams>,
}

/// [`LOWER_NEXT_DUE`] in Rust.
fn lower(source: &mut Map<String, Value>, reported: Reported<'_>, now: &str) -> bool {
    let Reported {
        due,
        blocked,
        delay,
        pace,
    } = reported;
    let mut changed = false;
    if let Some(due) = due {
        for field in [HELD_DUE, NEXT_DUE] {
            if date(source, field).is_none_or(|current| current > due) {
                source.insert(field.into(), json!(due));
            }
        }
        changed = true;
    }
    if let Some(blocked) = blocked
        && date(source, BLOCKED_UNTIL).is_none_or(|current| current < blocked)
    {
        source.insert(BLOCKED_UNTIL.into(), json!(blocked));
        changed = true;
    }
    if let Some(delay) = delay
        && source.get(CRAWL_DELAY_SECONDS).and_then(Value::as_f64) != Some(delay)
    {
        source.insert(CRAWL_DELAY_SECONDS.into(), json!(delay));
        changed = true;
    }
    let paced = pace.is_some_and(|pace| {
        let replace = pace.replace(source, now);
        if replace {
            pace.write_to(source);
        }
        replace
    });
    if changed {
        source.insert(LAST_UPDATED.into(), json!(now));
    }
    changed || paced
}

/// [`RELEASE_QUEUE`] in Rust.
fn release(
    source: &mut Map<String, Value>,
    owner: &str,
    next: Option<&str>,
    seen_before: &str,
    now: &str,
) -> bool {
    if !owned_by(source, owner) {
        return false;
    }
    let mut next = next.map(str::to_string);
    if let (Some(held), Some(written)) = (date(source, HELD_DUE), date(source, LAST_UPDATED))
        && written >= seen_before
        && next.as_deref().is_none_or(|next| next > held)
    {
        next = Some(held.to_string());
    }
    source.insert(NEXT_DUE.into(), json!(next));
    source.remove(HELD_DUE);
    source.insert(LEASE_OWNER.into(), Value::Null);
    source.insert(LEASE_UNTIL.into(), json!(now));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn lowering_never_raises_and_records_every_due_date() {
        let mut source = doc(json!({ "nextDue": "2024-01-01T00:00:00.000Z" }));
        let edit = QueueEdit::Lower {
            due: Some("2024-02-01T00:00:00.000Z".into()),
            blocked: None,
            delay: None,
            pace: None,
            now: "N".into(),
        };
        assert!(edit.apply(&mut source));
        assert_eq!(source["nextDue"], "2024-01-01T00:00:00.000Z");
        assert_eq!(source["heldDue"], "2024-02-01T00:00:00.000Z");
        assert_eq!(source["lastUpdated"], "N");
        let nothing = QueueEdit::Lower {
            due: None,
            blocked: None,
            delay: None,
            pace: None,
            now: "N2".into(),
        };
        assert!(
            !nothing.apply(&mut source),
            "a report with nothing in it is a noop"
        );
        assert_eq!(source["lastUpdated"], "N");
    }

    #[test]
    fn a_pace_is_written_only_when_newer_and_leaves_last_updated_alone() {
        let date = |minute: u32| format!("2026-12-06T14:{minute:02}:00.000Z");
        let pace = |learned: u32, seconds: f64| QueueEdit::Lower {
            due: None,
            blocked: None,
            delay: None,
            pace: Some(PaceParams {
                seconds,
                cause: "http_429".into(),
                strikes: 1,
                limit_seconds: None,
                updated: date(learned),
            }),
            now: date(30),
        };
        let mut source = doc(json!({ "lastUpdated": date(0), "nextDue": date(0) }));
        assert!(pace(2, 2.0).apply(&mut source), "a pace alone is a change");
        assert_eq!(source["paceSeconds"], 2.0);
        assert_eq!(
            source["lastUpdated"],
            date(0),
            "but not of the queue's URLs"
        );
        assert!(
            !pace(1, 8.0).apply(&mut source),
            "one learned earlier is a noop"
        );
        assert_eq!(source["paceSeconds"], 2.0);
        assert!(pace(3, 1.0).apply(&mut source));
        assert_eq!(
            (&source["paceSeconds"], &source["paceUpdated"]),
            (&json!(1.0), &json!(date(3)))
        );
    }

    #[test]
    fn only_the_owner_renews_releases_or_drops_a_lease() {
        let mut source = doc(
            json!({ "leaseOwner": "a", "leaseUntil": "T1", "heldDue": "D0",
                                     "lastUpdated": "S2", "nextDue": "D5" }),
        );
        let renew = |owner: &str| QueueEdit::Renew {
            owner: owner.into(),
            until: "T2".into(),
        };
        assert!(!renew("b").apply(&mut source));
        assert!(renew("a").apply(&mut source));
        assert_eq!(source["leaseUntil"], "T2");
        let late = QueueEdit::Renew {
            owner: "a".into(),
            until: "T0".into(),
        };
        assert!(
            late.apply(&mut source),
            "a late renewal still finds the lease its own"
        );
        assert_eq!(source["leaseUntil"], "T2", "and does not shorten it");
        let release = QueueEdit::Release {
            owner: "a".into(),
            next: Some("D3".into()),
            seen_before: "S1".into(),
            now: "T3".into(),
        };
        assert!(release.apply(&mut source));
        assert_eq!(
            source["nextDue"], "D0",
            "a write after the claim's view is folded in"
        );
        assert!(!source.contains_key("heldDue"));
        assert_eq!(source["leaseOwner"], Value::Null);
        let drop = QueueEdit::DropLease {
            owner: "a".into(),
            now: "T4".into(),
        };
        assert!(!drop.apply(&mut source), "released already: nobody owns it");
    }
}
