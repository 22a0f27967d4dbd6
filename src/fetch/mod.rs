//! The fetcher bolt: one queue per partition key (host, domain or IP), a delay between two
//! fetches of a queue, robots.txt checked before each fetch, each URL fetched through the
//! [`Protocol`](crate::protocol::Protocol) of its scheme ([`crate::protocol`]).
//!
//! [`FetcherBolt`] runs the queues; [`Partitioner`] names a URL's queue; [`FetcherSettings`] are
//! its `fetcher.*` keys; [`pace`] is each queue's pace as its server's answers set it
//! (`fetcher.pace.policy`, [`PacePolicy`]).

mod board;
mod bolt;
mod checks;
mod inflight;
pub mod pace;
mod paces;
mod partition;
mod queue_keys;
mod queues;
mod settings;
mod task;

pub use board::{FetcherView, PacedView, QueueBoard, QueueView};
pub use bolt::FetcherBolt;
pub use partition::Partitioner;
pub use settings::{FetcherSettings, PaceKind, PacePolicy};
