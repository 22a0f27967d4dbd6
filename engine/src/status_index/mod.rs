//! The StormCrawler status index: its mapping and documents ([`schema`]), creating and inspecting
//! it ([`index`]), the writer that keeps it ([`EsStatusStore`]), the record of where the documents
//! read live ([`routes`]), and the spouts that read due URLs from it ([`spouts`]).

pub mod index;
pub mod routes;
pub mod schema;
pub mod spouts;
mod unread;
mod writer;

pub use routes::{DocumentRoutes, Routing};
pub use squall::frontier::Written;
pub use writer::{EsStatusStore, WriterConfig};
