//! Fetching: the fetcher bolt with per-queue politeness, robots.txt, and the HTTP protocol.

mod bolt;
mod http;
mod robots;

pub use bolt::{FetcherBolt, FetcherSettings};
pub use http::{HttpClient, HttpClientError, HttpSettings};
pub use robots::{RobotsCache, RobotsRules};
