//! Applying [`QueueEdit`](super::edit_rules::QueueEdit)s to many queue documents at once, as the engine allows: one `_bulk` of
//! scripted updates, or (with no Painless) read – change – write back rounds.
//!
//! # The conditional path keeps the scripts' guarantee
//!
//! An engine runs an update script on the document's latest version and writes the result only if
//! nobody wrote in between (retrying internally otherwise): each edit is atomic. Without scripts,
//! each round reads the documents (a realtime `_mget`, which sees every acknowledged write), applies
//! the edit in Rust, and writes the result with `if_seq_no` / `if_primary_term` of the version read.
//! A write succeeds only if the document is still that version, so the edit took effect on the state
//! it was computed from; a conflict (someone wrote in between) sends that edit to the next round,
//! which reads again. An edit the rule turns down (`noop`) writes nothing: the version it was judged
//! on was the latest when read. A missing document with an upsert is `create`d, which fails with a
//! conflict if another writer created it first, and so goes to the next round too.

use std::time::Duration;

use serde_json::{Map, Value, json};
use squall::frontier::ErrorKind;

use super::edit_rules::KeyedEdit;
use super::schema::queue_id;
use crate::client::{
    BulkItem, BulkOperation, BulkRequest, EsClient, EsError, Method, RequestBody, Updates,
};

/// Rounds of the conditional path (and of retries of items the engine was too busy for) before an
/// edit is given up as failed. A round is one `_mget` and one `_bulk`.
const MAX_ROUNDS: u32 = 12;

/// How the scripted path asks the engine to retry an update that met a concurrent write.
const SCRIPT_RETRIES: u32 = 5;

/// What became of one edit.
#[derive(Debug, Clone, PartialEq)]
pub enum EditOutcome {
    /// The queue was missing and was created from the upsert.
    Created,
    /// The edit changed the queue.
    Changed,
    /// The edit's rule left the queue as it was (`noop`).
    Unchanged,
    /// The queue does not exist, and there was no upsert.
    Missing,
    /// The engine refused the edit, or it kept conflicting.
    Failed {
        /// Whether it may succeed later.
        kind: ErrorKind,
        /// Why, for people.
        message: String,
    },
}

impl EditOutcome {
    /// Whether the edit is done (whatever it did).
    pub fn is_done(&self) -> bool {
        !matches!(self, EditOutcome::Failed { .. })
    }
}

/// Applies `edits` to the queues index, one outcome per edit in order. Fails as a whole only when
/// the engine cannot be reached or answers what squall cannot read.
pub async fn apply_edits(
    client: &EsClient,
    queues_index: &str,
    edits: &[KeyedEdit],
) -> Result<Vec<EditOutcome>, EsError> {
    if edits.is_empty() {
        return Ok(Vec::new());
    }
    let mode = client.updates().await?;
    let batch = EditBatch {
        client,
        queues_index,
        edits,
    };
    let mut outcomes: Vec<Option<EditOutcome>> = vec![None; edits.len()];
    let mut pending: Vec<usize> = (0..edits.len()).collect();
    let mut busy_rounds = 0;
    for round in 0..MAX_ROUNDS {
        let next = match mode {
            Updates::Scripted => scripted_round(batch, &pending, &mut outcomes).await?,
            Updates::Conditional => conditional_round(batch, &pending, &mut outcomes).await?,
        };
        pending = next.again;
        if pending.is_empty() || round + 1 == MAX_ROUNDS {
            break;
        }
        let wait = if next.busy {
            busy_rounds += 1;
            busy_backoff(busy_rounds)
        } else {
            conflict_backoff(round + 1)
        };
        tokio::time::sleep(wait).await;
    }
    Ok(outcomes
        .into_iter()
        .zip(edits)
        .map(|(outcome, edit)| {
            outcome.unwrap_or_else(|| EditOutcome::Failed {
                kind: ErrorKind::Unavailable,
                message: format!(
                    "queue {} kept changing, or the engine kept refusing it as busy or could not \
                     read it, over {MAX_ROUNDS} attempts",
                    edit.key
                ),
            })
        })
        .collect())
}

/// The edits of one [`apply_edits`] call, and where they go.
#[derive(Clone, Copy)]
struct EditBatch<'a> {
    client: &'a EsClient,
    queues_index: &'a str,
    edits: &'a [KeyedEdit],
}

