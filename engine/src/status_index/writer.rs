//! The status writer: a [`StatusStore`] over the status index.
//!
//! One bulk request per batch, with a result for every item: DISCOVERED is written create-only (a
//! conflict means the URL is known, which is success), every other status replaces the document, as
//! StormCrawler does. An item the engine rejects fails only its own URL, with the engine's reason.
//!
//! Creation dates ([`CREATION_DATE`]): a created document is dated now; a replacement carries the
//! date a spout read with the document ([`DocumentRoutes::record_read`]); a replacement of a
//! document no spout read (rare: a status written for a URL this process did not hand out) is an
//! update whose script keeps the document's date, or an upsert dated now; on an engine without
//! Painless, a write conditional on the version just read ([`unread`](super::unread)).
//!
//! Routing: an update of a URL a spout read from the index goes where that document lives (the
//! routing its hit showed, recorded in [`DocumentRoutes`]), whatever the setting; a new document
//! (DISCOVERED, create-only) and any URL without a record are routed as [`WriterConfig::routing`]
//! says.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use squall::frontier::{ErrorKind, StatusStore, StatusWrite, StoreError, Written};
use squall::model::Status;
use tracing::warn;

use crate::client::indices::refresh;
use crate::client::{BulkItem, BulkOperation, BulkRequest, EsClient, Updates};
use crate::status_index::routes::{DocumentRoutes, Routing};
use crate::status_index::schema::{
    CREATION_DATE, KeyField, document_id, format_date, status_document,
};
use crate::status_index::unread::{Current, read_current};

