//! Fetching: the fetcher bolt with per-queue politeness, robots.txt, and the protocols that fetch.
//!
//! [`FetcherBolt`] keeps one queue per partition key and fetches each URL through the
//! [`Protocol`] registered for its scheme in [`Protocols`]; [`HttpClient`] serves `http` and
//! `https`. To crawl another scheme (a headless browser, files), implement [`Protocol`] and
//! register it with [`CrawlerBuilder::protocol`](crate::topology::CrawlerBuilder::protocol); the
//! trait's docs show a complete example. A URL whose scheme has no protocol gets ERROR with
//! `error.cause` `unsupported_scheme`.

mod bolt;
mod checks;
mod decode;
mod dns;
mod http;
mod http_options;
mod inflight;
mod partition;
mod protocol;
mod queue_keys;
mod queues;
mod robots;
mod settings;
mod task;
mod wire;

pub use bolt::FetcherBolt;
pub use dns::{CachingResolver, HostResolver, ResolveError, is_private_address};
pub use http::{HttpClient, HttpClientError, HttpSettings, parse_retry_after};
pub use http_options::CookieJar;
pub use partition::Partitioner;
pub use protocol::{Protocol, Protocols, Refusal};
pub use robots::{MAX_ROBOTS_BYTES, RobotsCache, RobotsLookup, RobotsRules};
pub use settings::FetcherSettings;
