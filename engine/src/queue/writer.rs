//! The writer of the queue frontier: URL documents into the urls index, and queue edits only where
//! a write can change something.
//!
//! - A write for a queue this process holds (the usual case: a page's own status, and its links to
//!   its own host) edits no queue: it is noted in the hold's log ([`shared_holds`](super::shared_holds)), from which
//!   the spout hands new URLs out at once and dates the queue when it gives it back.
//! - Any other write lowers its queue first, with one edit
//!   ([`QueueEdit::Lower`](super::edit_rules::QueueEdit::Lower)) per key per batch, so that a queue's
//!   `nextDue` is never later than its earliest due URL and a new host's queue exists as soon as
//!   its first URL is written. A DISCOVERED write of a URL the index already has changes nothing
//!   and moves no queue.
//! - Politeness state the fetcher reported (Retry-After holds, robots crawl delays, a learned pace)
//!   is written to the queue whoever holds it; a held queue's hold also notes the pace, which it
//!   keeps between holders when it is given back.

use std::collections::{BTreeMap, HashMap, HashSet};

use async_trait::async_trait;
use chrono::Utc;
use serde_json::json;
use squall::frontier::{StatusStore, StatusWrite, StoreError};
use squall::model::Status;

use super::edit_apply::{EditOutcome, apply_edits};
use super::edit_rules::KeyedEdit;
use super::schema::{QueueChange, queue_update};
use super::shared_holds::{NotedWrite, SharedHold, SharedHolds};
use crate::client::indices::refresh;
use crate::client::{EsClient, Method, RequestBody};
use crate::status_index::schema::{KeyField, document_id};
use crate::status_index::{EsStatusStore, WriterConfig, Written};

/// Writes statuses to the urls index and keeps the queues index's invariant.
#[derive(Debug, Clone)]
pub struct QueueStatusStore {
    client: EsClient,
    urls: EsStatusStore,
    urls_index: String,
    queues_index: String,
    /// The queues this process's spout holds; none for a writer on its own.
    shared: Option<SharedHolds>,
}

impl QueueStatusStore {
    /// A writer into `urls_index` (no routing; the key in `key_field`) and `queues_index`, on its
    /// own: every write edits its queue. A crawler's writer comes from its spout
    /// ([`QueueSpout::status_store`](super::QueueSpout::status_store)).
    pub fn new(
        client: EsClient,
        urls_index: &str,
        queues_index: &str,
        key_field: KeyField,
    ) -> Self {
        QueueStatusStore {
            urls: EsStatusStore::new(
                client.clone(),
                WriterConfig {
                    index: urls_index.to_string(),
                    key_field,
                    routing: false,
                },
            ),
            client,
            urls_index: urls_index.to_string(),
            queues_index: queues_index.to_string(),
            shared: None,
        }
    }

    /// The same writer, noting writes for the queues in `holds` instead of editing them, and
    /// carrying over the creation dates their spout read.
    pub(crate) fn with_holds(mut self, holds: SharedHolds) -> Self {
        self.urls = self.urls.with_routes(holds.dates().clone());
        self.shared = Some(holds);
        self
    }

