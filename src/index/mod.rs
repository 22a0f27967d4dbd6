//! The content indexer: a stage between the parser and the status updater that writes each parsed
//! HTML page to a content index, as StormCrawler's indexer bolts do.
//!
//! A page becomes a [`ContentDocument`] by StormCrawler's rules ([`build_document`]): its id is the
//! hex SHA-256 of the URL it is indexed under — its canonical URL (`indexer.canonical.name`) when
//! that is on the page's own registrable domain, else the URL fetched —; its fields are that URL
//! (`indexer.url.fieldname`), its visible text (`indexer.text.fieldname`, cut at
//! `indexer.text.maxlength` characters) and the metadata `indexer.md.mapping` names. Besides the
//! page's metadata, the mapping sees the title as `parse.title`, the host as `host` and the
//! registrable domain as `domain`; the crawler's parse filters add `parse.description` and
//! `parse.keywords` from the page's meta tags. A page that asks not to be indexed (meta robots or
//! `X-Robots-Tag` noindex), or whose metadata lacks the `indexer.md.filter` value, is not
//! indexed; its status is written all the same.
//!
//! Documents are written in batches to a [`ContentStore`], which reports an outcome per document.
//! A URL goes on to the status updater only once its document is durable, so that it is acked only
//! when its content and its status are both written. A write that may succeed later fails the URL,
//! which stays due in the frontier; a document the store refuses for good gives the URL the status
//! ERROR (`error.cause: indexing`), as StormCrawler does for a 400.
//!
//! [`JsonLinesStore`] is the store of `indexer.kind: file`; `squall-engine` has the Elasticsearch /
//! OpenSearch one.

mod document;
mod file;
mod mapping;
mod settings;
mod stage;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod waiting_tests;

use std::time::Duration;

use serde_json::{Map, Value};

pub use document::{
    DOMAIN, HOST, PARSE_DESCRIPTION, PARSE_KEYWORDS, PARSE_TITLE, Skipped, build_document,
    document_id,
};
pub use file::{JsonLinesStore, OpenFileError};
pub use mapping::{MappingEntry, MappingError, MetadataFilter};
pub use settings::{IndexerKind, IndexerSettings};
pub use stage::ContentIndexer;

use crate::frontier::ErrorKind;

/// One page as the content index receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentDocument {
    /// The document id: the hex SHA-256 of [`url`](Self::url).
    pub id: String,
    /// The URL the page is indexed under (its canonical URL, or the URL fetched).
    pub url: String,
    /// The document's fields.
    pub fields: Map<String, Value>,
}

/// Why a document was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct IndexError {
    /// Whether writing it again may help (`Unavailable`) or not (`Rejected`).
    pub kind: ErrorKind,
    /// What went wrong.
    pub message: String,
}

impl IndexError {
    /// A failure that may heal: the URL fails and stays due.
    pub fn unavailable(message: impl Into<String>) -> Self {
        IndexError {
            kind: ErrorKind::Unavailable,
            message: message.into(),
        }
    }

    /// A refusal: the URL gets the status ERROR.
    pub fn rejected(message: impl Into<String>) -> Self {
        IndexError {
            kind: ErrorKind::Rejected,
            message: message.into(),
        }
    }
}

/// How many documents a store takes at once, and how long a partial batch may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batching {
    /// Documents written together.
    pub max_documents: usize,
    /// A partial batch is written after this long.
    pub flush_interval: Duration,
}

impl Default for Batching {
    /// 100 documents, or what came in one second.
    fn default() -> Self {
        Batching {
            max_documents: 100,
            flush_interval: Duration::from_secs(1),
        }
    }
}

/// Where content documents are written: a file, a search engine's index.
#[async_trait::async_trait]
pub trait ContentStore: Send + Sync {
    /// Writes `documents` durably and returns one outcome per document, in order: `Ok` only once
    /// the document survives a crash of this process.
    async fn store(&self, documents: Vec<ContentDocument>) -> Vec<Result<(), IndexError>>;

    /// How the indexer batches documents for this store.
    fn batching(&self) -> Batching {
        Batching::default()
    }
}
