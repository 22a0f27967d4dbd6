//! The HTTP protocol: one reqwest client ([`HttpClient`]) with its options (proxies, credentials,
//! cookies), the body decoded by hand where the raw bytes are archived, and the exchanges handed
//! to the WARC writer.

mod access;
mod agent;
mod archive;
mod client;
mod decode;
mod options;

pub use access::{BasicCredentials, ProxyKind, ProxySettings, SiteCredentials};
pub use agent::AgentSettings;
pub use client::{HttpClient, HttpClientError, HttpSettings, parse_retry_after};
pub(crate) use client::{base_builder, redirect_policy};
pub use options::CookieJar;
pub(crate) use options::authorize;