impl EditBatch<'_> {
    /// Sends `request` to the queues index: the answer's items, in order.
    async fn bulk(&self, request: &BulkRequest) -> Result<Vec<BulkItem>, EsError> {
        let answer = self
            .client
            .bulk(Some(self.queues_index), request, None)
            .await?;
        Ok(answer.items)
    }
}

/// What a round leaves to the next one.
#[derive(Default)]
struct Round {
    /// The edits to try again.
    again: Vec<usize>,
    /// Whether some of them found the engine too busy (429) or a shard unavailable, rather than a
    /// concurrent write: the next round then waits longer.
    busy: bool,
}

/// A short random wait before round `round` after a conflict, longer each round (a few ms, then up
/// to ~0.5 s), so that writers that met on a document do not meet again.
fn conflict_backoff(round: u32) -> Duration {
    let ceiling = (5u64 << round.min(7)).min(500);
    Duration::from_millis(fastrand::u64(1..=ceiling))
}

/// The wait before the `n`th round after the engine said it was too busy: 0.5 s, doubling, up to
/// 10 s (as a bulk of the migration waits for an engine it saturates).
fn busy_backoff(n: u32) -> Duration {
    Duration::from_millis((500u64 << n.saturating_sub(1).min(5)).min(10_000))
}

/// One `_bulk` of scripted updates for the `pending` edits; leaves those to try again (the engine
/// was too busy for them, or they still conflicted after the engine's own retries).
async fn scripted_round(
    batch: EditBatch<'_>,
    pending: &[usize],
    outcomes: &mut [Option<EditOutcome>],
) -> Result<Round, EsError> {
    let request: BulkRequest = pending
        .iter()
        .map(|&i| {
            let edit = &batch.edits[i];
            let mut body = json!({ "script": edit.edit.painless() });
            if let Some(upsert) = &edit.upsert {
                body["upsert"] = upsert.clone();
            }
            BulkOperation::update(queue_id(&edit.key), body).retry_on_conflict(SCRIPT_RETRIES)
        })
        .collect();
    let items = batch.bulk(&request).await?;
    let mut round = Round::default();
    for (&i, item) in pending.iter().zip(&items) {
        match scripted_outcome(&batch.edits[i], item) {
            Some(outcome) => outcomes[i] = Some(outcome),
            None => {
                round.busy |= item.status == 429;
                round.again.push(i);
            }
        }
    }
    Ok(round)
}

/// What a scripted update's item says; `None` for an item to send again (429, or a conflict left
/// after the engine's retries).
fn scripted_outcome(edit: &KeyedEdit, item: &BulkItem) -> Option<EditOutcome> {
    if item.is_success() {
        return Some(if item.is_created() {
            EditOutcome::Created
        } else if item.is_noop() {
            EditOutcome::Unchanged
        } else {
            EditOutcome::Changed
        });
    }
    match item.status {
        // The queue is missing and there is no upsert. With an upsert, a 404 means the index is
        // gone: a failure, or URLs would be written without their queue.
        404 if edit.upsert.is_none() && item.error_type() == "document_missing_exception" => {
            Some(EditOutcome::Missing)
        }
        409 | 429 => None,
        _ => Some(failure(&edit.key, item)),
    }
}

fn failure(key: &str, item: &BulkItem) -> EditOutcome {
    EditOutcome::Failed {
        kind: item.error_kind(),
        message: format!(
            "queue {key} not updated: HTTP {} {}: {}",
            item.status,
            item.error_type(),
            item.reason().unwrap_or("no reason given")
        ),
    }
}

/// One read – change – write-back round for the `pending` edits; leaves those that met a
/// concurrent write (or a busy engine, or a shard that could not be read) to be read again.
async fn conditional_round(
    batch: EditBatch<'_>,
    pending: &[usize],
    outcomes: &mut [Option<EditOutcome>],
) -> Result<Round, EsError> {
    let ids: Vec<String> = pending
        .iter()
        .map(|&i| queue_id(&batch.edits[i].key))
        .collect();
    let docs = read_versions(batch.client, batch.queues_index, &ids).await?;
    let mut round = Round::default();
    let mut writes = Vec::new();
    let mut written = Vec::new();
    for (&i, doc) in pending.iter().zip(docs) {
        match planned_write(&batch.edits[i], doc) {
            Planned::Done(outcome) => outcomes[i] = Some(outcome),
            Planned::ReadAgain => {
                round.busy = true;
                round.again.push(i);
            }
            Planned::Write(operation) => {
                writes.push(operation);
                written.push(i);
            }
        }
    }
    if writes.is_empty() {
        return Ok(round);
    }
    let request: BulkRequest = writes.into_iter().collect();
    let items = batch.bulk(&request).await?;
    for (&i, item) in written.iter().zip(&items) {
        if item.is_success() {
            outcomes[i] = Some(if item.is_created() {
                EditOutcome::Created
            } else {
                EditOutcome::Changed
            });
        } else if item.is_conflict() || item.status == 429 {
            round.busy |= item.status == 429;
            round.again.push(i);
        } else {
            outcomes[i] = Some(failure(&batch.edits[i].key, item));
        }
    }
    Ok(round)
}

