//! # squall-engine
//!
//! squall's Elasticsearch/OpenSearch backend (the engine): everything [`squall`] keeps in an
//! engine, over one [`client`]:
//!
//! - [`status_index`]: a StormCrawler-compatible status index ([`status_index::schema`],
//!   [`status_index::index`]), the writer that keeps it ([`EsStatusStore`], a
//!   [`squall::frontier::StatusStore`]), and the spouts that read due URLs from it
//!   ([`status_index::spouts`]): aggregation, collapsing and hybrid, each a
//!   [`squall::frontier::Spout`];
//! - [`queue`]: the queue frontier, a urls index and a queues index with leases, for many crawler
//!   processes;
//! - [`migrate`]: turning a status index into the queue frontier's two indices;
//! - [`catalog`]: either frontier's URLs and queues listed, counted and deleted
//!   ([`catalog::EsCatalog`], a [`squall::frontier::Catalog`]);
//! - [`indexer`]: StormCrawler's content index, written by squall's content indexer
//!   ([`indexer::EsContentStore`], a [`squall::index::ContentStore`]);
//! - [`setup`]: either frontier opened from configuration ([`setup::open`]: `frontier.kind` and
//!   the `es.*` keys), so that a program gets from the same keys the same crawler as the crawl
//!   binary; [`register`] adds the `opensearch` kind to squall's registry of frontier kinds.
//!
//! The client speaks to the engine with typed requests and answers (bulk, search) and retries.
//!
//! Indices written by StormCrawler work as they are: same mapping, same document ids (hex SHA-256 of
//! the URL), metadata as arrays with `.` escaped as `%2E`, the key in `key` or in a metadata field.
//!
//! A status index, a status store writing to it and a spout reading from it, as a crawler would
//! have them; the example runs against the node at `OPENSEARCH_URL` (the project's test node,
//! `scripts/opensearch start`, by default) and removes its index at the end:
//!
//! ```
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use squall::frontier::{BusyUrls, QueueReport, Spout, StatusStore, StatusWrite};
//! use squall::model::{CrawlUrl, Status};
//! use squall_engine::client::{ConnectionConfig, EsClient, Method};
//! use squall_engine::status_index::index::{StatusIndexConfig, ensure_status_index};
//! use squall_engine::status_index::schema::KeyField;
//! use squall_engine::status_index::spouts::{AggregationSpout, StatusSpoutConfig};
//! use squall_engine::{EsStatusStore, WriterConfig};
//!
//! let url = std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into());
//! let client = EsClient::new(ConnectionConfig::new(&url)?)?;
//! let index = format!("example-status-{}", std::process::id());
//! let layout = StatusIndexConfig { name: index.clone(), replicas: 0, ..Default::default() };
//! ensure_status_index(&client, &layout).await?;
//! let store = EsStatusStore::new(client.clone(), WriterConfig {
//!     index: index.clone(), key_field: KeyField::default(), routing: true,
//! });
//! // Updates of the URLs the spout reads go where their documents live, whatever their routing.
//! let reads = StatusSpoutConfig { index: index.clone(), ..Default::default() };
//! let mut spout = AggregationSpout::new(client.clone(), reads).with_routes(store.routes());
//!
//! let seed = StatusWrite {
//!     url: CrawlUrl::seed("http://example.test/".parse()?),
//!     key: "example.test".to_string(),
//!     status: Status::Discovered,
//!     next_fetch: Some(chrono::Utc::now()),
//!     queue: QueueReport::default(),
//! };
//! for outcome in store.store(vec![seed]).await {
//!     outcome?; // acked: durable in the index
//! }
//! client.request(Method::Post, &format!("{index}/_refresh"), &[], None).await?;
//! let due = spout.next_batch(&BusyUrls::in_topology_of(Vec::new())).await?;
//! assert_eq!(due.len(), 1, "the seed is due");
//! // CrawlerBuilder::new(config).frontier(spout, store).build()? crawls from them.
//! client.request(Method::Delete, &index, &[], None).await?;
//! # Ok(()) }
//! ```

pub mod catalog;
pub mod client;
pub mod indexer;
pub mod metrics;
pub mod migrate;
pub mod queue;
pub mod setup;
pub mod status_index;
#[cfg(test)]
mod testing;

pub use setup::register;
pub use status_index::{DocumentRoutes, EsStatusStore, Routing, WriterConfig};
