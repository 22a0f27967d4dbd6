//! A headless-browser protocol for squall: JavaScript applications rendered in real Chromium,
//! driven over the DevTools protocol, within bounded memory.
//!
//! [`BrowserProtocol`] implements squall's [`Protocol`](squall::protocol::Protocol). Register it
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
//! This crawler renders a JavaScript application served on loopback (the test application of
//! `squall-testsite`, whose post links exist only after its script runs and a "more" button is
//! clicked):
//!
//! ```
//! use std::sync::Arc;
//! use squall::config::ConfigBuilder;
//! use squall::frontier::{EmbeddedFrontier, QueryLimits};
//! use squall::topology::{CrawlerBuilder, RunLimits};
//! use squall_browser::BrowserProtocol;
//! use squall_testsite::app::{AppSite, AppSpec};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let site = AppSite::start(AppSpec::small()).await?;
//! let config = ConfigBuilder::new()
//!     .set("http.agent.name=docs-example")?
//!     .set("protocol.schemes={http: browser, https: browser}")?
//!     .set("browser.paging.click='#more'")?
//!     .set("browser.host.rules='MAP *.test 127.0.0.1, MAP * ~NOTFOUND'")?
//!     .set("fetcher.server.delay=0.1")?
//!     .build()?;
//! let browser = Arc::new(BrowserProtocol::from_config(&config).await?);
//! let dir = tempfile::tempdir()?;
//! let frontier = EmbeddedFrontier::open(dir.path())?;
//! let mut builder = CrawlerBuilder::new(config)
//!     .frontier(frontier.spout(QueryLimits::default()), frontier.clone())
//!     .named_protocol("browser", browser);
//! for host in site.host_names() {
//!     builder = builder.resolve(host, site.addr()); // robots.txt is read over HTTP
//! }
//! let crawler = builder.build()?;
//! crawler.inject(site.seeds().iter().map(String::as_str)).await;
//! let summary = crawler.run(RunLimits::until_idle()).await;
//! assert_eq!(summary.pages as usize, site.expected().documents().len());
//! # Ok(()) }
//! ```
//!
//! What it needs: a Chromium (Debian: `apt-get install chromium`), found on `PATH` or named by
//! `browser.executable`, or a running one's DevTools address in `browser.devtools.url`. As root,
//! it is started with `--no-sandbox`.

mod error;
mod launch;
mod memory;
mod protocol;
mod render;
mod rules;
mod session;
mod settings;
mod tab;

pub use error::BrowserError;
pub use launch::find_on_path;
pub use memory::{process_tree, tree_rss_bytes};
pub use protocol::{BrowserProtocol, PROTOCOL_NAME};
pub use rules::RenderRules;
pub use settings::{
    BlockedResource, BrowserConfig, BrowserSettings, BrowserSource, PREFIX, SettleConfig,
};

/// Why the browser protocol could not start.
#[derive(Debug, thiserror::Error)]
pub enum BrowserStartError {
    /// A `browser.*` key is wrong.
    #[error(transparent)]
    Config(#[from] squall::config::ConfigError),
    /// The browser could not be started or reached.
    #[error(transparent)]
    Browser(#[from] BrowserError),
}