/// A queue document as read: its source and version, or nothing when it does not exist.
type Versioned = Option<(Map<String, Value>, i64, i64)>;

enum Planned {
    Done(EditOutcome),
    /// The document could not be read (a shard unavailable): read it again next round.
    ReadAgain,
    Write(BulkOperation),
}

/// What the edit does to the document read: nothing more, or one conditional write.
fn planned_write(edit: &KeyedEdit, doc: Result<Versioned, String>) -> Planned {
    let id = queue_id(&edit.key);
    match doc {
        Err(message) => {
            tracing::debug!(key = %edit.key, %message, "queue not read; reading it again");
            Planned::ReadAgain
        }
        Ok(None) => match &edit.upsert {
            Some(upsert) => Planned::Write(BulkOperation::create(id, upsert.clone())),
            None => Planned::Done(EditOutcome::Missing),
        },
        Ok(Some((mut source, seq_no, primary_term))) => {
            if edit.edit.apply(&mut source) {
                Planned::Write(
                    BulkOperation::index(id, Value::Object(source))
                        .if_version(seq_no, primary_term),
                )
            } else {
                Planned::Done(EditOutcome::Unchanged)
            }
        }
    }
}

/// Reads documents by id, with their versions, as of now (realtime: unrefreshed writes included).
async fn read_versions(
    client: &EsClient,
    index: &str,
    ids: &[String],
) -> Result<Vec<Result<Versioned, String>>, EsError> {
    let path = format!("/{index}/_mget");
    let answer = client
        .request(
            Method::Post,
            &path,
            &[("realtime", "true")],
            Some(RequestBody::Json(json!({ "ids": ids }))),
        )
        .await?;
    let docs = answer["docs"].as_array().cloned().unwrap_or_default();
    if docs.len() != ids.len() {
        return Err(EsError::Decode {
            path,
            message: format!("{} documents asked, {} answered", ids.len(), docs.len()),
        });
    }
    Ok(docs.into_iter().map(versioned).collect())
}

/// One `_mget` answer document.
fn versioned(doc: Value) -> Result<Versioned, String> {
    if let Some(error) = doc.get("error") {
        return Err(error.to_string());
    }
    if doc["found"].as_bool() != Some(true) {
        return Ok(None);
    }
    let source = doc["_source"].as_object().cloned();
    let seq_no = doc["_seq_no"].as_i64();
    let primary_term = doc["_primary_term"].as_i64();
    match (source, seq_no, primary_term) {
        (Some(source), Some(seq_no), Some(term)) => Ok(Some((source, seq_no, term))),
        _ => Err(format!("no source or version in {doc}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::edit_rules::QueueEdit;

    #[test]
    fn a_document_read_becomes_a_write_conditional_on_its_version() {
        let edit = KeyedEdit {
            key: "a.test".into(),
            edit: QueueEdit::DropLease {
                owner: "me".into(),
                now: "T".into(),
            },
            upsert: None,
        };
        let doc = json!({ "found": true, "_seq_no": 7, "_primary_term": 2,
                          "_source": { "key": "a.test", "leaseOwner": "me" } });
        let Planned::Write(write) = planned_write(&edit, versioned(doc)) else {
            panic!("the owner's drop writes");
        };
        assert_eq!(write.if_version, Some((7, 2)));
        let missing = json!({ "found": false });
        assert!(matches!(
            planned_write(&edit, versioned(missing)),
            Planned::Done(EditOutcome::Missing)
        ));
    }

    #[test]
    fn waits_grow_and_stay_bounded() {
        assert!(conflict_backoff(1) <= Duration::from_millis(10));
        assert!((0..40).all(|round| conflict_backoff(round) <= Duration::from_millis(500)));
        assert_eq!(busy_backoff(1), Duration::from_millis(500));
        assert_eq!(busy_backoff(3), Duration::from_secs(2));
        assert_eq!(busy_backoff(30), Duration::from_secs(10));
    }
}
