//! Why a crawler could not be built.

use crate::config::ConfigError;
use crate::filter::FilterError;
use crate::filter_files::FilterFileError;
use crate::protocol::HttpClientError;

/// Why a crawler could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A URL filter could not be built from the configuration.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// A StormCrawler filter file (`urlfilters.config.file`, `parsefilters.config.file`,
    /// `jsoup.filters.config.file`) could not be used.
    #[error(transparent)]
    FilterFile(#[from] FilterFileError),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Http(#[from] HttpClientError),
    /// WARC output is on and its writer could not start (the directory, most often).
    #[error("WARC output (warc.*): {0}")]
    Warc(#[from] crate::warc::WarcError),
    /// The content file of `indexer.kind: file` could not be opened.
    #[error(transparent)]
    ContentFile(#[from] crate::index::OpenFileError),
    /// `indexer.kind: opensearch` without a content store.
    #[error(
        "indexer.kind is opensearch but no content store was given: open one with \
         squall_engine::indexer::open and pass it to CrawlerBuilder::content_store"
    )]
    NoContentStore,
    /// No frontier was given, and the configured kind is not one the core opens by itself.
    #[error(
        "no frontier: frontier.kind is `{kind}`, which the core does not open by itself; open it \
         with a Frontiers registry that has it (squall_engine::register, \
         squall_urlfrontier::register) and pass it to CrawlerBuilder::frontier (or spout and \
         status_store)"
    )]
    NoFrontier {
        /// The configured `frontier.kind`.
        kind: String,
    },
    /// Only one side of the frontier was given.
    #[error("half a frontier: CrawlerBuilder::spout and status_store go together")]
    HalfFrontier,
    /// The embedded frontier of the configuration (`frontier.path`) could not be opened.
    #[error("the embedded frontier in {path}: {source}")]
    Embedded {
        /// `frontier.path`.
        path: String,
        /// Why it could not be opened.
        source: crate::frontier::FrontierError,
    },
    /// `protocol.schemes` names a protocol that was not registered.
    #[error(
        "protocol.schemes: scheme `{scheme}` names protocol `{name}`, which is not registered \
         (known: {known}; register it with CrawlerBuilder::named_protocol)"
    )]
    UnknownProtocol {
        /// The URL scheme.
        scheme: String,
        /// The protocol name it was given.
        name: String,
        /// The names that are registered.
        known: String,
    },
}
