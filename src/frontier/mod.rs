//! Frontiers: where URLs wait until they are due.
//!
//! [`EmbeddedFrontier`] is the default: one file on local disk, nothing to install. The Elasticsearch
//! and OpenSearch frontiers live in the `squall-spouts` crate. Every frontier must pass the
//! [`conformance`] suite.

pub mod conformance;
mod embedded;

pub use embedded::{EmbeddedFrontier, EmbeddedSpout, FrontierError, QueryLimits, StoredStatus};
