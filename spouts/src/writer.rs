//! The status writer: a [`StatusStore`] over the status index.
//!
//! One bulk request per batch, with a result for every item: DISCOVERED is written create-only (a
//! conflict means the URL is known, which is success), every other status replaces the document, as
//! StormCrawler does. An item the engine rejects fails only its own URL, with the engine's reason.
//!
//! Routing: an update of a URL a spout read from the index goes where that document lives (the
//! routing its hit showed, recorded in [`DocumentRoutes`]), whatever the setting; a new document
//! (DISCOVERED, create-only) and any URL without a record are routed as [`WriterSettings::routing`]
//! says.

use async_trait::async_trait;
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::frontier::{StatusStore, StatusWrite, StoreError};
use squall::model::Status;
use tracing::warn;

use crate::client::{EsClient, RequestBody};
use crate::routes::{DocumentRoutes, Routing};
use crate::schema::{KeyField, document_id, status_document};

/// Where and how statuses are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterSettings {
    /// The status index.
    pub index: String,
    /// Where the partition key goes.
    pub key_field: KeyField,
    /// Route new documents by their key (StormCrawler's `es.status.routing`), so that a host's URLs
    /// share a shard. It must match how the index's existing documents were written
    /// ([`crate::index::sample_routing`] and [`crate::index::check_routing`] tell); updates of
    /// documents read by a spout with [`DocumentRoutes`] wired follow the document instead.
    pub routing: bool,
}

/// Writes statuses to the status index.
#[derive(Debug, Clone)]
pub struct EsStatusStore {
    client: EsClient,
    settings: WriterSettings,
    routes: DocumentRoutes,
}

impl EsStatusStore {
    /// A writer into `settings.index`.
    pub fn new(client: EsClient, settings: WriterSettings) -> Self {
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

    fn bulk_lines(&self, batch: &[StatusWrite]) -> Vec<Value> {
        let mut lines = Vec::with_capacity(batch.len() * 2);
        for write in batch {
            let op = if write.status == Status::Discovered {
                "create"
            } else {
                "index"
            };
            let mut action = json!({ "_id": document_id(write.url.url.as_str()) });
            if let Some(routing) = self.routing(write) {
                action["routing"] = json!(routing);
            }
            lines.push(json!({ op: action }));
            lines.push(status_document(write, &self.settings.key_field));
        }
        lines
    }
}

#[async_trait]
impl StatusStore for EsStatusStore {
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>> {
        if batch.is_empty() {
            return Vec::new();
        }
        let path = format!("/{}/_bulk", self.settings.index);
        let answer = self
            .client
            .request(
                Method::Post,
                &path,
                // Only what is read back: each item's status and error, not its index, id, version
                // and shard counts.
                &[("filter_path", "errors,items.*.status,items.*.error")],
                Some(RequestBody::NdJson(self.bulk_lines(&batch))),
            )
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                let error = error.for_store("status bulk failed");
                return vec![Err(error); batch.len()];
            }
        };
        let no_items = Vec::new();
        let items = answer["items"].as_array().unwrap_or(&no_items);
        if items.len() != batch.len() {
            let reason = format!(
                "status bulk answered {} items for {} writes",
                items.len(),
                batch.len()
            );
            return vec![Err(StoreError::rejected(reason)); batch.len()];
        }
        let mut outcomes = Vec::with_capacity(batch.len());
        for (write, item) in batch.iter().zip(items) {
            let result = item
                .as_object()
                .and_then(|o| o.values().next())
                .unwrap_or(&Value::Null);
            let status = result["status"].as_u64().unwrap_or(0);
            let outcome = if (200..300).contains(&status) {
                if write.status != Status::Discovered {
                    // The document is updated: its record is done with. A failed write keeps it,
                    // for the spout to replace when it returns the URL again.
                    self.routes.remove(write.url.url.as_str());
                }
                Ok(())
            } else if status == 409 && write.status == Status::Discovered {
                // Already known: create-only keeps its status, as intended.
                Ok(())
            } else {
                let reason = format!(
                    "{} rejected {}: HTTP {status} {}: {}",
                    self.settings.index,
                    write.url.url,
                    result["error"]["type"].as_str().unwrap_or("error"),
                    result["error"]["reason"]
                        .as_str()
                        .unwrap_or("no reason given"),
                );
                warn!(%reason, "status write rejected");
                Err(StoreError::of_kind(item_error_kind(status), reason))
            };
            outcomes.push(outcome);
        }
        outcomes
    }

    async fn flush(&self) -> Result<(), StoreError> {
        let path = format!("/{}/_refresh", self.settings.index);
        self.client
            .request(Method::Post, &path, &[], None)
            .await
            .map(|_| ())
            .map_err(|e| e.for_store(&format!("refresh of {} failed", self.settings.index)))
    }
}

/// A bulk item's failure: the engine too busy for it (429) or failing (5xx) may take it later;
/// anything else (a mapping conflict, an invalid document) it will refuse again.
pub(crate) fn item_error_kind(status: u64) -> squall::frontier::ErrorKind {
    let status = u16::try_from(status).unwrap_or(0);
    if crate::client::is_transient_status(status) {
        squall::frontier::ErrorKind::Unavailable
    } else {
        squall::frontier::ErrorKind::Rejected
    }
}
