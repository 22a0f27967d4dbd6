//! `as_given.json`: crawls as a user starts them, each run to the end of its site (the as-given
//! benchmark, `benches/as_given.rs`), on a node of the bundled scripts' default heap.

use serde::{Deserialize, Serialize};

pub use crate::end_to_end::{AsGiven, GivenRun, Requests, Row};
use crate::run::Run;

/// The as-given benchmark's file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AsGivenResult {
    /// Which run.
    #[serde(flatten)]
    pub run: Run,
    /// The node the crawls wrote to: version and heap.
    pub engine: Option<String>,
    /// The unmeasured crawls run first on that node (a node just started spends its first
    /// crawls compiling), by setup name.
    pub warm_up: Vec<String>,
    /// A site of many hosts: StormCrawler's archetype files and squall without configuration.
    pub many_hosts: Option<AsGiven>,
    /// A site of few hosts, many pages each: the archetype's files with each spout.
    pub few_hosts: Option<AsGiven>,
}
