//! What goes wrong talking to a URLFrontier server, and whether trying again may help.

use squall::config::ConfigError;
use squall::frontier::{ErrorKind, SpoutError, StoreError};
use tonic::{Code, Status};

/// Why the URLFrontier frontier could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A `urlfrontier.*` key is unknown or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Nothing answered at the server's address within `urlfrontier.connect.timeout`.
    #[error(
        "cannot connect to the URLFrontier server at {address} (urlfrontier.address): {reason}"
    )]
    Connect {
        /// The address tried.
        address: String,
        /// What went wrong, with its causes.
        reason: String,
    },
}

/// Whether a failed call may succeed if made again: the server said it is unavailable, out of
/// time or out of resources, or the call never got an answer from the server. A status tonic made
/// itself from a lower-level failure (refused or reset connection, timeout) carries that failure as
/// its source; a status the server sent has none.
pub(crate) fn kind_of(status: &Status) -> ErrorKind {
    let retryable = matches!(
        status.code(),
        Code::Unavailable | Code::DeadlineExceeded | Code::ResourceExhausted
    );
    if retryable || std::error::Error::source(status).is_some() {
        ErrorKind::Unavailable
    } else {
        ErrorKind::Rejected
    }
}

/// A failed call as a spout error; `call` names the RPC.
pub(crate) fn spout_error(call: &str, status: Status) -> SpoutError {
    let message = describe(call, &status);
    SpoutError::of_kind(kind_of(&status), message).caused_by(status)
}

/// A failed call as a store error; `call` names the RPC.
pub(crate) fn store_error(call: &str, status: &Status) -> StoreError {
    StoreError::of_kind(kind_of(status), describe(call, status))
}

/// `call` not answered within the request timeout, as a message.
pub(crate) fn timed_out(call: &str, timeout: std::time::Duration) -> String {
    format!(
        "URLFrontier {call}: no complete answer within {timeout:?} (urlfrontier.request.timeout)"
    )
}

/// One line: the call, the gRPC code, the message and the causes.
fn describe(call: &str, status: &Status) -> String {
    let mut text = format!("URLFrontier {call} failed: {:?}", status.code());
    if !status.message().is_empty() {
        text.push_str(": ");
        text.push_str(status.message());
    }
    squall::error_text::append_causes(&mut text, std::error::Error::source(status));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_statuses_are_retryable_only_when_they_say_so() {
        for code in [
            Code::Unavailable,
            Code::DeadlineExceeded,
            Code::ResourceExhausted,
        ] {
            assert_eq!(kind_of(&Status::new(code, "busy")), ErrorKind::Unavailable);
        }
        for code in [
            Code::InvalidArgument,
            Code::Unimplemented,
            Code::Internal,
            Code::Unknown,
            Code::NotFound,
        ] {
            assert_eq!(kind_of(&Status::new(code, "no")), ErrorKind::Rejected);
        }
    }

    #[test]
    fn a_status_made_from_a_transport_failure_is_retryable() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let status = Status::from_error(Box::new(reset));
        assert_eq!(kind_of(&status), ErrorKind::Unavailable);
        let error = store_error("PutURLs", &status);
        assert!(error.is_retryable());
        assert!(error.message().contains("reset by peer"), "{error}");
    }
}
