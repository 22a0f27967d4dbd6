//! A hostile web site: one host, `hostile.test`, whose paths are each built
//! to break a naive crawler (endless and dripping bodies, a gzip bomb,
//! redirect loops, invalid UTF-8, lying content types, a page with 100,000
//! links, badly broken HTML).
//!
//! [`HostileSite::start`] serves it on `127.0.0.1:0`, accepting any `Host`
//! header. URLs carry the port (`http://hostile.test:PORT/drip`): a crawler
//! must resolve [`HOSTILE_HOST`] to [`HostileSite::addr`]. The crawl seed is
//! `/` ([`HostileSite::seeds`]), an index linking to every hostile path.
//!
//! | path | served | a well-behaved crawler |
//! | --- | --- | --- |
//! | `/` | index linking to every path below | FETCHED, all of them found |
//! | `/drip` | 200 `text/html`, one byte per second, forever | FETCH_ERROR (timeout) within its `http.timeout` |
//! | `/endless` | 200 `text/html`, no content-length, 64 KiB chunks as fast as possible, forever; the first chunk links to `/ok/5` | FETCHED with a body truncated at its content limit (`/ok/5` found) |
//! | `/gzip-bomb` | 200 `text/html`, `content-encoding: gzip`, ~1 MB inflating to [`GZIP_BOMB_DECOMPRESSED_LEN`] bytes | FETCHED truncated at the content limit, or FETCH_ERROR; never more than the limit in memory |
//! | `/loop/a`, `/loop/b` | 301 to each other | REDIRECTION each, target recorded as an outlink |
//! | `/loop/self` | 301 to itself | REDIRECTION |
//! | `/invalid-utf8` | 200 `text/html; charset=utf-8` with invalid UTF-8 | FETCHED, `/ok/1` and `/ok/2` found |
//! | `/lying-type` | 200 `text/html`, body a binary PNG-like blob | FETCHED (no crash), no links |
//! | `/lying-type-2` | 200 `image/png`, body HTML linking to `/ok/3` | FETCHED (no crash); `/ok/3` found or not |
//! | `/many-links` | 200 `text/html`, [`MANY_LINKS`] links `/l/0` .. `/l/99999` | FETCHED |
//! | `/broken-html` | 200 `text/html`, badly broken HTML | FETCHED, `/ok/4` found; `/not-a-link`, `/commented` not found |
//! | `/ok/N` | 200, small valid HTML page | FETCHED |
//! | `/l/N` | 404 | FETCH_ERROR |
//! | `/robots.txt` | 404 | (no robots rules) |
//!
//! [`HostileSite::expectations`] gives the same table as data.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::server::{Served, Server};
use crate::{ExpectedStatus, RequestRecord};

mod content;
mod serve;

pub use content::{BROKEN_HTML_LONG_ATTR_LEN, ENDLESS_CHUNK_LEN};
use content::{GZIP_BOMB_PREFIX, GZIP_BOMB_SPACES, INDEX_LINKS, content};
pub use serve::DRIP_INTERVAL;
use serve::{Shared, handle};
#[cfg(test)]
mod tests;

/// The one host name of the hostile site (any `Host` header is accepted).
pub const HOSTILE_HOST: &str = "hostile.test";

/// Number of bytes `/gzip-bomb` inflates to: a short HTML prefix then
/// 1 GiB of spaces.
pub const GZIP_BOMB_DECOMPRESSED_LEN: u64 = GZIP_BOMB_PREFIX.len() as u64 + GZIP_BOMB_SPACES;

/// Number of links on `/many-links` (`/l/0` .. `/l/99999`).
pub const MANY_LINKS: usize = 100_000;

/// What a well-behaved crawler does with one URL of the hostile site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostileOutcome {
    /// 200, fetched completely (and parsed if HTML).
    Fetched,
    /// 200 with an endless body: fetched, body truncated at the crawler's
    /// content limit.
    FetchedTruncated,
    /// Either fetched with a body truncated at the content limit, or a fetch
    /// error; in both cases the crawler never holds more than its content
    /// limit in memory (`/gzip-bomb`).
    FetchedTruncatedOrFetchError,
    /// A fetch error: a timeout (`/drip`) or an HTTP error status (404).
    FetchError,
    /// 301: the `Location` target is recorded as an outlink.
    Redirection,
}

