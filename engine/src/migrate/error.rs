//! Why a migration failed: [`MigrateError`].

use crate::client::EsError;

/// Why a migration failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A request to the engine failed (unreachable, or an error answer).
    #[error(transparent)]
    Engine(#[from] EsError),
    /// The source index does not exist.
    #[error("the source index {index:?} does not exist at {address}")]
    SourceMissing {
        /// The index name.
        index: String,
        /// The engine's address.
        address: String,
    },
    /// The options make no sense.
    #[error("invalid migration options: {0}")]
    Options(String),
    /// The checkpoint file could not be read or written.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The checkpoint file belongs to another migration.
    #[error(
        "checkpoint {path} belongs to another migration ({difference}); delete it or choose another checkpoint file"
    )]
    CheckpointMismatch {
        /// The file.
        path: String,
        /// What differs.
        difference: String,
    },
    /// Bulk operations failed.
    #[error("{failed} of {total} bulk operations on {index} failed; the first: {first}")]
    Bulk {
        /// The index written.
        index: String,
        /// Operations that failed.
        failed: usize,
        /// Operations sent.
        total: usize,
        /// The first failure.
        first: String,
    },
    /// The engine answered something unexpected.
    #[error("unexpected answer from the engine: {0}")]
    Unexpected(String),
}
