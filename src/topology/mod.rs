//! Topologies: the stages wired together over bounded channels, with acks flowing back to the spout.
//!
//! ```text
//!  spout runner ──Tuple──▶ fetcher ──FetchedPage──▶ parser ──StatusUpdate──▶ status updater ──▶ store
//!       ▲                                                                           │
//!       └──────────── ack / fail, once the URL's status and outlinks are written ◀──┘
//! ```
//!
//! Every channel is bounded: a slow stage makes the one before it wait, and nothing is dropped.
//! Build a [`Crawler`] with [`CrawlerBuilder`].

mod ack;
mod builder;
mod events;
mod items;
mod run;

pub use ack::{AckHandle, AckMessage};
pub use builder::{BuildError, CrawlerBuilder, SeedReport};
pub use events::{CrawlEvent, CrawlObserver, CrawlStats, NoObserver, Observers};
pub use items::{
    FetchOutcome, FetchRecord, FetchedPage, FetchedResponse, Outlink, StatusUpdate, Tuple,
};
pub use run::{CrawlSummary, Crawler, RunLimits, StopReason};
