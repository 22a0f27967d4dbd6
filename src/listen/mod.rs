//! Listening sockets that an unfriendly client cannot exhaust: every listener squall opens (the
//! status page, the metrics endpoint, the URLFrontier server) accepts through a
//! [`GuardedListener`], which holds at most [`ListenLimits::max_connections`] connections at once
//! (one more is accepted and closed at once, so the queue behind it keeps moving), and hands out
//! [`Guarded`] connections, which end when the peer sends nothing within the handshake timeout
//! after connecting, or neither sends nor receives anything for the idle timeout afterwards.
//!
//! ```
//! # async fn run() -> std::io::Result<()> {
//! use squall::listen::{GuardedListener, ListenLimits};
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let mut guarded = GuardedListener::new(listener, "example", ListenLimits::default());
//! let (connection, peer) = guarded.accept().await;
//! # drop((connection, peer));
//! # Ok(())
//! # }
//! ```

mod guarded;
mod limits;
mod listener;

pub use guarded::Guarded;
pub use limits::ListenLimits;
pub use listener::GuardedListener;
