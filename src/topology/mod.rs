//! Topologies: the stages wired together over bounded channels, with acks flowing back to the spout.
//!
//! ```text
//!  spout runner ──Tuple──▶ fetcher ──FetchedPage──▶ parser ──StatusUpdate──▶ status updater ──▶ store
//!       ▲                                                                           │
//!       └──────────── ack / fail, once the URL's status and outlinks are written ◀──┘
//! ```
//!
//! With a content indexer (`indexer.kind`, [`CrawlerBuilder::content_store`]), parsed pages pass
//! through it between the parser and the status updater: a URL is acked only once its content and
//! its status are both written.
//!
//! Every channel between stages is bounded: a slow stage makes the one before it wait, and nothing
//! is dropped. The ack channel back to the spout runner needs no bound of its own: each URL in
//! flight (at most `topology.max.spout.pending`) sends at most two messages on it. Build a
//! [`Crawler`] with [`CrawlerBuilder`].

mod builder;
mod error;
mod run;
mod seed_input;
mod seeds;
mod stages;

pub use builder::CrawlerBuilder;
pub use error::BuildError;
pub use run::{CrawlSummary, Crawler, RunLimits, StopReason};
pub use seed_input::SeedFileError;
pub use seeds::SeedReport;
