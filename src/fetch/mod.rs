//! Fetching: the fetcher bolt with per-queue politeness, robots.txt, and the HTTP protocol.

mod bolt;
mod dns;
mod http;
mod robots;

pub use bolt::{FetcherBolt, FetcherSettings};
pub use dns::{CachingResolver, ResolveError, is_private_address};
pub use http::{HttpClient, HttpClientError, HttpSettings, parse_retry_after};
pub use robots::{MAX_ROBOTS_BYTES, RobotsCache, RobotsLookup, RobotsRules};
