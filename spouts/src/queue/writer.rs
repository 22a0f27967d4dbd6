//! The writer of the queue frontier: URL documents into the urls index, and, first, one upsert
//! ([`QueueEdit::Lower`](super::edits::QueueEdit::Lower)) per key per batch into the queues index, so that a queue's `nextDue` is never later than its
//! earliest due URL and a new host's queue exists as soon as its first URL is written.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::Utc;
use serde_json::json;
use squall::frontier::{StatusStore, StatusWrite, StoreError};
use squall::model::Status;

use super::edit_writes::{EditOutcome, apply_edits};
use super::edits::KeyedEdit;
use super::schema::{QueueChange, queue_update};
use crate::client::indices::refresh;
use crate::client::{EsClient, Method, RequestBody};
use crate::status_index::schema::{KeyField, document_id};
use crate::status_index::{EsStatusStore, WriterSettings};

/// Writes statuses to the urls index and keeps the queues index's invariant.
#[derive(Debug, Clone)]
pub struct QueueStatusStore {
    client: EsClient,
    urls: EsStatusStore,
    urls_index: String,
    queues_index: String,
}

impl QueueStatusStore {
    /// A writer into `urls_index` (no routing; the key in `key_field`) and `queues_index`.
    pub fn new(
        client: EsClient,
        urls_index: &str,
        queues_index: &str,
        key_field: KeyField,
    ) -> Self {
        QueueStatusStore {
            urls: EsStatusStore::new(
                client.clone(),
                WriterSettings {
                    index: urls_index.to_string(),
                    key_field,
                    routing: false,
                },
            ),
            client,
            urls_index: urls_index.to_string(),
            queues_index: queues_index.to_string(),
        }
    }

    /// Lowers `nextDue` of every key to the earliest date written for it, and stores the politeness
    /// state the fetcher reported (Retry-After holds, robots crawl delays); returns the keys whose
    /// queue could not be updated, with the error.
    async fn lower_queues(&self, batch: &[StatusWrite]) -> BTreeMap<String, StoreError> {
        let known = self.known_discoveries(batch).await;
        let mut earliest: BTreeMap<&str, QueueChange> = BTreeMap::new();
        for write in batch {
            // A DISCOVERED write of a URL the index has is a no-op: its queue must not move.
            if write.status == Status::Discovered && known.contains(write.url.url.as_str()) {
                continue;
            }
            let report = write.queue;
            if write.next_fetch.is_none() && report.is_empty() {
                continue;
            }
            let change = earliest.entry(write.key.as_str()).or_default();
            if let Some(due) = write.next_fetch {
                change.due = Some(change.due.map_or(due, |d| d.min(due)));
            }
            if let Some(blocked) = report.blocked_until {
                change.blocked_until =
                    Some(change.blocked_until.map_or(blocked, |b| b.max(blocked)));
            }
            if let Some(delay) = report.crawl_delay {
                change.crawl_delay = Some(delay.as_secs_f64());
            }
        }
        let mut failed = BTreeMap::new();
        if earliest.is_empty() {
            return failed;
        }
        let now = Utc::now();
        let edits: Vec<KeyedEdit> = earliest
            .iter()
            .map(|(key, change)| queue_update(key, change, now))
            .collect();
        match apply_edits(&self.client, &self.queues_index, &edits).await {
            Err(error) => {
                for key in earliest.keys() {
                    failed.insert(key.to_string(), error.for_store("queue update failed"));
                }
            }
            Ok(outcomes) => {
                for (key, outcome) in earliest.keys().zip(outcomes) {
                    if let EditOutcome::Failed { kind, message } = outcome {
                        failed.insert(key.to_string(), StoreError::of_kind(kind, message));
                    }
                }
            }
        }
        failed
    }
}

impl QueueStatusStore {
    /// The URLs of the batch's DISCOVERED writes that the urls index already has (a realtime
    /// multi-get by id, which sees writes not yet refreshed). On error, none: lowering a queue too
    /// early is harmless, too late is not.
    async fn known_discoveries(&self, batch: &[StatusWrite]) -> std::collections::HashSet<String> {
        let discovered: Vec<&str> = batch
            .iter()
            .filter(|w| w.status == Status::Discovered)
            .map(|w| w.url.url.as_str())
            .collect();
        let mut known = std::collections::HashSet::new();
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
}

#[async_trait]
impl StatusStore for QueueStatusStore {
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>> {
        // Queues first: if the URL writes then fail, a queue is at worst due too early (harmless);
        // the other order could leave URLs that no queue points to.
        let failed_keys = self.lower_queues(&batch).await;
        let mut outcomes: Vec<Option<Result<(), StoreError>>> = vec![None; batch.len()];
        let mut to_write = Vec::new();
        let mut positions = Vec::new();
        for (i, write) in batch.into_iter().enumerate() {
            match failed_keys.get(&write.key) {
                Some(error) => outcomes[i] = Some(Err(error.clone())),
                None => {
                    positions.push(i);
                    to_write.push(write);
                }
            }
        }
        let written = self.urls.store(to_write).await;
        for (i, outcome) in positions.into_iter().zip(written) {
            outcomes[i] = Some(outcome);
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
