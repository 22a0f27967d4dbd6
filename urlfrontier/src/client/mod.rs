//! A squall frontier on any URLFrontier server: [`UrlFrontierSpout`] reads due URLs with GetURLs,
//! [`UrlFrontierStore`] writes statuses with PutURLs, and [`open`] builds both from the
//! `urlfrontier.*` keys ([`ClientSettings`]) over one connection.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use squall::config::CrawlConfig;
//!
//! let config = CrawlConfig::from_yaml_str(
//!     "http.agent.name: my-crawler\nurlfrontier.address: 127.0.0.1:7071\n",
//! )?;
//! let (spout, store, description) = squall_urlfrontier::client::open(&config).await?;
//! println!("frontier: {description}");
//! let _crawler = squall::topology::CrawlerBuilder::new(config)
//!     .spout(spout)
//!     .status_store(store);
//! # Ok(())
//! # }
//! ```
//!
//! What maps to what:
//! - a handed-out `URLInfo` is a [`DueUrl`](squall::frontier::DueUrl) of queue `key` (squall's
//!   partition key when the server sends none), its metadata lists squall's metadata; a URL that
//!   does not parse is logged and skipped;
//! - a DISCOVERED write is a discovered item, any other a known item due at its next fetch (0,
//!   never, when it has none) carrying its status under
//!   [`STATUS_KEY`](crate::convert::STATUS_KEY);
//! - the crawl is idle when a squall server's [`IDLE_COUNT`](crate::IDLE_COUNT) says so,
//!   or, for other servers, when GetURLs came back empty for [`IDLE_SETTLE`]
//!   and GetStats counts no URL in process;
//! - a call that got no answer, or an UNAVAILABLE, DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED one,
//!   fails as [`ErrorKind::Unavailable`](squall::frontier::ErrorKind::Unavailable) (retried);
//!   any other refusal as `Rejected`.

mod acks;
mod connection;
mod discovered;
mod errors;
mod kind;
mod messages;
mod settings;
mod spout;
mod store;

use std::sync::Arc;

use squall::config::CrawlConfig;
use squall::frontier::{Spout, StatusStore};

pub use connection::{BearerToken, Connection, connect};
pub use errors::ClientError;
pub use kind::{URLFRONTIER, register};
pub use settings::{ClientSettings, DEFAULT_PORT, PREFIX};
pub use spout::{IDLE_SETTLE, UrlFrontierSpout};
pub use store::UrlFrontierStore;

/// The two sides of a URLFrontier frontier and one line for people, as [`open`] gives them.
pub type ClientFrontier = (Box<dyn Spout>, Arc<dyn StatusStore>, String);

/// Connects to the URLFrontier server the `urlfrontier.*` keys of `config` name and builds its
/// spout and status store over that one connection, with a line describing the frontier (address
/// and crawl). Fails, naming the address, when nothing answers there within
/// `urlfrontier.connect.timeout`; once connected, a lost connection is made again on the next call.
pub async fn open(config: &CrawlConfig) -> Result<ClientFrontier, ClientError> {
    let settings = ClientSettings::from_config(config)?;
    let channel = connect(&settings).await?;
    let description = format!(
        "URLFrontier server at {}, crawl `{}`",
        settings.address, settings.crawl_id
    );
    let spout = UrlFrontierSpout::new(channel.clone(), settings.clone());
    let store = UrlFrontierStore::new(channel, settings);
    Ok((Box::new(spout), Arc::new(store), description))
}