/// Rounds of reading and writing a replacement of a document no spout read, on an engine without
/// Painless, before a URL whose document keeps changing under it is given up (it stays due).
const UNREAD_ROUNDS: u32 = 5;

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

    /// The same writer, with `routes` as its record of the documents read (shared with a spout
    /// that records into it).
    pub fn with_routes(mut self, routes: DocumentRoutes) -> Self {
        self.routes = routes;
        self
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

    /// The bulk request for the `pending` writes of `batch`: DISCOVERED create-only, anything else
    /// replacing, each dated as the module doc says. `unread` holds the documents no spout read, as
    /// just read, when the engine runs no Painless; a replacement of an unread document not in it
    /// is a scripted update.
    fn bulk_request(
        &self,
        batch: &[StatusWrite],
        pending: &[usize],
        unread: &HashMap<usize, Current>,
    ) -> BulkRequest {
        let now = json!(format_date(chrono::Utc::now()));
        pending
            .iter()
            .map(|&i| {
                let write = &batch[i];
                let id = document_id(write.url.url.as_str());
                let mut document = status_document(write, &self.settings.key_field);
                let operation = if write.status == Status::Discovered {
                    document[CREATION_DATE] = now.clone();
                    BulkOperation::create(id, document)
                } else if let Some(read) = self.routes.created(write.url.url.as_str()) {
                    if let Some(created) = read {
                        document[CREATION_DATE] = json!(format_date(created));
                    }
                    BulkOperation::index(id, document)
                } else if let Some(current) = unread.get(&i) {
                    current.replacement(id, document, &now)
                } else {
                    BulkOperation::update(id, dated_replacement(document, &now))
                        .retry_on_conflict(3)
                };
                operation.routed(self.routing(write))
            })
            .collect()
    }

    /// Whether `write` replaces a document no spout read (so that its creation date is unknown).
    fn replaces_unread(&self, write: &StatusWrite) -> bool {
        write.status != Status::Discovered && self.routes.created(write.url.url.as_str()).is_none()
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

/// The update that replaces a document by `document` but keeps the creation date it has (none
/// when undated), or creates it dated `now`.
fn dated_replacement(document: Value, now: &Value) -> Value {
    let mut upsert = document.clone();
    upsert[CREATION_DATE] = now.clone();
    json!({
        "script": {
            "lang": "painless",
            "source": format!(
                "def created = ctx._source.{CREATION_DATE}; ctx._source.clear(); \
                 ctx._source.putAll(params.doc); \
                 if (created != null) {{ ctx._source.{CREATION_DATE} = created; }}"
            ),
            "params": { "doc": document }
        },
        "upsert": upsert
    })
}

impl EsStatusStore {
    /// Writes `batch` in one bulk request (more only when replacements of documents no spout read
    /// meet concurrent writes on an engine without Painless): per write, what it did, or why it
    /// failed.
    pub async fn write(&self, batch: &[StatusWrite]) -> Vec<Result<Written, StoreError>> {
        let mut outcomes: Vec<Option<Result<Written, StoreError>>> = vec![None; batch.len()];
        let mut pending: Vec<usize> = (0..batch.len()).collect();
        for round in 0..UNREAD_ROUNDS {
            if pending.is_empty() {
                break;
            }
            if round > 0 {
                // A short random wait, longer each round, so that writers that met part.
                let ceiling = 10u64 << round;
                tokio::time::sleep(Duration::from_millis(fastrand::u64(1..=ceiling))).await;
            }
            pending = self.write_round(batch, &pending, &mut outcomes).await;
        }
        outcomes
            .into_iter()
            .zip(batch)
            .map(|(outcome, write)| {
                outcome.unwrap_or_else(|| {
                    Err(StoreError::of_kind(
                        ErrorKind::Unavailable,
                        format!(
                            "{}: the document of {} kept changing under its write, over \
                             {UNREAD_ROUNDS} attempts",
                            self.settings.index, write.url.url
                        ),
                    ))
                })
            })
            .collect()
    }

    /// One bulk of the `pending` writes of `batch`, their outcomes set; returns the replacements of
    /// unread documents to write again (someone wrote the document between its read and the write).
    async fn write_round(
        &self,
        batch: &[StatusWrite],
        pending: &[usize],
        outcomes: &mut [Option<Result<Written, StoreError>>],
    ) -> Vec<usize> {
        let mut unread = match self.read_unread(batch, pending).await {
            Ok(unread) => unread,
            Err(error) => {
                for &i in pending {
                    outcomes[i] = Some(Err(error.clone()));
                }
                return Vec::new();
            }
        };
        let mut writing = Vec::with_capacity(pending.len());
        let mut current = HashMap::new();
        for &i in pending {
            match unread.remove(&i) {
                Some(Err(why)) => {
                    let reason = format!(
                        "{}: the document of {} could not be read before its replacement: {why}",
                        self.settings.index, batch[i].url.url
                    );
                    outcomes[i] = Some(Err(StoreError::of_kind(ErrorKind::Unavailable, reason)));
                    continue;
                }
                Some(Ok(read)) => {
                    current.insert(i, read);
                }
                None => {}
            }
            writing.push(i);
        }
        if writing.is_empty() {
            return Vec::new();
        }
        let answer = self
            .client
            .bulk(
                Some(&self.settings.index),
                &self.bulk_request(batch, &writing, &current),
                // Only what is read back: each item's status and error, not its index, id, version
                // and shard counts.
                Some("errors,items.*.status,items.*.error"),
            )
            .await;
        let items = match answer {
            Ok(answer) => answer.items,
            Err(error) => {
                let failed = error.for_store("status bulk failed");
                for &i in &writing {
                    outcomes[i] = Some(Err(failed.clone()));
                }
                return Vec::new();
            }
        };
        let mut again = Vec::new();
        for (&i, item) in writing.iter().zip(&items) {
            if item.is_conflict() && current.contains_key(&i) {
                again.push(i);
            } else {
                outcomes[i] = Some(self.outcome(&batch[i], item));
            }
        }
        again
    }

    /// The documents of the `pending` writes that replace documents no spout read, read now (date
    /// and version) when the engine runs no Painless; none when it does, or when there are none.
    async fn read_unread(
        &self,
        batch: &[StatusWrite],
        pending: &[usize],
    ) -> Result<HashMap<usize, Result<Current, String>>, StoreError> {
        let unread: Vec<usize> = pending
            .iter()
            .copied()
            .filter(|&i| self.replaces_unread(&batch[i]))
            .collect();
        if unread.is_empty() {
            return Ok(HashMap::new());
        }
        let updates = self.client.updates().await.map_err(|error| {
            error.for_store("status bulk failed: the engine's script languages could not be read")
        })?;
        if updates == Updates::Scripted {
            return Ok(HashMap::new());
        }
        let docs: Vec<(String, Option<String>)> = unread
            .iter()
            .map(|&i| {
                let write = &batch[i];
                (document_id(write.url.url.as_str()), self.routing(write))
            })
            .collect();
        let read = read_current(&self.client, &self.settings.index, &docs)
            .await
            .map_err(|error| {
                error.for_store("status bulk failed: documents to replace could not be read")
            })?;
        Ok(unread.into_iter().zip(read).collect())
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

    async fn store_telling(&self, batch: Vec<StatusWrite>) -> Vec<Result<Written, StoreError>> {
        self.write(&batch).await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        refresh(&self.client, &self.settings.index)
            .await
            .map_err(|e| e.for_store(&format!("refresh of {} failed", self.settings.index)))
    }
}

#[cfg(test)]
mod tests {
    use squall::frontier::QueueReport;
    use squall::model::CrawlUrl;

    use super::*;
    use crate::client::ConnectionConfig;
    use crate::status_index::Routing;

    fn store() -> EsStatusStore {
        let connection = ConnectionConfig::new("http://127.0.0.1:9").expect("an address");
        let client = EsClient::new(connection).expect("a client (it connects on first use)");
        EsStatusStore::new(
            client,
            WriterConfig {
                index: "urls".into(),
                key_field: KeyField::default(),
                routing: false,
            },
        )
    }

    fn write(url: &str, status: Status) -> StatusWrite {
        StatusWrite {
            url: CrawlUrl::new(url::Url::parse(url).expect("url")),
            key: "a.test".into(),
            status,
            next_fetch: None,
            queue: QueueReport::default(),
        }
    }

    #[test]
    fn creations_are_dated_and_replacements_keep_the_date_read_or_the_documents() {
        let store = store();
        let created = chrono::DateTime::from_timestamp(1_700_000_000, 0).expect("date");
        let routes = store.routes();
        routes.record_read("http://a.test/read", Routing::Unrouted, Some(created));
        routes.record_read("http://a.test/undated", Routing::Unrouted, None);
        let batch = [
            write("http://a.test/new", Status::Discovered),
            write("http://a.test/read", Status::Fetched),
            write("http://a.test/undated", Status::Fetched),
            write("http://a.test/unread", Status::Fetched),
        ];
        let lines = store
            .bulk_request(&batch, &[0, 1, 2, 3], &HashMap::new())
            .lines();
        let (actions, bodies): (Vec<&Value>, Vec<&Value>) = (
            lines.iter().step_by(2).collect(),
            lines.iter().skip(1).step_by(2).collect(),
        );
        assert!(actions[0].get("create").is_some());
        assert!(bodies[0][CREATION_DATE].is_string(), "dated now");
        assert!(actions[1].get("index").is_some());
        assert_eq!(bodies[1][CREATION_DATE], json!(format_date(created)));
        assert!(actions[2].get("index").is_some());
        assert!(bodies[2].get(CREATION_DATE).is_none(), "stays undated");
        assert!(actions[3].get("update").is_some(), "keeps whatever it has");
        assert!(bodies[3]["upsert"][CREATION_DATE].is_string());
        assert_eq!(bodies[3]["script"]["params"]["doc"]["status"], "FETCHED");
    }
}
