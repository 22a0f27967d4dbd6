//! The URLFrontier server over squall's frontiers.
mod crawl;
mod crawls;
mod dispenser;
mod service;

pub use crawl::{Backend, Crawl, PutOutcome};
pub use crawls::{CrawlError, Crawls, DEFAULT_CRAWL, FrontierOpener, check_id};
pub use dispenser::{Ask, Dispenser, HandedOut};
pub use service::{FrontierService, IDLE_COUNT};
mod start;
pub use start::{ConfigOpener, RunningServer, StartError, start};
