//! Protocols: what fetches one URL, chosen by its scheme, and what they share (DNS, robots.txt).
//!
//! The fetcher bolt ([`crate::fetch`]) decides when a URL is fetched; a [`Protocol`] decides how.
//! [`Protocols`] holds one per scheme; [`HttpClient`] serves `http` and `https`. To crawl another
//! scheme (a headless browser, files), implement [`Protocol`] and register it with
//! [`CrawlerBuilder::protocol`](crate::topology::CrawlerBuilder::protocol); the trait's docs show a
//! complete example. A URL whose scheme has no protocol gets ERROR with `error.cause`
//! `unsupported_scheme`. [`RobotsCache`] fetches and keeps each host's robots.txt through HTTP;
//! [`HostResolver`] resolves host names with a cache, and names the addresses a crawl refuses.

mod dns;
mod http;
mod registry;
mod robots;
mod schemes;

pub use dns::{CachingResolver, HostResolver, ResolveError, TrustedHosts, is_private_address};
pub use http::{
    AgentSettings, BasicCredentials, HttpClient, HttpClientError, HttpContext, HttpSettings,
    ProxyKind, ProxySettings, Secret, SecretFileError, SiteCredentials, parse_retry_after,
};
#[cfg(feature = "cookies")]
pub use http::{CookieJar, CookieLimits};
pub use registry::{Protocol, Protocols, Refusal};
pub use robots::{
    ABSURD_CRAWL_DELAY, MAX_ROBOTS_BYTES, RobotsCache, RobotsLookup, RobotsRules, RobotsSettings,
};
pub use schemes::ProtocolSettings;
