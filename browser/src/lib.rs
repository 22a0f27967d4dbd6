//! A headless-browser protocol for squall: JavaScript applications rendered in real Chromium,
//! driven over the DevTools protocol, within bounded memory.
//!
//! [`BrowserProtocol`] implements squall's [`Protocol`](squall::fetch::Protocol). Register it
//! under a name and give it the schemes it serves; it renders the URLs its [`RenderRules`] select
//! (`browser.render.hosts`, `browser.render.patterns`, `browser.render.metadata`; every URL when
//! none is set) and leaves the others to plain HTTP. The fetcher treats a rendered page like any
//! fetch: robots.txt, per-host politeness (one navigation per delay; the requests the page's own
//! scripts make are not counted) and the Retry-After hold apply, and the parser, URL filters and
//! status updater see the rendered DOM as the page's HTML. The fetch log records the protocol of
//! each fetch (`browser` or `http`).
//!
//! A navigation's document response is recorded as the HTTP protocol records a fetch: its status,
//! headers and final URL; a redirect is followed within the render only with
//! `http.allow.redirects` (else the 3xx is the answer, as over HTTP); an error status or content
//! that is not HTML is answered with the bytes received, not rendered.
//!
//! ```no_run
//! use std::sync::Arc;
//! use squall::config::ConfigBuilder;
//! use squall::frontier::{EmbeddedFrontier, QueryLimits};
//! use squall::topology::{CrawlerBuilder, RunLimits};
//! use squall_browser::BrowserProtocol;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=my-crawler")?
//!     .set("protocol.schemes={http: browser, https: browser}")?
//!     .set("browser.render.hosts=[app.example.org]")?
//!     .set("browser.paging.click=button.more")?
//!     .set("browser.tabs=4")?
//!     .build()?;
//! let browser = Arc::new(BrowserProtocol::from_config(&config).await?);
//! let frontier = EmbeddedFrontier::open("frontier")?;
//! let crawler = CrawlerBuilder::new(config)
//!     .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
//!     .named_protocol("browser", browser)
//!     .build()?;
//! crawler.inject(["https://app.example.org/"]).await;
//! crawler.run(RunLimits { until_idle: true, ..RunLimits::default() }).await;
//! # Ok(()) }
//! ```
//!
//! What it needs: a Chromium (Debian: `apt-get install chromium`), found on `PATH` or named by
//! `browser.executable`, or a running one's DevTools address in `browser.devtools.url`. As root,
//! it is started with `--no-sandbox`.

mod error;
mod launch;
mod protocol;
mod render;
mod rss;
mod rules;
mod session;
mod settings;
mod tab;

pub use error::BrowserError;
pub use launch::find_on_path;
pub use protocol::{BrowserProtocol, PROTOCOL_NAME};
pub use rss::tree_rss_bytes;
pub use rules::RenderRules;
pub use settings::{BlockedResource, BrowserSettings, BrowserSource, PREFIX, SettleSettings};

/// Why the browser protocol could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A `browser.*` key is wrong.
    #[error(transparent)]
    Config(#[from] squall::config::ConfigError),
    /// The browser could not be started or reached.
    #[error(transparent)]
    Browser(#[from] BrowserError),
}
