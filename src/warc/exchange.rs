//! One HTTP exchange, as a protocol hands it to the archive.

use std::net::IpAddr;

use bytes::Bytes;
use chrono::{DateTime, Utc};

/// A request and its response, with the bytes the archive keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The URL requested (after any redirect the client followed itself).
    pub target_uri: String,
    /// When the request was sent.
    pub date: DateTime<Utc>,
    /// The server's address, when known.
    pub ip_address: Option<IpAddr>,
    /// The request as sent: request line, headers and the empty line (`\r\n` line ends).
    pub request: Bytes,
    /// The response's status line, headers and the empty line (`\r\n` line ends).
    pub response_head: Bytes,
    /// The response body as received: content encoding kept, transfer coding removed.
    pub payload: Bytes,
    /// The body was cut short at the content limit.
    pub truncated: bool,
}
