//! StormCrawler's content index: the Elasticsearch/OpenSearch store of squall's content indexer
//! ([`squall::index`]).
//!
//! [`open`] reads the `es.indexer.*` keys (also `opensearch.indexer.*`, [`ContentIndexConfig`]),
//! creates the content index when it is missing with the body of StormCrawler's OpenSearch
//! archetype `indexer.mapping` ([`schema::content_index_body`]; an existing index, such as one made
//! by StormCrawler's `OS_IndexInit.sh`, is used as it is) and returns an [`EsContentStore`] for
//! [`CrawlerBuilder::content_store`](squall::topology::CrawlerBuilder::content_store).
//!
//! Documents are bulk-written (`bulkActions` per request, or what came in `flushInterval`) under
//! the hex SHA-256 of their URL, overwriting the page's previous version (create-only with
//! `es.indexer.create: true`, a conflict then counting as written), through `es.indexer.pipeline`
//! when set. A document refused for good (a mapping conflict) gives its URL the status ERROR; one
//! the engine could not take now fails the URL, which stays due.
//!
//! Opened from the keys a crawler's configuration gives, on the node at `OPENSEARCH_URL` (the
//! project's test node by default), beside the embedded frontier; the content index is created on
//! opening, and removed at the end here:
//!
//! ```
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use squall::config::ConfigBuilder;
//! use squall::topology::CrawlerBuilder;
//! use squall_engine::client::{ConnectionConfig, EsClient, Method};
//!
//! let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
//! let index = format!("example-content-{}", std::process::id());
//! let dir = tempfile::tempdir()?;
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=my-crawler")?
//!     .set_text("frontier.path", &dir.path().display().to_string())?
//!     .set("indexer.kind=opensearch")?
//!     .set_text("es.indexer.addresses", &url)?
//!     .set_text("es.indexer.index.name", &index)?
//!     .build()?;
//! let content = squall_engine::indexer::open(&config).await?;
//! let crawler = CrawlerBuilder::new(config)
//!     .content_store(std::sync::Arc::new(content))
//!     .build()?;
//! drop(crawler);
//! let client = EsClient::new(ConnectionConfig::new(&url)?)?;
//! client.request(Method::Delete, &index, &[], None).await?;
//! # Ok(()) }
//! ```

mod keys;
pub mod schema;
mod store;

pub use keys::{ContentIndexConfig, ContentIndexSettings, PREFIXES, TimeValue};
pub use store::{ContentWriterConfig, EsContentStore};

use squall::config::CrawlConfig;
use squall::index::Batching;
use tracing::info;

use crate::client::EsClient;
use crate::client::indices::{IndexState, OpenIndexError, ensure_index};

/// Why the content store could not be opened: an `es.indexer.*` key, or the engine.
pub type OpenContentError = OpenIndexError;

/// Connects to the cluster of the `es.indexer.*` keys, creates the content index when missing,
/// and returns its store.
pub async fn open(config: &CrawlConfig) -> Result<EsContentStore, OpenContentError> {
    let keys = ContentIndexConfig::from_config(config)?;
    let failed = || OpenIndexError::engine("content index");
    let client = EsClient::new(keys.connection.clone()).map_err(failed())?;
    let body = schema::content_index_body();
    let state = ensure_index(&client, &keys.index, body)
        .await
        .map_err(failed())?;
    let how = match state {
        IndexState::Created => "created with StormCrawler's indexer.mapping",
        IndexState::Existing => "existing",
    };
    info!(index = %keys.index, nodes = %client.addresses(), "content index {how}");
    Ok(EsContentStore::new(
        client,
        ContentWriterConfig {
            index: keys.index,
            create: keys.create,
            pipeline: keys.pipeline,
            batching: Batching {
                max_documents: keys.bulk_actions,
                flush_interval: keys.flush_interval,
            },
        },
    ))
}
