//! # squall
//!
//! A library for building web crawlers as stream topologies, in the style of Apache StormCrawler.
//!
//! A crawl is four stages joined by bounded channels:
//!
//! 1. a **spout** ([`frontier::Spout`], driven by a [`spout::SpoutRunner`]) reads due URLs from the
//!    frontier and emits them round-robin over hosts;
//! 2. the **fetcher** ([`fetch::FetcherBolt`]) downloads them, politely: one queue per host (or
//!    domain, or IP), a delay between fetches, robots.txt; each URL through the
//!    [`protocol::Protocol`] of its scheme (HTTP by default);
//! 3. the **parser** ([`parse::ParserBolt`]) extracts links, which pass through the URL filters
//!    ([`filter`]);
//! 4. the **status updater** ([`status::StatusUpdater`]) writes each URL's status and its outlinks
//!    to a [`frontier::StatusStore`], schedules the next fetch ([`schedule`]), and only then acks the URL.
//!
//! The stages speak the types of [`message`]; the frontier's contract (the traits above, their
//! types and errors) is in [`frontier`], and [`config`] gives each stage its typed section.
//! ARCHITECTURE.md in the repository draws the picture and says where a new capability goes.
//!
//! The frontier is pluggable. [`frontier::EmbeddedFrontier`], the default, keeps it in one local
//! file; the `squall-engine` crate keeps it in Elasticsearch or OpenSearch, shared by any number of
//! crawler processes, and opens either one from the same configuration keys.
//!
//! ## A complete crawler
//!
//! This crawls a small site served on loopback, to the end, with the embedded frontier, and writes
//! a line per page (URL, status, title) from a [`message::PageSink`]:
//!
//! ```
//! use std::net::SocketAddr;
//! use std::sync::{Arc, Mutex};
//! use squall::config::ConfigBuilder;
//! use squall::frontier::EmbeddedFrontier;
//! use squall::message::{PageSink, ProcessedPage};
//! use squall::model::Status;
//! use squall::topology::{CrawlerBuilder, RunLimits, StopReason};
//!
//! /// A line per page the crawl is done with: its URL, final status and title.
//! #[derive(Default)]
//! struct Lines(Mutex<Vec<String>>);
//!
//! impl PageSink for Lines {
//!     fn on_page(&self, page: &ProcessedPage<'_>) {
//!         let title = page.content.and_then(|c| c.title.as_deref()).unwrap_or("");
//!         let line = format!("{} {} {title}", page.url.url, page.status);
//!         self.0.lock().expect("not poisoned").push(line);
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let port = listener.local_addr()?.port();
//! # tokio::spawn(async move {
//! #     use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! #     loop {
//! #         let Ok((mut socket, _)) = listener.accept().await else { return };
//! #         tokio::spawn(async move {
//! #             let mut request = vec![0u8; 4096];
//! #             let n = socket.read(&mut request).await.unwrap_or(0);
//! #             let text = String::from_utf8_lossy(&request[..n]).to_string();
//! #             let (status, body) = match text.split_whitespace().nth(1) {
//! #                 Some("/") => ("200 OK", "<title>Home</title><a href='/about'>about</a>"),
//! #                 Some("/about") => ("200 OK", "<title>About</title><a href='/'>home</a>"),
//! #                 _ => ("404 Not Found", ""),
//! #             };
//! #             let response = format!("HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
//! #             let _ = socket.write_all(response.as_bytes()).await;
//! #         });
//! #     }
//! # });
//! // `site.test` is served on this machine: resolve it to loopback.
//! let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
//! let dir = tempfile::tempdir()?;
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=docs-example")?
//!     .set("fetcher.server.delay=0")?
//!     .set("spout.min.delay.queries=20")?
//!     // The embedded frontier (`frontier.kind`'s default) in this directory, its `frontier.*`
//!     // keys applied: the builder opens it when given no frontier of its own.
//!     .set_text("frontier.path", &dir.path().display().to_string())?
//!     .build()?;
//! let lines = Arc::new(Lines::default());
//! let crawler = CrawlerBuilder::new(config)
//!     .resolve("site.test", addr)
//!     .page_sink(Arc::clone(&lines))
//!     .build()?;
//! let seeds = crawler.inject([format!("http://site.test:{port}/").as_str()]).await;
//! assert_eq!(seeds.accepted, 1);
//!
//! let summary = crawler.run(RunLimits::until_idle()).await;
//! assert_eq!(summary.stop_reason, StopReason::Idle);
//! // robots.txt is a 404 here (allow all); the home page and /about are fetched.
//! assert_eq!(summary.pages, 2);
//! let mut lines = lines.0.lock().expect("not poisoned").clone();
//! lines.sort();
//! assert_eq!(lines, [
//!     format!("http://site.test:{port}/ FETCHED Home"),
//!     format!("http://site.test:{port}/about FETCHED About"),
//! ]);
//! // The frontier stays in its directory: open it again to read what the crawl stored.
//! let frontier = EmbeddedFrontier::open(dir.path())?;
//! let about = frontier.lookup(&format!("http://site.test:{port}/about"))?;
//! assert_eq!(about.map(|stored| stored.status), Some(Status::Fetched));
//! # Ok(()) }
//! ```

pub mod bounded_file;
pub mod config;
pub mod error_text;
pub mod fetch;
pub mod filter;
pub mod filter_files;
pub mod frontier;
pub mod index;
pub mod listen;
pub mod live;
pub mod message;
pub mod model;
pub mod parse;
pub mod protocol;
pub mod redact;
pub mod schedule;
pub mod settings;
pub mod spout;
pub mod status;
#[cfg(test)]
mod testing;
pub mod topology;
pub mod warc;

pub use model::{CrawlUrl, Metadata, PartitionMode, Status};
pub use topology::{Crawler, CrawlerBuilder, RunLimits};
/// The URL type of the whole API (`url::Url`), so that a dependent needs no `url` of its own.
pub use url::Url;

// The other crates whose items squall's API takes or gives, re-exported so that a dependent uses
// the versions squall was built with without naming them in its own Cargo.toml.

/// The attribute squall's async traits are written with ([`Protocol`](protocol::Protocol),
/// [`Spout`](frontier::Spout), [`StatusStore`](frontier::StatusStore)): an implementation carries
/// it too.
pub use async_trait::async_trait;
/// The bytes of a body ([`FetchedResponse::body`](message::FetchedResponse::body)).
pub use bytes;
/// Dates and times: fetch times, next fetch dates (`chrono::DateTime<chrono::Utc>`).
pub use chrono;
/// What [`Crawler::stop_token`](topology::Crawler::stop_token) gives: cancelling it stops the
/// run gracefully.
pub use tokio_util::sync::CancellationToken;
/// The `url` crate itself (`url::Host`, `url::ParseError`, ...).
pub use url;