impl HostileOutcome {
    /// The statuses of the ordinary site's vocabulary this outcome allows
    /// (a truncated fetch is [`ExpectedStatus::Fetched`]).
    pub fn allowed_statuses(self) -> &'static [ExpectedStatus] {
        match self {
            HostileOutcome::Fetched | HostileOutcome::FetchedTruncated => {
                &[ExpectedStatus::Fetched]
            }
            HostileOutcome::FetchedTruncatedOrFetchError => {
                &[ExpectedStatus::Fetched, ExpectedStatus::FetchError]
            }
            HostileOutcome::FetchError => &[ExpectedStatus::FetchError],
            HostileOutcome::Redirection => &[ExpectedStatus::Redirection],
        }
    }
}

/// What a well-behaved crawler records for one path of the hostile site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostileExpectation {
    /// Path, e.g. `/drip`.
    pub path: &'static str,
    /// `http://hostile.test:PORT{path}`.
    pub url: String,
    /// Expected outcome.
    pub outcome: HostileOutcome,
    /// For a redirect: the absolute `Location` target, recorded as an
    /// outlink.
    pub redirect_to: Option<String>,
    /// Absolute URLs that must be found as outlinks of this page (a sample
    /// for `/`, `/many-links`).
    pub must_find: Vec<String>,
    /// Absolute URLs that must NOT be found as outlinks of this page.
    pub must_not_find: Vec<String>,
    /// Why, in words.
    pub note: &'static str,
}

impl Drop for HostileSite {
    /// Best effort: ends the streaming bodies and signals the server to
    /// stop, without waiting.
    fn drop(&mut self) {
        self.served.shared.cancel.cancel();
        // The server, dropped next, is signalled to stop.
    }
}

/// A running hostile site on loopback. Stops on [`HostileSite::shutdown`] or
/// when dropped; either ends every endless or dripping body at once.
#[derive(derive_more::Debug)]
pub struct HostileSite {
    served: Served<Shared>,
}

impl HostileSite {
    /// Serves the hostile site on `127.0.0.1:0` (a free port), on the
    /// current tokio runtime. The first start in a process builds the
    /// bodies (the gzip bomb, the 100,000-link page) on a blocking thread;
    /// later starts reuse them.
    pub async fn start() -> std::io::Result<HostileSite> {
        let content = tokio::task::spawn_blocking(content)
            .await
            .map_err(std::io::Error::other)?;
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        let listener = Server::bind_loopback(any, "hostile site").await?;
        let shared = |port| Shared {
            port,
            content,
            active_streams: Arc::new(AtomicUsize::new(0)),
            streams_started: AtomicUsize::new(0),
            cancel: CancellationToken::new(),
            log: Mutex::new(Vec::new()),
        };
        let served = Served::start(listener, shared, |shared| Server::fallback(handle, shared))?;
        Ok(HostileSite { served })
    }

