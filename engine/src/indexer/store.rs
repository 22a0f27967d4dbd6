//! [`EsContentStore`]: content documents bulk-written to an Elasticsearch/OpenSearch index, one
//! outcome per document.

use serde_json::Value;
use squall::frontier::ErrorKind;
use squall::index::{Batching, ContentDocument, ContentStore, IndexError};

use crate::client::{BulkOperation, BulkRequest, BulkResponse, EsClient, Method, RequestBody};

/// How documents are written.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentWriterConfig {
    /// The content index.
    pub index: String,
    /// Create-only: a document already there is kept (its conflict counts as written).
    pub create: bool,
    /// The ingest pipeline, if any.
    pub pipeline: Option<String>,
    /// Documents per bulk request, and how long a partial one waits.
    pub batching: Batching,
}

/// A [`ContentStore`] writing to a content index with `_bulk`. The bulk request is retried by the
/// client (429, 5xx, connection errors); an item that still fails is reported as such.
#[derive(Debug, Clone)]
pub struct EsContentStore {
    client: EsClient,
    settings: ContentWriterConfig,
}

impl EsContentStore {
    /// A store over `client`.
    pub fn new(client: EsClient, settings: ContentWriterConfig) -> Self {
        EsContentStore { client, settings }
    }

    /// Sends one bulk request for `documents`.
    async fn bulk(&self, documents: Vec<ContentDocument>) -> Result<BulkResponse, IndexError> {
        let request: BulkRequest = documents
            .into_iter()
            .map(|document| {
                let source = Value::Object(document.fields);
                if self.settings.create {
                    BulkOperation::create(document.id, source)
                } else {
                    BulkOperation::index(document.id, source)
                }
            })
            .collect();
        let path = format!("/{}/_bulk", self.settings.index);
        let query: Vec<(&str, &str)> = self
            .settings
            .pipeline
            .as_deref()
            .map(|pipeline| ("pipeline", pipeline))
            .into_iter()
            .collect();
        let answer = self
            .client
            .request(
                Method::Post,
                &path,
                &query,
                Some(RequestBody::NdJson(request.lines())),
            )
            .await
            .map_err(|error| IndexError {
                kind: error.kind(),
                message: format!("content bulk to {}: {error}", self.settings.index),
            })?;
        BulkResponse::parse(answer, request.len(), &path)
            .map_err(|error| IndexError::unavailable(error.to_string()))
    }
}

#[async_trait::async_trait]
impl ContentStore for EsContentStore {
    async fn store(&self, documents: Vec<ContentDocument>) -> Vec<Result<(), IndexError>> {
        let count = documents.len();
        let response = match self.bulk(documents).await {
            Ok(response) => response,
            Err(error) => return vec![Err(error); count],
        };
        response
            .items
            .iter()
            .map(|item| {
                if item.is_success() || (self.settings.create && item.is_conflict()) {
                    return Ok(());
                }
                let message = format!(
                    "{} ({}): {}",
                    item.error_type(),
                    item.status,
                    item.reason().unwrap_or_default()
                );
                Err(match item.error_kind() {
                    ErrorKind::Unavailable => IndexError::unavailable(message),
                    ErrorKind::Rejected => IndexError::rejected(message),
                })
            })
            .collect()
    }

    fn batching(&self) -> Batching {
        self.settings.batching
    }
}
