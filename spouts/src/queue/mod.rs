//! The dual-index queue frontier: a urls index (StormCrawler-shaped documents, no routing) and a
//! queues index (one document per key, with `nextDue`, a lease and shared politeness state).

mod batched;
pub mod schema;
pub mod spout;
mod writer;

pub use spout::{QueueSpout, QueueSpoutSettings};
pub use writer::QueueStatusStore;