    /// The address the server listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.served.addr
    }

    /// The port of the server, part of every URL of the site.
    pub fn port(&self) -> u16 {
        self.served.port()
    }

    /// `http://{host}:{port}{path}` for this site's port.
    pub fn url(&self, host: &str, path: &str) -> String {
        crate::url_for(host, self.port(), path)
    }

    /// The host names to resolve to [`HostileSite::addr`]: `hostile.test`.
    pub fn host_names(&self) -> Vec<String> {
        vec![HOSTILE_HOST.to_owned()]
    }

    /// The crawl seed: `http://hostile.test:PORT/`.
    pub fn seeds(&self) -> Vec<String> {
        vec![self.served.shared.url("/")]
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.served.shared.log().clone()
    }

    /// Forgets the requests received so far.
    pub fn clear_requests(&self) {
        self.served.shared.log().clear();
    }

    /// Number of `/drip` and `/endless` bodies currently alive on the
    /// server. Drops back to 0 once clients disconnect (within about two
    /// [`DRIP_INTERVAL`]s for `/drip`, at once for `/endless`).
    pub fn active_streams(&self) -> usize {
        self.served.shared.active_streams.load(Ordering::SeqCst)
    }

    /// Number of `/drip` and `/endless` GET responses started so far.
    pub fn streams_started(&self) -> usize {
        self.served.shared.streams_started.load(Ordering::SeqCst)
    }

    /// The body served at `path` for the static pages (`/`, `/gzip-bomb`
    /// compressed, `/invalid-utf8`, `/lying-type`, `/lying-type-2`,
    /// `/many-links`, `/broken-html`), to inspect in tests.
    pub fn body(&self, path: &str) -> Option<&[u8]> {
        let c = self.served.shared.content;
        let b = match path {
            "/" => &c.index,
            "/gzip-bomb" => &c.gzip_bomb,
            "/invalid-utf8" => &c.invalid_utf8,
            "/lying-type" => &c.lying_type,
            "/lying-type-2" => &c.lying_type_2,
            "/many-links" => &c.many_links,
            "/broken-html" => &c.broken_html,
            _ => return None,
        };
        Some(b.as_ref())
    }

    /// What a well-behaved crawler started from [`HostileSite::seeds`]
    /// records, per path (absolute URLs with this site's port). `/ok/N`
    /// pages are FETCHED and `/l/N` pages FETCH_ERROR (404) for every N;
    /// only the ones linked from the index and the hostile pages are listed.
    pub fn expectations(&self) -> Vec<HostileExpectation> {
        let u = |p: &str| self.served.shared.url(p);
        let e = |path: &'static str, outcome, note| HostileExpectation {
            path,
            url: u(path),
            outcome,
            redirect_to: None,
            must_find: Vec::new(),
            must_not_find: Vec::new(),
            note,
        };
        use HostileOutcome::*;
        let mut v = vec![
            HostileExpectation {
                must_find: INDEX_LINKS.iter().map(|p| u(p)).collect(),
                ..e("/", Fetched, "index linking to every hostile path")
            },
            e(
                "/drip",
                FetchError,
                "one byte per second forever: times out within the crawler's http.timeout",
            ),
            HostileExpectation {
                must_find: vec![u("/ok/5")],
                ..e(
                    "/endless",
                    FetchedTruncated,
                    "endless body without content-length: truncated at the content limit; its head links to /ok/5",
                )
            },
            e(
                "/gzip-bomb",
                FetchedTruncatedOrFetchError,
                "about 1 MB inflating to 1 GiB: truncated at the content limit or an error, never more than the limit in memory",
            ),
            HostileExpectation {
                redirect_to: Some(u("/loop/b")),
                ..e(
                    "/loop/a",
                    Redirection,
                    "301 to /loop/b, which redirects back",
                )
            },
            HostileExpectation {
                redirect_to: Some(u("/loop/a")),
                ..e(
                    "/loop/b",
                    Redirection,
                    "301 to /loop/a, which redirects back",
                )
            },
            HostileExpectation {
                redirect_to: Some(u("/loop/self")),
                ..e("/loop/self", Redirection, "301 to itself")
            },
            HostileExpectation {
                must_find: vec![u("/ok/1"), u("/ok/2")],
                ..e(
                    "/invalid-utf8",
                    Fetched,
                    "declared UTF-8 with invalid sequences: decode lossily, links still found",
                )
            },
            e(
                "/lying-type",
                Fetched,
                "declared text/html, binary PNG-like body: no crash, no links",
            ),
            e(
                "/lying-type-2",
                Fetched,
                "declared image/png, HTML body linking to /ok/3: not parsed by declared type (finding /ok/3 is tolerated)",
            ),
            HostileExpectation {
                must_find: vec![u("/l/0"), u("/l/99999")],
                ..e(
                    "/many-links",
                    Fetched,
                    "100,000 links /l/0 .. /l/99999 (a crawler may cap outlinks per page)",
                )
            },
            HostileExpectation {
                must_find: vec![u("/ok/4")],
                must_not_find: vec![u("/not-a-link"), u("/commented")],
                ..e(
                    "/broken-html",
                    Fetched,
                    "broken HTML: /ok/4 unquoted is a link, links inside <script> and comments are not",
                )
            },
        ];
        for n in 0..=5 {
            let path: &'static str = ["/ok/0", "/ok/1", "/ok/2", "/ok/3", "/ok/4", "/ok/5"][n];
            v.push(e(path, Fetched, "small valid page"));
        }
        v.push(e("/l/0", FetchError, "404"));
        v.push(e("/l/99999", FetchError, "404"));
        v
    }

    /// Stops the server: ends every streaming body, then waits for the
    /// connections to close (up to 5 seconds, then aborts).
    pub async fn shutdown(mut self) {
        self.served.shared.cancel.cancel();
        self.served.shutdown().await;
    }
}
