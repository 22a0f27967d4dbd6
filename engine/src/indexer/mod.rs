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
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use squall::config::ConfigBuilder;
//! use squall::topology::CrawlerBuilder;
//!
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=my-crawler")?
//!     .set("indexer.kind=opensearch")?
//!     .set("es.indexer.addresses=localhost")?
//!     .build()?;
//! let frontier = squall_engine::setup::open(&config).await?;
//! let content = squall_engine::indexer::open(&config).await?;
//! let crawler = CrawlerBuilder::new(config)
//!     .spout(frontier.spout)
//!     .status_store(frontier.store)
//!     .content_store(std::sync::Arc::new(content))
//!     .build()?;
//! # let _ = crawler; Ok(()) }
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
