//! The spouts benchmark (`spouts.json`): its input, its tables and plots' lookups, and the
//! acceptance verdicts of the queue frontier drawn from it and the shared crawl.

pub mod acceptance;
mod input;
mod round_trip;
mod section;

pub use input::{
    HEADLINE_SPOUT, REFERENCE_SPOUT, ShardSkew, SpoutResult, SpoutSize, Spouts, find, label_of,
    sorted_sizes, spout_names,
};
pub use section::spouts_section;
