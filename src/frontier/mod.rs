//! The frontier: where URLs wait until they are due, and the contract every frontier keeps.
//!
//! A frontier has a read side, a [`Spout`] that returns due URLs (the spout runner in
//! [`crate::spout`] drives it), and a write side, a [`StatusStore`] that the status updater writes
//! statuses and outlinks to. Both speak the types of this module only: [`DueUrl`], [`BusyUrls`],
//! [`StatusWrite`], the queue state that crosses the topology ([`QueueHints`], [`QueueReport`],
//! [`Lease`], [`LearnedPace`]) and the errors ([`SpoutError`], [`StoreError`], each with an
//! [`ErrorKind`] that says whether trying again may help).
//!
//! [`EmbeddedFrontier`] is the default implementation: one file on local disk, nothing to install.
//! The Elasticsearch and OpenSearch frontiers live in the `squall-engine` crate. Which frontier a
//! crawl opens is the kind `frontier.kind` names, among those registered in
//! [`Frontiers`](crate::config::Frontiers), each opened into a [`Frontier`]. Every frontier must
//! pass the [`conformance`] suite. A frontier that can also be listed, counted and pruned (for the
//! URLFrontier server) implements [`Catalog`].

mod busy;
mod catalog;
pub mod conformance;
mod embedded;
mod error;
mod hints;
mod rules;
mod settings;
mod sides;
mod spout;
mod store;

pub use busy::BusyUrls;
pub use catalog::{Catalog, Census, QueuePage, StoredUrl, UrlQuery};
pub use embedded::{
    EmbeddedFrontier, EmbeddedOptions, EmbeddedSpout, FrontierError, QueryLimits, StoredStatus,
};
pub use error::{ErrorKind, SpoutError, StoreError};
pub use hints::{LearnedPace, Lease, PaceCause, QueueHints, QueueReport, UnknownPaceCause};
pub use rules::{CrawlRules, QueueRules, RuleChange, ServedRules};
pub use settings::{EMBEDDED, FrontierSettings};
pub use sides::{Frontier, HeldLease, LeaseView};
pub use spout::{DueUrl, Spout};
pub use store::{StatusStore, StatusWrite, Written};
