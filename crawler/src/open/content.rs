//! The content index parsed pages are written to, where squall-engine opens it.

use std::sync::Arc;

use squall::config::{CrawlConfig, IndexerKind};
use squall::index::ContentStore;

/// The content index of `indexer.kind: opensearch` (`es.indexer.*` keys), through squall-engine;
/// the core opens the file of `indexer.kind: file` itself.
pub(crate) async fn open_content_index(
    config: &CrawlConfig,
) -> anyhow::Result<Option<Arc<dyn ContentStore>>> {
    // The es.indexer.* keys are checked whichever indexer is chosen, so that a typo never passes.
    let keys = squall_engine::indexer::ContentIndexConfig::from_config(config)?;
    match config.indexer.kind {
        IndexerKind::Opensearch => {
            let store = squall_engine::indexer::open(config).await?;
            eprintln!("content index: {}", keys.index);
            Ok(Some(Arc::new(store)))
        }
        IndexerKind::File => {
            eprintln!("content file: {}", config.indexer.file.display());
            Ok(None)
        }
        IndexerKind::None => Ok(None),
    }
}
