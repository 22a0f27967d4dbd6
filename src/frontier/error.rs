//! Why a frontier operation failed, and whether trying again may help.

use std::fmt;

/// The two kinds of frontier failure a caller must tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The frontier could not be reached, did not answer in time, or was too busy: the same
    /// request may succeed later. The spout runner asks again after its delay; a status write that
    /// failed this way leaves its URL due, to be fetched and written again.
    Unavailable,
    /// The frontier answered and refused the request (an invalid document, a mapping conflict, a
    /// missing index, an answer squall cannot read): asking again changes nothing until someone
    /// changes the frontier or the configuration.
    Rejected,
}

impl ErrorKind {
    /// Whether the same request may succeed if tried again later.
    pub fn is_retryable(self) -> bool {
        self == ErrorKind::Unavailable
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Rejected => "rejected",
        })
    }
}

/// Why a frontier query failed. The runner logs it, waits, and tries again.
///
/// ```
/// use squall::frontier::{ErrorKind, SpoutError};
///
/// let error = SpoutError::unavailable("the status index did not answer");
/// assert!(error.is_retryable());
/// assert_eq!(SpoutError::rejected("no such index").kind(), ErrorKind::Rejected);
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct SpoutError {
    kind: ErrorKind,
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The methods a frontier error of each kind has alike: its two constructors by kind, its kind, and
/// whether the same `$request` may succeed later.
macro_rules! of_a_kind {
    ($error:ident, $request:literal) => {
        impl $error {
            #[doc = concat!("The frontier could not take the ", $request, " now; the same ", $request, " may succeed later.")]
            pub fn unavailable(message: impl Into<String>) -> Self {
                Self::of_kind(ErrorKind::Unavailable, message)
            }

            #[doc = concat!("The frontier refused the ", $request, "; asking again changes nothing.")]
            pub fn rejected(message: impl Into<String>) -> Self {
                Self::of_kind(ErrorKind::Rejected, message)
            }

            /// Which kind of failure this is.
            pub fn kind(&self) -> ErrorKind {
                self.kind
            }

            #[doc = concat!("Whether the same ", $request, " may succeed later.")]
            pub fn is_retryable(&self) -> bool {
                self.kind.is_retryable()
            }
        }
    };
}

of_a_kind!(SpoutError, "query");
of_a_kind!(StoreError, "write");

impl SpoutError {
    /// An error of `kind` with a message.
    pub fn of_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        SpoutError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// The same error, with the failure that caused it.
    pub fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }
}

/// Why a status write was not stored. The URL is failed back to the spout and stays due, so
/// nothing is lost; [`kind`](StoreError::kind) says whether writing it again may succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    kind: ErrorKind,
    message: String,
}

impl StoreError {
    /// An error of `kind` with a message.
    pub fn of_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        StoreError {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}
