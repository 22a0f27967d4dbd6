//! The whole frontier from configuration: the same keys give a library user and the crawl binary
//! the same spout and status store.
//!
//! `frontier.kind` chooses: `embedded` opens squall's [`EmbeddedFrontier`] at `frontier.path`;
//! `opensearch` connects to the cluster named by `es.status.addresses`, creates the indices it
//! needs when they are missing (an existing index is used as it is) and builds the spout chosen by
//! `es.status.spout` with its status store ([`IndexFrontierSettings`] lists every key, and
//! [`ClusterSettings`] the connection keys every section reads alike).
//!
//! The `opensearch` kind is this crate's contribution to squall's registry of frontier kinds
//! ([`register`], in `kind.rs`: its name, its `es.`/`opensearch.` key prefixes, StormCrawler's
//! engine classes for Flux topologies, its opener); [`open`] opens through that registry with the
//! core's `embedded` kind beside it ([`frontiers`]).
//!
//! The queue frontier opened from the keys a crawler's configuration gives (as the crawl binary
//! reads them), on the node at `OPENSEARCH_URL` (the project's test node by default); its two
//! indices are created on opening, and removed at the end here:
//!
//! ```
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use squall::config::ConfigBuilder;
//! use squall::topology::CrawlerBuilder;
//! use squall_engine::client::{ConnectionConfig, EsClient, Method};
//!
//! let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
//! let name = format!("example-setup-{}", std::process::id());
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=my-crawler")?
//!     .set("frontier.kind=opensearch")?
//!     .set_text("es.status.addresses", &url)?
//!     .set("es.status.spout=queue")?
//!     .set_text("es.status.index.name", &format!("{name}-urls"))?
//!     .set_text("es.queues.index.name", &format!("{name}-queues"))?
//!     .build()?;
//! let frontier = squall_engine::setup::open(&config).await?;
//! let crawler = CrawlerBuilder::new(config)
//!     .spout(frontier.spout)
//!     .status_store(frontier.store)
//!     .build()?;
//! drop(crawler);
//! let client = EsClient::new(ConnectionConfig::new(&url)?)?;
//! client.request(Method::Delete, &format!("{name}-urls,{name}-queues"), &[], None).await?;
//! # Ok(()) }
//! ```
//!
//! [`EmbeddedFrontier`]: squall::frontier::EmbeddedFrontier

mod cluster_keys;
mod keys;
mod kind;
mod mapping;
mod open;
mod query_keys;

pub(crate) use cluster_keys::connect;
pub use cluster_keys::{ClusterSettings, DEFAULT_ADDRESS};
pub use keys::{
    IndexFrontierConfig, IndexFrontierSettings, OTHER_SECTIONS, PREFIXES, RoutingKey, SpoutKind,
    StatusKeys,
};
pub use kind::{OPENSEARCH, frontiers, open, register};
pub use mapping::ForeignMapping;
pub use open::{OpenError, open_index_frontier};
pub use query_keys::QuerySettings;
