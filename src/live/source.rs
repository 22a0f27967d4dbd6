//! What a status page shows, apart from the server that shows it (feature `live-page`): the crawl's
//! view and `squall-frontier`'s document are sources whether or not this build serves them.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;

use super::document::StatusDocument;

/// What a status page shows: a document made when asked (cached as its maker sees fit).
pub trait DocumentSource: Send + Sync + 'static {
    /// Gathers, before a document is asked for, what making it takes waiting for (the crawl's
    /// view asks the fetcher for its queues). By default there is nothing to wait for.
    fn prepare(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The document as of now.
    fn document(&self) -> Arc<StatusDocument>;

    /// The same document as JSON, what `/status.json` serves. By default the document is written
    /// out on every call; a source with a [`DocumentCache`](super::DocumentCache) hands out the
    /// bytes it wrote once.
    fn json(&self) -> Result<Bytes, serde_json::Error> {
        serde_json::to_vec(self.document().as_ref()).map(Bytes::from)
    }
}
