//! Why a request to the engine failed, and whether trying again later may help.

use squall::frontier::{ErrorKind, SpoutError, StoreError};

/// Why a request to the engine failed. Messages never contain credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EsError {
    /// Invalid settings.
    #[error("invalid Elasticsearch/OpenSearch settings: {0}")]
    Config(String),
    /// The engine could not be reached, after all retries.
    #[error("cannot reach Elasticsearch/OpenSearch at {addresses}: {message}")]
    Unreachable {
        /// The addresses tried.
        addresses: String,
        /// The last error.
        message: String,
    },
    /// A node's TLS handshake failed: its certificate is not trusted (not signed by the CA given,
    /// or not for its name), or it refused the client's certificate. Not retried: it would fail
    /// the same way.
    #[error(
        "TLS with Elasticsearch/OpenSearch at {address} failed: {message} (is the CA file the one \
         that signed the node's certificate, and does the node accept the client certificate?)"
    )]
    Tls {
        /// The node's address.
        address: String,
        /// What the TLS layer said.
        message: String,
    },
    /// The engine answered with an error status.
    #[error("{method} {path} failed with HTTP {status}: {reason}")]
    Status {
        /// The request method.
        method: String,
        /// The request path.
        path: String,
        /// The HTTP status.
        status: u16,
        /// The engine's error type and reason.
        reason: String,
        /// The type of the error's first root cause, when the engine gave one.
        cause: Option<String>,
    },
    /// The answer was not the JSON expected.
    #[error("unexpected answer to {path}: {message}")]
    Decode {
        /// The request path.
        path: String,
        /// What was wrong.
        message: String,
    },
}

/// Whether an error type the engine reports as a root cause means the request itself cannot be
/// served, whatever the engine's state.
fn refused_request(cause: &str) -> bool {
    matches!(
        cause,
        "too_many_clauses"
            | "too_many_nested_clauses"
            | "query_shard_exception"
            | "parsing_exception"
            | "x_content_parse_exception"
            | "illegal_argument_exception"
    )
}

/// Whether an HTTP status from the engine means "not now" rather than "never": a timeout, too many
/// requests, or a server-side failure.
pub fn is_transient_status(status: u16) -> bool {
    status == 408 || status == 429 || status >= 500
}

impl EsError {
    /// Whether the same request may succeed later: the engine was out of reach or answered that it
    /// was busy or failing (HTTP 408, 429, 5xx), as opposed to refusing the request itself. A 5xx
    /// whose root cause is the request's own shape (a query with too many clauses, one the engine
    /// cannot parse or build) is a refusal: asking again fails the same way.
    pub fn kind(&self) -> ErrorKind {
        match self {
            EsError::Unreachable { .. } => ErrorKind::Unavailable,
            EsError::Status { status, cause, .. }
                if is_transient_status(*status)
                    && !cause.as_deref().is_some_and(refused_request) =>
            {
                ErrorKind::Unavailable
            }
            EsError::Status { .. }
            | EsError::Config(_)
            | EsError::Decode { .. }
            | EsError::Tls { .. } => ErrorKind::Rejected,
        }
    }

    /// This error as a spout's: `context` says what was being read.
    pub fn for_spout(self, context: &str) -> SpoutError {
        SpoutError::of_kind(self.kind(), context).caused_by(self)
    }

    /// This error as a status store's: `context` says what was being written.
    pub fn for_store(&self, context: &str) -> StoreError {
        StoreError::of_kind(self.kind(), format!("{context}: {self}"))
    }

    /// The HTTP status of an error answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            EsError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}
