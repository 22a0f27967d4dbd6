//! How many connections a listener holds and how long a quiet one may stay.

use std::time::Duration;

/// The bounds of one listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenLimits {
    /// Connections held at once; one more is accepted and closed at once.
    pub max_connections: usize,
    /// How long a new connection may stay before its peer's first bytes (for TLS the whole
    /// handshake is bounded by this too, by the server that speaks it).
    pub handshake_timeout: Duration,
    /// How long a connection may stay with nothing read or written, once its peer has spoken.
    pub idle_timeout: Duration,
}

impl Default for ListenLimits {
    /// 64 connections, 10 s to speak, 60 s of silence: enough for a page and its readers, or
    /// a metrics scraper, on a process whose descriptors go to its crawl.
    fn default() -> Self {
        ListenLimits {
            max_connections: 64,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
        }
    }
}
