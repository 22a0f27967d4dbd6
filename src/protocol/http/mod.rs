//! The HTTP protocol: one reqwest client ([`HttpClient`]) with its options (proxies, credentials,
//! cookies with the `cookies` feature), the body decoded by hand where the raw bytes are archived, and the exchanges handed
//! to the WARC writer.

mod access;
mod access_keys;
mod agent;
mod archive;
mod client;
mod context;
#[cfg(feature = "cookies")]
mod cookies;
mod decode;
mod options;
mod settings;

pub use access::{BasicCredentials, ProxyKind, ProxySettings, SiteCredentials};
pub use access_keys::{Secret, SecretFileError};
pub use agent::AgentSettings;
pub use client::{HttpClient, HttpClientError, parse_retry_after};
pub(crate) use client::{base_builder, redirect_policy};
pub use context::HttpContext;
#[cfg(feature = "cookies")]
pub use cookies::{CookieJar, CookieLimits};
pub(crate) use options::authorize;
pub use settings::HttpSettings;
