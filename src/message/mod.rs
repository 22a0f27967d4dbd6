//! What flows between the stages: the messages on the channels of a topology, the ack handle each
//! emitted URL carries back to the spout, and the events observers see.
//!
//! This module sits beneath the stages: the spout runner, fetcher, parser and status updater all
//! speak these types, and none of them needs another stage to do so.

mod ack;
mod events;
mod page;
mod runner_state;
mod tuple;

pub use ack::{AckHandle, AckMessage};
pub use events::{CrawlEvent, CrawlObserver, CrawlStats, EventError, NoObserver, Observers};
pub use page::{PageSink, ProcessedPage};
pub use runner_state::RunnerState;
pub(crate) use runner_state::{Wake, next_wake, waited_on};
pub use tuple::{
    FetchFailure, FetchOutcome, FetchRecord, FetchedPage, FetchedResponse, Outlink, PageContent,
    StatusUpdate, Tuple,
};
