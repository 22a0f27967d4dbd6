//! # squall-spouts
//!
//! The Elasticsearch/OpenSearch frontier for [`squall`]: a StormCrawler-compatible status index
//! ([`schema`], [`index`]), the writer that keeps it ([`EsStatusStore`], a
//! [`squall::frontier::StatusStore`]), and the spouts that read due URLs from it ([`spouts`]):
//! aggregation, collapsing and hybrid, each a [`squall::frontier::Spout`].
//!
//! Indices written by StormCrawler work as they are: same mapping, same document ids (hex SHA-256 of
//! the URL), metadata as arrays with `.` escaped as `%2E`, the key in `key` or in a metadata field.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use squall_spouts::client::{ConnectionSettings, EsClient};
//! use squall_spouts::index::{IndexSettings, ensure_status_index};
//! use squall_spouts::spouts::{AggregationSpout, SpoutSettings};
//! use squall_spouts::{EsStatusStore, WriterSettings};
//! use squall_spouts::schema::KeyField;
//!
//! let client = EsClient::new(ConnectionSettings::new("http://127.0.0.1:9200")?)?;
//! ensure_status_index(&client, &IndexSettings::default()).await?;
//! let store = EsStatusStore::new(client.clone(), WriterSettings {
//!     index: "status".into(), key_field: KeyField::default(), routing: true,
//! });
//! // Updates of the URLs the spout reads go where their documents live, whatever their routing.
//! let spout = AggregationSpout::new(client, SpoutSettings::default()).with_routes(store.routes());
//! // CrawlerBuilder::new(config).frontier(spout, store).build()?
//! # let _ = (store, spout); Ok(()) }
//! ```

pub mod client;
pub mod frontier;
pub mod index;
pub mod migrate;
pub mod queue;
pub mod routes;
pub mod schema;
pub mod spouts;
mod writer;

pub use routes::{DocumentRoutes, Routing};
pub use writer::{EsStatusStore, WriterSettings};
