//! The status writer: a [`StatusStore`] over the status index.
//!
//! One bulk request per batch, with a result for every item: DISCOVERED is written create-only (a
//! conflict means the URL is known, which is success), every other status replaces the document, as
//! StormCrawler does. An item the engine rejects fails only its own URL, with the engine's reason.
//!
//! Routing: an update of a URL a spout read from the index goes where that document lives (the
//! routing its hit showed, recorded in [`DocumentRoutes`]), whatever the setting; a new document
//! (DISCOVERED, create-only) and any URL without a record are routed as [`WriterConfig::routing`]
//! says.

use async_trait::async_trait;
use squall::frontier::{StatusStore, StatusWrite, StoreError};
use squall::model::Status;
use tracing::warn;

use crate::client::indices::refresh;
use crate::client::{BulkItem, BulkOperation, BulkRequest, EsClient};
use crate::status_index::routes::{DocumentRoutes, Routing};
use crate::status_index::schema::{KeyField, document_id, status_document};

/// Where and how statuses are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterConfig {
    /// The status index.
    pub index: String,
    /// Where the partition key goes.
    pub key_field: KeyField,
    /// Route new documents by their key (StormCrawler's `es.status.routing`), so that a host's URLs
    /// share a shard. It must match how the index's existing documents were written
    /// ([`crate::status_index::index::sample_routing`] and [`crate::status_index::index::check_routing`] tell); updates of
    /// documents read by a spout with [`DocumentRoutes`] wired follow the document instead.
    pub routing: bool,
}

/// Writes statuses to the status index.
#[derive(Debug, Clone)]
pub struct EsStatusStore {
    client: EsClient,
    settings: WriterConfig,
    routes: DocumentRoutes,
}

impl EsStatusStore {
    /// A writer into `settings.index`.
    pub fn new(client: EsClient, settings: WriterConfig) -> Self {
        EsStatusStore {
            client,
            settings,
            routes: DocumentRoutes::new(),
        }
    }

    /// The routes of the documents the spouts read, shared with this writer: give it to the spout
    /// (`with_routes`) so that updates land on the documents they replace.
    pub fn routes(&self) -> DocumentRoutes {
        self.routes.clone()
    }

    /// The routing of `write`: the recorded one for an update of a document a spout read, else the
    /// setting's.
    fn routing(&self, write: &StatusWrite) -> Option<String> {
        // Even a create-only DISCOVERED write of a URL read from the index goes where its document
        // lives: routed elsewhere, it would make a second copy instead of conflicting.
        if let Some(recorded) = self.routes.get(write.url.url.as_str()) {
            return match recorded {
                Routing::Routed(routing) => Some(routing),
                Routing::Unrouted => None,
            };
        }
        self.settings.routing.then(|| write.key.clone())
    }

    /// The bulk request for `batch`: DISCOVERED create-only, anything else replacing.
    fn bulk_request(&self, batch: &[StatusWrite]) -> BulkRequest {
        batch
            .iter()
            .map(|write| {
                let id = document_id(write.url.url.as_str());
                let document = status_document(write, &self.settings.key_field);
                let operation = if write.status == Status::Discovered {
                    BulkOperation::create(id, document)
                } else {
                    BulkOperation::index(id, document)
                };
                operation.routed(self.routing(write))
            })
            .collect()
    }

    /// The outcome of one write, from its bulk item.
    fn outcome(&self, write: &StatusWrite, item: &BulkItem) -> Result<Written, StoreError> {
        if item.is_success() {
            if write.status != Status::Discovered {
                // The document is updated: its record is done with. A failed write keeps it,
                // for the spout to replace when it returns the URL again.
                self.routes.remove(write.url.url.as_str());
                return Ok(Written::Replaced);
            }
            return Ok(Written::Created);
        }
        if item.is_conflict() && write.status == Status::Discovered {
            // Already known: create-only keeps its status, as intended.
            return Ok(Written::Known);
        }
        let reason = format!(
            "{} rejected {}: HTTP {} {}: {}",
            self.settings.index,
            write.url.url,
            item.status,
            item.error_type(),
            item.reason().unwrap_or("no reason given"),
        );
        warn!(%reason, "status write rejected");
        Err(StoreError::of_kind(item.error_kind(), reason))
    }
}

/// What a successful write did to its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// A DISCOVERED write created it: the URL is new.
    Created,
    /// A DISCOVERED write found it: the URL was known, and stays as it was.
    Known,
    /// Any other status replaced it.
    Replaced,
}

impl EsStatusStore {
    /// Writes `batch` in one bulk request: per write, what it did, or why it failed.
    pub async fn write(&self, batch: &[StatusWrite]) -> Vec<Result<Written, StoreError>> {
        if batch.is_empty() {
            return Vec::new();
        }
        let answer = self
            .client
            .bulk(
                Some(&self.settings.index),
                &self.bulk_request(batch),
                // Only what is read back: each item's status and error, not its index, id, version
                // and shard counts.
                Some("errors,items.*.status,items.*.error"),
            )
            .await;
        match answer {
            Ok(answer) => batch
                .iter()
                .zip(&answer.items)
                .map(|(write, item)| self.outcome(write, item))
                .collect(),
            Err(error) => vec![Err(error.for_store("status bulk failed")); batch.len()],
        }
    }
}

#[async_trait]
impl StatusStore for EsStatusStore {
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>> {
        self.write(&batch)
            .await
            .into_iter()
            .map(|outcome| outcome.map(|_| ()))
            .collect()
    }

    async fn flush(&self) -> Result<(), StoreError> {
        refresh(&self.client, &self.settings.index)
            .await
            .map_err(|e| e.for_store(&format!("refresh of {} failed", self.settings.index)))
    }
}
