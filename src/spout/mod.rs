//! The spout runner: what turns a spout's answers (the query strategies live with their frontiers:
//! [`crate::frontier`], the `squall-engine` crate) into a steady,
//! polite stream of URLs.
//!
//! A [`Spout`](crate::frontier::Spout) only knows how to ask its frontier for due URLs. The [`SpoutRunner`] around it owns
//! everything else: the buffer (round-robin over queues), the in-flight set, the purgatory, the pacing
//! of queries, and the acks and fails coming back from the topology.
//!
//! Queries are driven by demand: as soon as the topology has taken every buffered URL into the
//! fetcher's queues, the runner asks again, at once if the last answer brought new URLs. What keeps a
//! host from filling the topology is its share: a spout returns at most `frontier.max.urls.per.bucket`
//! URLs per queue that are still waiting for the fetcher ([`BusyUrls::waiting_in`](crate::frontier::BusyUrls::waiting_in)). The minimum
//! delay between queries (`spout.min.delay.queries`) applies after an answer with nothing new (and
//! after a failed query); an ack after such an answer shortens it to the time the frontier takes to
//! show writes, and so does, for spouts that read past busy URLs, a queue whose last waiting URL the
//! fetcher has started.

mod buffer;
mod instances;
mod runner;
mod settings;
mod waiting;

pub use crate::message::RunnerState;
pub use buffer::UrlBuffer;
pub use instances::SpoutInstances;
pub use runner::SpoutRunner;
pub use settings::SpoutSettings;
