//! squall's frontiers over the URLFrontier gRPC API: [`server`] serves a squall frontier to any
//! URLFrontier client, and [`client`] crawls from any URLFrontier server ([`register`] adds it to
//! squall's registry of frontier kinds as `urlfrontier`). Each is a feature of this crate, both on
//! by default: `client` (tonic's client and TLS) and `server` (tonic's server, the engine's
//! frontiers, the status page, and the `squall-frontier` binary).
//!
//! A server on an embedded frontier, and a worker's spout and status store talking to it (what the
//! crawl binary's `--frontier urlfrontier` uses; it needs both features):
//!
//! ```
//! use squall::config::ConfigBuilder;
//! use squall::frontier::{BusyUrls, QueueReport, StatusWrite};
//! use squall::model::{CrawlUrl, Status};
//!
//! # #[cfg(not(all(feature = "client", feature = "server")))]
//! # fn main() {}
//! # #[cfg(all(feature = "client", feature = "server"))]
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=example")?
//!     .set_text("frontier.path", &dir.path().display().to_string())?
//!     .build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let server = squall_urlfrontier::server::start(config, listener).await?;
//!
//! let worker = ConfigBuilder::new()
//!     .set("http.agent.name=example")?
//!     .set_text("urlfrontier.address", &server.addr().to_string())?
//!     .build()?;
//! let (mut spout, store, _description) = squall_urlfrontier::client::open(&worker).await?;
//! let seed = StatusWrite {
//!     url: CrawlUrl::seed("http://example.test/".parse()?),
//!     key: "example.test".to_string(),
//!     status: Status::Discovered,
//!     next_fetch: Some(chrono::Utc::now()),
//!     queue: QueueReport::default(),
//! };
//! for outcome in store.store(vec![seed]).await {
//!     outcome?; // acked: durable in the server's frontier
//! }
//! // The server reads its frontier in the background: the URL shows in a moment.
//! let mut due = Vec::new();
//! for _ in 0..100 {
//!     due = spout.next_batch(&BusyUrls::none()).await?;
//!     if !due.is_empty() {
//!         break;
//!     }
//!     tokio::time::sleep(std::time::Duration::from_millis(50)).await;
//! }
//! assert_eq!(due[0].url.url.as_str(), "http://example.test/");
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```

/// The URLFrontier v2 messages and service, generated from the official API's descriptor.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}

#[cfg(feature = "client")]
pub mod client;
pub mod convert;
#[cfg(feature = "server")]
pub mod server;

#[cfg(feature = "client")]
pub use client::register;

#[cfg(feature = "client")]
pub use client::{UrlFrontierSpout, UrlFrontierStore};

/// The count in `Stats.counts` that says the crawl's whole frontier is idle (1) or not (0):
/// nothing due, buffered, handed out, or failed and waiting to be read again. squall's server
/// gives it; squall's client ends a crawl that waits for idleness on it.
pub const IDLE_COUNT: &str = "squall.idle";
