//! Live views of a running crawl (or a frontier server): a status page a person reads at a
//! glance, and the same data as JSON for scripts.
//!
//! - [`LiveCrawl`] watches a crawler (attach it with [`CrawlerBuilder::live`]) and makes its
//!   [`StatusDocument`]: rates over the last minutes, the stages with latency percentiles, the
//!   frontier's counts, the busiest and slowest hosts, the last errors, what the crawl waits on.
//! - `serve` (feature `live-page`) serves any [`DocumentSource`] as a page (`/`, one HTML file
//!   with nothing fetched from elsewhere) and as JSON (`/status.json`); `squall-frontier` serves
//!   its own document with the same page. `serve_metrics` serves the crawl's metrics to
//!   Prometheus.
//!
//! [`CrawlerBuilder::live`]: crate::CrawlerBuilder::live

mod cache;
mod crawl;
pub mod document;
mod latency;
mod series;
#[cfg(feature = "live-page")]
mod server;
mod source;

pub use cache::DocumentCache;
pub use crawl::{LiveCrawl, LiveSettings, Progress, Totals};
pub use document::{Chart, Column, Field, Figure, Series, StatusDocument, Table, Unit};
pub use latency::{LatencyWindow, Percentiles};
pub use series::RateTrack;
#[cfg(feature = "live-page")]
pub use server::{PAGE, ServeError, StatusServer, serve, serve_metrics, serve_with};
pub use source::DocumentSource;
