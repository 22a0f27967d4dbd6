//! The URLFrontier server over squall's frontiers.
mod access;
mod connection;
mod crawl;
mod crawls;
mod dispenser;
mod live;
mod service;
mod whole_messages;
mod writer;

pub use access::{AccessError, ServerAccess, TlsFiles};
pub use connection::SERVER_LIMITS;
pub use crawl::{Crawl, CrawlRunConfig, ENGINE_WRITES_IN_FLIGHT, MIN_WRITE_BATCH};
pub use crawls::{CrawlError, Crawls, DEFAULT_CRAWL, FrontierOpener, RELEASE_WAIT, check_id};
pub use dispenser::{Ask, Dispenser, HandedOut};
pub use live::{CallBoard, CrawlCounts, FrontierLive, PeerCalls};
pub use service::{FrontierService, IDLE_COUNT, LogLevels};
pub use writer::PutOutcome;
mod start;
pub use start::{ConfigOpener, RunningServer, ServerOptions, StartError, start, start_with};
