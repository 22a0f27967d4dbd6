//! A JavaScript application site: its post links and post texts exist only
//! after its script runs, for testing crawlers that render pages in a
//! headless browser.
//!
//! [`AppSite::start`] serves hosts `app-00.test`, `app-01.test`, ... (see
//! [`AppSpec`]) from one HTTP server on `127.0.0.1:0`, choosing the host by
//! the `Host` header. URLs carry the port (`http://app-01.test:PORT/post/7`):
//! a browser or crawler must resolve every name of [`AppSite::host_names`]
//! to 127.0.0.1 and connect to the URL's port. Every request is logged
//! ([`AppSite::requests`]), including `/api/`, `/static/` and 404s.
//!
//! | path | served | after its script runs |
//! | --- | --- | --- |
//! | `/` | 200 HTML: an empty list, `<button id="more">More</button>`, `<img src="/static/logo.png">` | the first page of posts as `<li><a href="/post/ID">TITLE</a></li>`; each click on `#more` appends the next page; after the last page the button is removed from the DOM (default spec: 2 clicks show all 25 posts) |
//! | `/scroll` | 200 HTML: an empty list, then `<div id="sentinel">` | infinite scroll: the same posts, the next page loading when the sentinel comes into view; items are at least 400px tall, so at an 800x600 viewport (page size ≥ 2) the sentinel is out of view after each page until `window.scrollTo(0, document.body.scrollHeight)`; after the last page the sentinel becomes `<p id="end">` |
//! | `/post/ID` | 200 HTML, the same for every ID | `<h1>TITLE</h1><p class="post-text">TEXT</p><a href="/">home</a>`; an unknown ID renders `<p class="not-found">not found</p>` and the home link (the document itself is still 200, as in a real single-page app) |
//! | `/go/ID` | 301 to `/post/ID` (absolute URL) | |
//! | `/never-settles` | 200 HTML | `/api/tick` every 100 ms forever (the network is never idle), a counter in `#ticks` |
//! | `/api/posts?page=N` | JSON `{"page":N,"posts":[{"id":..,"title":..}],"more":bool}`; no `page`: page 0; past the last page: no posts, `more` false; not a number: 400 | |
//! | `/api/post/ID` | JSON `{"id":..,"title":..,"text":..}`; unknown ID: 404 `{"error":"not found"}` | |
//! | `/api/tick` | JSON `{"ok":true}` | |
//! | `/static/app.js` | the one script of every page | |
//! | `/static/logo.png` | a 1x1 PNG | |
//! | `/robots.txt`, anything else | 404 HTML (so everything is allowed) | |
//!
//! IDs are canonical decimals (`/post/007` and `/post/x` are 404). Every
//! `/api/` answer waits [`AppSpec::api_delay`] first. Titles are
//! `Post 7 on app-01`, texts `The text of post 7 on app-01.test: ` and
//! deterministic words; neither appears in any document or in the script,
//! only in `/api/` JSON. Every response has `cache-control: no-store`.
//!
//! `/` links to nothing in its served bytes; `/scroll`, `/go/ID` and
//! `/never-settles` are linked from nowhere, not even after rendering: a
//! test reaches them only by seeding them. [`AppSite::expected`] tells what
//! a rendering crawl from [`AppSite::seeds`] finds; [`navigations`] keeps
//! the document requests of a log, for politeness checks.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use squall_testsite::app::{AppSite, AppSpec, navigations};
//!
//! let site = AppSite::start(AppSpec::default()).await?;
//! let seeds = site.seeds(); // http://app-00.test:PORT/, ...
//! // ... crawl `seeds` with a browser, resolving `site.host_names()` to `site.addr()` ...
//! let expected = site.expected();
//! assert_eq!(expected.post_texts().len(), 3 * 25);
//! let documents = navigations(&site.requests());
//! assert!(documents.iter().all(|r| !r.path.starts_with("/api/")));
//! site.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod expect;
mod pages;
mod posts;
mod routes;
mod spec;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;

pub use expect::{AppExpectation, is_navigation, navigations};
pub use spec::AppSpec;

use crate::RequestRecord;
use crate::server::{Served, Server};
use routes::Shared;

/// A running app site on loopback. Stops on [`AppSite::shutdown`] or when
/// dropped.
#[derive(derive_more::Debug)]
pub struct AppSite {
    #[debug("{:?} at {:?}", served.shared.spec, served)]
    served: Served<Shared>,
}

impl AppSite {
    /// Serves the app described by `spec` on `127.0.0.1:0` (a free port), on
    /// the current tokio runtime.
    pub async fn start(spec: AppSpec) -> std::io::Result<AppSite> {
        AppSite::start_on(spec, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Like [`AppSite::start`], on a given loopback address (e.g. a fixed
    /// port for a manual check). Non-loopback addresses are refused.
    pub async fn start_on(spec: AppSpec, addr: SocketAddr) -> std::io::Result<AppSite> {
        let listener = Server::bind_loopback(addr, "app site").await?;
        let shared = |port| Shared::new(spec, port);
        let served = Served::start(listener, shared, routes::router)?;
        Ok(AppSite { served })
    }

    /// The spec the site serves.
    pub fn spec(&self) -> &AppSpec {
        &self.served.shared.spec
    }

    /// The address the server listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.served.addr
    }

    /// The port of the server, part of every URL of the site.
    pub fn port(&self) -> u16 {
        self.served.port()
    }

    /// Every host name the site serves, `app-00.test`, ...; a browser must
    /// resolve them all to 127.0.0.1.
    pub fn host_names(&self) -> Vec<String> {
        self.served.shared.spec.host_names()
    }

    /// The home page `/` of every host (`http://app-00.test:PORT/`, ...):
    /// the crawl seeds.
    pub fn seeds(&self) -> Vec<String> {
        self.host_names()
            .iter()
            .map(|host| self.url(host, "/"))
            .collect()
    }

    /// `http://{host}:{port}{path}` for this site's port.
    pub fn url(&self, host: &str, path: &str) -> String {
        crate::url_for(host, self.port(), path)
    }

    /// Every request received so far, in order of arrival (an `/api/`
    /// request is logged on arrival, before its delay).
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.served.shared.log().clone()
    }

    /// The document requests received so far (see [`navigations`]).
    pub fn navigations(&self) -> Vec<RequestRecord> {
        navigations(&self.served.shared.log())
    }

    /// Forgets the requests received so far.
    pub fn clear_requests(&self) {
        self.served.shared.log().clear();
    }

    /// What a rendering crawl from [`AppSite::seeds`] finds.
    pub fn expected(&self) -> AppExpectation {
        AppExpectation::compute(&self.served.shared.spec, self.port())
    }

    /// Stops the server: no new connections, in-flight requests complete
    /// (waits up to 5 seconds, then aborts).
    pub async fn shutdown(mut self) {
        self.served.shutdown().await;
    }
}
