//! A deterministic multi-host web site served on loopback, for squall's
//! end-to-end crawl tests, benchmarks and demo mode.
//!
//! A [`SiteSpec`] describes the site; the same spec always generates the
//! same site. [`Site::start`] serves every host of it from one HTTP server
//! bound to `127.0.0.1:0`, choosing the host by the `Host` header. URLs carry
//! the port (`http://host-03.test:PORT/p/17.html`): a crawler must resolve
//! every name of [`Site::host_names`] to 127.0.0.1 and connect to the URL's
//! port.
//!
//! The site has in-scope hosts `host-NN.test` (the seeds are their home
//! pages) and out-of-scope hosts `outside-NN.test`. Its pages link to each
//! other with absolute, protocol-relative, root-relative and relative links
//! (one form `../p/N.html`), some under a `<base href>`, some with fragments,
//! some duplicated, some `rel="nofollow"` (their targets are reachable only
//! through nofollow links). Some pages are linked from nowhere. Special
//! paths: `/redirect/N` (301 to an ordinary page, sometimes on another
//! host), `/missing/N` (404), `/error/N` (500), `/files/N.pdf`
//! (`application/pdf`). One host (`host-01.test` by default) serves a
//! robots.txt disallowing `/private/`, and links to `/private/N.html` pages;
//! every other /robots.txt answers 404.
//!
//! [`Site::expected`] tells what a correct crawler does, and
//! [`Expectation::check_requests`] compares it with the server's request log:
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use squall_testsite::{ExpectedStatus, Site, SiteSpec};
//!
//! let site = Site::start(SiteSpec::small()).await?;
//! let seeds = site.seeds(); // http://host-00.test:PORT/, ...
//! // ... crawl `seeds`, resolving every `site.host_names()` to `site.addr()` ...
//! let expected = site.expected();
//! assert!(expected.count(ExpectedStatus::Fetched) > 0);
//! let problems = expected.check_requests(&site.requests());
//! assert!(problems.is_empty(), "{problems:#?}");
//! site.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! [`hostile::HostileSite`] is a separate one-host site whose paths are each
//! built to break a naive crawler (endless bodies, a gzip bomb, redirect
//! loops, invalid UTF-8, lying content types, broken HTML).
//!
//! [`app::AppSite`] is a JavaScript application on hosts `app-NN.test`
//! whose post links and post texts exist only after its script runs
//! (fetched from a JSON API, revealed page by page by a "More" button or by
//! infinite scroll), for crawlers that render pages in a headless browser.
//! [`AppSite::expected`] tells what a rendering crawl finds, and
//! [`app::navigations`] keeps only the document requests of a request log.
//!
//! [`capacity::CapacitySite`] serves hosts `cap-000.test`, ... that push back: each has a hidden
//! capacity (a token bucket of its own rate, [`capacity::CapacitySpec`]), a latency that grows
//! as the bucket drains, and, over capacity, its own answer (429 without a header, 429 or 503
//! with `Retry-After`, or 503), decided by its [`capacity::HostGate`]. Its request log
//! ([`capacity::CapacityRecord`]) keeps each answer, and is the judge: [`capacity::judge`] reads
//! from it the figures a pacing crawler is held to.
//!
//! [`tls`] has a throw-away certificate authority ([`tls::TestCa`]) and a TLS-terminating,
//! credential-checking reverse proxy ([`tls::TlsGate`]), for tests that must prove TLS,
//! client certificates and API keys against a real endpoint.

pub mod app;
pub mod capacity;
mod expect;
pub mod flood;
pub mod hostile;
mod model;
mod render;
mod request;
mod server;
mod spec;
#[cfg(test)]
mod test_links;
#[cfg(test)]
mod tests;
pub mod tls;

pub use app::{AppExpectation, AppSite, AppSpec};
pub use expect::{Expectation, ExpectedStatus, Scope};
pub use hostile::{HostileExpectation, HostileOutcome, HostileSite};
pub use model::SplitMix;
pub use request::RequestRecord;
pub use server::Site;
pub use spec::SiteSpec;

/// The `count` seeds a seeded randomized test runs: from `SQUALL_SEED` when it is set to a
/// number (to replay a failure's seed), else from `default`.
pub fn seeds(default: u64, count: u64) -> std::ops::Range<u64> {
    let from_env = std::env::var("SQUALL_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let base = from_env.unwrap_or(default);
    base..base + count
}

/// `http://{host}:{port}{path}`: the URL form used throughout the site.
pub fn url_for(host: &str, port: u16, path: &str) -> String {
    format!("http://{host}:{port}{path}")
}

/// Serves `app` on a fresh port of 127.0.0.1, in the background for as long as the runtime runs;
/// returns its address. For tests that need answers the generated sites do not give.
pub async fn serve_router(app: axum::Router) -> std::io::Result<std::net::SocketAddr> {
    let listener =
        tokio::net::TcpListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(addr)
}