    /// Edits the queues of `writes` as `change_of` says for each key: the keys whose queue could not
    /// be edited, with the error.
    async fn edit_queues<'a>(
        &self,
        writes: impl Iterator<Item = &'a StatusWrite>,
        change_of: impl Fn(&StatusWrite) -> QueueChange,
    ) -> BTreeMap<String, StoreError> {
        let mut changes: BTreeMap<&str, QueueChange> = BTreeMap::new();
        for write in writes {
            let change = change_of(write);
            if change == QueueChange::default() {
                continue;
            }
            changes
                .entry(write.key.as_str())
                .or_default()
                .merge(&change);
        }
        let mut failed = BTreeMap::new();
        if changes.is_empty() {
            return failed;
        }
        let now = Utc::now();
        let edits: Vec<KeyedEdit> = changes
            .iter()
            .map(|(key, change)| queue_update(key, change, now))
            .collect();
        match apply_edits(&self.client, &self.queues_index, &edits).await {
            Err(error) => {
                for key in changes.keys() {
                    failed.insert(key.to_string(), error.for_store("queue update failed"));
                }
            }
            Ok(outcomes) => {
                for (key, outcome) in changes.keys().zip(outcomes) {
                    if let EditOutcome::Failed { kind, message } = outcome {
                        failed.insert(key.to_string(), StoreError::of_kind(kind, message));
                    }
                }
            }
        }
        failed
    }

    /// The URLs of `writes`' DISCOVERED writes that the urls index already has (a realtime
    /// multi-get by id, which sees writes not yet refreshed). On error, none: lowering a queue too
    /// early is harmless, too late is not.
    async fn known_discoveries(&self, writes: &[&StatusWrite]) -> HashSet<String> {
        let discovered: Vec<&str> = writes
            .iter()
            .filter(|w| w.status == Status::Discovered)
            .map(|w| w.url.url.as_str())
            .collect();
        let mut known = HashSet::new();
        if discovered.is_empty() {
            return known;
        }
        let ids: Vec<String> = discovered.iter().map(|url| document_id(url)).collect();
        let answer = self
            .client
            .request(
                Method::Post,
                &format!("/{}/_mget", self.urls_index),
                &[("_source", "false")],
                Some(RequestBody::Json(json!({ "ids": ids }))),
            )
            .await;
        let Ok(answer) = answer else {
            return known;
        };
        let docs = answer["docs"].as_array().cloned().unwrap_or_default();
        for (url, doc) in discovered.into_iter().zip(docs) {
            if doc["found"].as_bool() == Some(true) {
                known.insert(url.to_string());
            }
        }
        known
    }

    /// The queue edits before the URL writes: what lowers the queues of writes not covered by a
    /// hold (the queue not held, or the date earlier than its hold's floor); for every queue, the
    /// politeness state reported.
    async fn edits_before(
        &self,
        batch: &[StatusWrite],
        holds: &HashMap<String, SharedHold>,
    ) -> BTreeMap<String, StoreError> {
        // Held, and dated no earlier than what the queue's nextDue can be: no need to lower it.
        let covered = |write: &StatusWrite| {
            holds
                .get(&write.key)
                .is_some_and(|hold| write.next_fetch.is_none_or(|due| due >= hold.due_floor))
        };
        let unheld: Vec<&StatusWrite> = batch.iter().filter(|w| !covered(w)).collect();
        let known = self.known_discoveries(&unheld).await;
        self.edit_queues(batch.iter(), |write| {
            let mut change = QueueChange::reported(write);
            let no_op =
                write.status == Status::Discovered && known.contains(write.url.url.as_str());
            if !covered(write) && !no_op {
                change.due = write.next_fetch;
            }
            change
        })
        .await
    }

    /// After the URL writes: notes each held queue's successful writes in its log, or, where the
    /// lease was lost meanwhile, lowers the queue as an unheld write would have. Returns the keys
    /// whose queue could not be edited.
    async fn note_held(
        &self,
        batch: &[StatusWrite],
        written: &[Option<Written>],
        holds: HashMap<String, SharedHold>,
    ) -> BTreeMap<String, StoreError> {
        let Some(shared) = &self.shared else {
            return BTreeMap::new();
        };
        let now = Utc::now();
        let mut noted: HashMap<&str, Vec<NotedWrite>> = HashMap::new();
        for (write, outcome) in batch.iter().zip(written) {
            let Some(outcome) = outcome else { continue };
            if !holds.contains_key(&write.key) {
                continue;
            }
            noted
                .entry(write.key.as_str())
                .or_default()
                .push(NotedWrite {
                    url: write.url.clone(),
                    due: write.next_fetch,
                    arrived: *outcome == Written::Created
                        && write.next_fetch.is_some_and(|d| d <= now),
                    known: *outcome == Written::Known,
                });
        }
        let mut lost: HashSet<String> = HashSet::new();
        for (key, hold) in holds {
            let notes = noted.remove(key.as_str()).unwrap_or_default();
            if !shared.finish_write(&key, &hold, notes) {
                lost.insert(key);
            }
        }
        let late = batch
            .iter()
            .zip(written)
            .filter(|(w, outcome)| {
                lost.contains(&w.key)
                    && matches!(outcome, Some(Written::Created | Written::Replaced))
            })
            .map(|(w, _)| w);
        self.edit_queues(late, |write| QueueChange {
            due: write.next_fetch,
            ..QueueChange::default()
        })
        .await
    }
}

#[async_trait]
impl StatusStore for QueueStatusStore {
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>> {
        let outcomes = self.store_telling(batch).await;
        outcomes.into_iter().map(|o| o.map(|_| ())).collect()
    }

    async fn store_telling(&self, batch: Vec<StatusWrite>) -> Vec<Result<Written, StoreError>> {
        // Writes for queues this process holds, begun on their holds (ended in `note_held`).
        let mut holds: HashMap<String, SharedHold> = HashMap::new();
        if let Some(shared) = &self.shared {
            for write in &batch {
                if !holds.contains_key(&write.key)
                    && let Some(hold) = shared.begin_write(&write.key)
                {
                    holds.insert(write.key.clone(), hold);
                }
                if let Some(hold) = holds.get(&write.key)
                    && write.queue.pace.is_some()
                {
                    hold.log().note_pace(write.queue.pace);
                }
            }
        }
        // Queues first: if the URL writes then fail, a queue is at worst due too early (harmless);
        // the other order could leave URLs that no queue points to.
        let failed_keys = self.edits_before(&batch, &holds).await;
        let mut outcomes: Vec<Option<Result<Written, StoreError>>> = vec![None; batch.len()];
        let mut to_write = Vec::new();
        let mut positions = Vec::new();
        for (i, write) in batch.iter().enumerate() {
            match failed_keys.get(&write.key) {
                Some(error) => outcomes[i] = Some(Err(error.clone())),
                None => {
                    positions.push(i);
                    to_write.push(write.clone());
                }
            }
        }
        let mut written: Vec<Option<Written>> = vec![None; batch.len()];
        for (&i, outcome) in positions.iter().zip(self.urls.write(&to_write).await) {
            written[i] = outcome.as_ref().ok().copied();
            outcomes[i] = Some(outcome);
        }
        let failed_late = self.note_held(&batch, &written, holds).await;
        for (i, write) in batch.iter().enumerate() {
            if let Some(error) = failed_late.get(&write.key) {
                outcomes[i] = Some(Err(error.clone()));
            }
        }
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Err(StoreError::rejected("no outcome"))))
            .collect()
    }

    async fn flush(&self) -> Result<(), StoreError> {
        let indices = format!("{},{}", self.urls_index, self.queues_index);
        refresh(&self.client, &indices)
            .await
            .map_err(|e| e.for_store("refresh failed"))
    }
}
