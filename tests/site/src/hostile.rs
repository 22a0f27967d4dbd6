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
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_ENCODING, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use crate::server::{Server, request_host};
use crate::{ExpectedStatus, RequestRecord};

#[cfg(test)]
mod tests;

/// The one host name of the hostile site (any `Host` header is accepted).
pub const HOSTILE_HOST: &str = "hostile.test";

/// Number of bytes `/gzip-bomb` inflates to: a short HTML prefix then
/// 1 GiB of spaces.
pub const GZIP_BOMB_DECOMPRESSED_LEN: u64 = GZIP_BOMB_PREFIX.len() as u64 + GZIP_BOMB_SPACES;

/// Spaces after the prefix in the gzip bomb's inflated body: 1 GiB.
const GZIP_BOMB_SPACES: u64 = 1 << 30;

/// Start of the gzip bomb's inflated body.
const GZIP_BOMB_PREFIX: &str = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Gzip bomb</title></head>\n<body><p>";

/// Number of links on `/many-links` (`/l/0` .. `/l/99999`).
pub const MANY_LINKS: usize = 100_000;

/// Size of every chunk `/endless` sends.
pub const ENDLESS_CHUNK_LEN: usize = 64 * 1024;

/// Interval between two bytes of `/drip`.
pub const DRIP_INTERVAL: Duration = Duration::from_secs(1);

/// Size of the `title` attribute value on `/broken-html`.
pub const BROKEN_HTML_LONG_ATTR_LEN: usize = 100 * 1024;

const HTML: &str = "text/html; charset=utf-8";

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

/// Port-independent bodies, built once per process.
struct Content {
    index: Bytes,
    endless_head: Bytes,
    endless_chunk: Bytes,
    gzip_bomb: Bytes,
    invalid_utf8: Bytes,
    lying_type: Bytes,
    lying_type_2: Bytes,
    many_links: Bytes,
    broken_html: Bytes,
    not_found: Bytes,
    not_allowed: Bytes,
}

fn content() -> &'static Content {
    static CONTENT: OnceLock<Content> = OnceLock::new();
    CONTENT.get_or_init(Content::build)
}

/// Every path the index links to.
const INDEX_LINKS: &[&str] = &[
    "/drip",
    "/endless",
    "/gzip-bomb",
    "/loop/a",
    "/loop/b",
    "/loop/self",
    "/invalid-utf8",
    "/lying-type",
    "/lying-type-2",
    "/many-links",
    "/broken-html",
    "/ok/0",
    "/l/0",
];

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body>\n{body}</body></html>\n"
    )
}

impl Content {
    fn build() -> Content {
        let mut index = String::from("<h1>Hostile site</h1>\n<ul>\n");
        for p in INDEX_LINKS {
            index.push_str(&format!("<li><a href=\"{p}\">{p}</a></li>\n"));
        }
        index.push_str("</ul>\n");

        let endless_head =
            page("Endless", "<p><a href=\"/ok/5\">ok 5</a></p>\n").replace("</body></html>\n", "");
        let line = "<p>endless endless endless endless endless endless endless</p>\n";
        let mut endless_chunk = line.repeat(ENDLESS_CHUNK_LEN / line.len() + 1);
        endless_chunk.truncate(ENDLESS_CHUNK_LEN - 1);
        endless_chunk.push('\n');

        let mut many = String::with_capacity(MANY_LINKS * 26 + 256);
        many.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Many links</title></head>\n<body>\n");
        for n in 0..MANY_LINKS {
            many.push_str(&format!("<a href=\"/l/{n}\">{n}</a>\n"));
        }
        many.push_str("</body></html>\n");

        Content {
            index: page("Hostile site", &index).into(),
            endless_head: endless_head.into(),
            endless_chunk: endless_chunk.into(),
            gzip_bomb: gzip_bomb(GZIP_BOMB_PREFIX.as_bytes(), GZIP_BOMB_SPACES).into(),
            invalid_utf8: invalid_utf8().into(),
            lying_type: png_like_blob(32 * 1024).into(),
            lying_type_2: page(
                "Not a PNG",
                "<p>Served as image/png.</p>\n<p><a href=\"/ok/3\">ok 3</a></p>\n",
            )
            .into(),
            many_links: many.into(),
            broken_html: broken_html().into(),
            not_found: page("404 Not Found", "<h1>404 Not Found</h1>\n").into(),
            not_allowed: page(
                "405 Method Not Allowed",
                "<h1>405 Method Not Allowed</h1>\n",
            )
            .into(),
        }
    }
}

/// A gzip member whose deflate stream is `prefix` then `spaces` spaces.
///
/// Compressing a gibibyte is too slow in a debug build, so one chunk of
/// spaces is compressed once, ending with a sync flush (byte-aligned,
/// not final, no reference outside itself), and repeated; a final empty
/// block closes the stream. The CRC-32 is combined, not computed over the
/// whole inflated body.
pub(crate) fn gzip_bomb(prefix: &[u8], spaces: u64) -> Vec<u8> {
    use flate2::{Compression, Crc};

    const CHUNK: u64 = 4 << 20;
    fn deflate_synced(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), Compression::best());
        // Writing to a Vec cannot fail; flush() is a sync flush.
        let ok = enc.write_all(data).and_then(|()| enc.flush());
        debug_assert!(ok.is_ok());
        enc.get_ref().clone()
    }

    let mut crc = Crc::new();
    crc.update(prefix);
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    out.extend_from_slice(&deflate_synced(prefix));

    let full = spaces / CHUNK;
    let rest = (spaces % CHUNK) as usize;
    if full > 0 {
        let chunk = vec![b' '; CHUNK as usize];
        let deflated = deflate_synced(&chunk);
        let mut chunk_crc = Crc::new();
        chunk_crc.update(&chunk);
        out.reserve(deflated.len() * full as usize + 64);
        for _ in 0..full {
            out.extend_from_slice(&deflated);
            crc.combine(&chunk_crc);
        }
    }
    if rest > 0 {
        let chunk = vec![b' '; rest];
        out.extend_from_slice(&deflate_synced(&chunk));
        crc.update(&chunk);
    }
    // Final block: fixed Huffman, just end-of-block.
    out.extend_from_slice(&[0x03, 0x00]);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    let isize = (prefix.len() as u64).wrapping_add(spaces) as u32;
    out.extend_from_slice(&isize.to_le_bytes());
    out
}

fn invalid_utf8() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(
        b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Invalid \xff UTF-8</title></head>\n<body>\n",
    );
    b.extend_from_slice(b"<p>lone continuation \x80\x81\xbf, bad start \xc3\x28, overlong \xc0\xaf \xe0\x80\xaf, surrogate \xed\xa0\x80, truncated \xe2\x82, out of range \xf5\x80\x80\x80 \xf4\x90\x80\x80, never \xfe\xff</p>\n");
    b.extend_from_slice(b"<p>\xff<a href=\"/ok/1\">one \xff\xfe</a>\xc0</p>\n");
    b.extend_from_slice(b"<p title=\"\xed\xbf\xbf\">\xf0\x9f\x98</p>\n");
    b.extend_from_slice(
        b"<ul><li>\xe2\x28\xa1<a href=\"/ok/2\">two \x80</a>\xf0\x28\x8c\xbc</li></ul>\n",
    );
    b.extend_from_slice(b"</body></html>\n");
    b
}

/// A PNG signature, an IHDR-looking chunk, then deterministic noise.
fn png_like_blob(len: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while b.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.extend_from_slice(&x.to_le_bytes());
    }
    b.truncate(len);
    b
}

fn broken_html() -> String {
    let long = "x".repeat(BROKEN_HTML_LONG_ATTR_LEN);
    format!(
        "<html><head><title>Broken <b>html</title>\n\
         <body bgcolor=white class=a b c data-x=1=2>\n\
         <div><p>unclosed paragraph<p>another <b><i>misnested</b></i>\n\
         <table><tr><td><table><tr><td>nested<table><tr><td>never closed<td>\n\
         <a href=/ok/4 class=unquoted>unquoted link</a>\n\
         <script>var s = '<a href=\"/not-a-link\">no</a>'; document.write(\"<a href='/not-a-link'>\");</script>\n\
         <!-- <a href=\"/commented\">commented</a> -->\n\
         <p>a null byte: \0 here</p>\n\
         <a href=\"javascript:alert(1)\">js</a>\n\
         <a href=\"mailto:x@y\">mail</a>\n\
         <div title=\"{long}\">long attribute</div>\n\
         <p><span><em>never closed\n\
         <a href=\"#\">fragment only</a> <a>no href</a> <a href=\"\">empty href</a>\n\
         </table></td></div></html>\n"
    )
}

/// Decrements the active-stream counter when a streaming body is dropped.
struct StreamGuard(Arc<AtomicUsize>);

impl StreamGuard {
    fn new(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        StreamGuard(Arc::clone(counter))
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Shared {
    port: u16,
    content: &'static Content,
    active_streams: Arc<AtomicUsize>,
    streams_started: AtomicUsize,
    cancel: CancellationToken,
    log: Mutex<Vec<RequestRecord>>,
}

impl Shared {
    fn log(&self) -> MutexGuard<'_, Vec<RequestRecord>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn url(&self, path: &str) -> String {
        crate::url_for(HOSTILE_HOST, self.port, path)
    }
}

fn shutdown_error() -> std::io::Error {
    std::io::Error::other("hostile site shutting down")
}

/// `/drip`: one byte per [`DRIP_INTERVAL`], forever.
fn drip_body(shared: &Shared) -> Body {
    const TEXT: &[u8] = b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Drip</title></head>\n<body><p>";
    struct St {
        n: usize,
        done: bool,
        cancel: CancellationToken,
        _guard: StreamGuard,
    }
    let st = St {
        n: 0,
        done: false,
        cancel: shared.cancel.clone(),
        _guard: StreamGuard::new(&shared.active_streams),
    };
    Body::from_stream(futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        if st.n > 0 {
            tokio::select! {
                () = tokio::time::sleep(DRIP_INTERVAL) => {}
                () = st.cancel.cancelled() => {
                    st.done = true;
                    return Some((Err(shutdown_error()), st));
                }
            }
        }
        let byte = TEXT.get(st.n).copied().unwrap_or(b'.');
        st.n += 1;
        Some((Ok::<_, std::io::Error>(Bytes::copy_from_slice(&[byte])), st))
    }))
}

/// `/endless`: the head, then [`ENDLESS_CHUNK_LEN`] chunks forever.
fn endless_body(shared: &Shared) -> Body {
    struct St {
        first: bool,
        done: bool,
        head: Bytes,
        chunk: Bytes,
        cancel: CancellationToken,
        _guard: StreamGuard,
    }
    let st = St {
        first: true,
        done: false,
        head: shared.content.endless_head.clone(),
        chunk: shared.content.endless_chunk.clone(),
        cancel: shared.cancel.clone(),
        _guard: StreamGuard::new(&shared.active_streams),
    };
    Body::from_stream(futures::stream::unfold(st, |mut st| async move {
        if st.done {
            return None;
        }
        if st.cancel.is_cancelled() {
            st.done = true;
            return Some((Err(shutdown_error()), st));
        }
        let b = if st.first {
            st.first = false;
            st.head.clone()
        } else {
            st.chunk.clone()
        };
        Some((Ok::<_, std::io::Error>(b), st))
    }))
}

fn respond(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut resp = Response::new(body);
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

fn ok_html(body: &Bytes) -> Response {
    respond(StatusCode::OK, HTML, Body::from(body.clone()))
}

fn not_found(shared: &Shared) -> Response {
    respond(
        StatusCode::NOT_FOUND,
        HTML,
        Body::from(shared.content.not_found.clone()),
    )
}

fn redirect(shared: &Shared, to: &str) -> Response {
    let url = shared.url(to);
    let mut resp = respond(
        StatusCode::MOVED_PERMANENTLY,
        HTML,
        Body::from(page("Moved", &format!("<p>Moved to {url}</p>\n"))),
    );
    if let Ok(v) = HeaderValue::from_str(&url) {
        resp.headers_mut().insert(LOCATION, v);
    }
    resp
}

/// `N` of `/{prefix}N` if N is a decimal number.
fn numbered(path: &str, prefix: &str) -> Option<u64> {
    let n = path.strip_prefix(prefix)?;
    if n.is_empty() || n.len() > 18 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

fn route(shared: &Shared, method: &Method, path: &str) -> Response {
    let c = shared.content;
    if method != Method::GET && method != Method::HEAD {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            HTML,
            Body::from(c.not_allowed.clone()),
        );
    }
    match path {
        "/" => ok_html(&c.index),
        "/drip" => respond(StatusCode::OK, HTML, drip_body(shared)),
        "/endless" => respond(StatusCode::OK, HTML, endless_body(shared)),
        "/gzip-bomb" => {
            let mut r = ok_html(&c.gzip_bomb);
            r.headers_mut()
                .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            r
        }
        "/loop/a" => redirect(shared, "/loop/b"),
        "/loop/b" => redirect(shared, "/loop/a"),
        "/loop/self" => redirect(shared, "/loop/self"),
        "/invalid-utf8" => ok_html(&c.invalid_utf8),
        "/lying-type" => ok_html(&c.lying_type),
        "/lying-type-2" => respond(
            StatusCode::OK,
            "image/png",
            Body::from(c.lying_type_2.clone()),
        ),
        "/many-links" => ok_html(&c.many_links),
        "/broken-html" => ok_html(&c.broken_html),
        _ => {
            if let Some(n) = numbered(path, "/ok/") {
                let body = page(
                    &format!("OK {n}"),
                    &format!("<h1>OK {n}</h1>\n<p>A small valid page.</p>\n"),
                );
                respond(StatusCode::OK, HTML, Body::from(body))
            } else {
                not_found(shared)
            }
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let at = Instant::now();
    let host = request_host(&req);
    let resp = route(&shared, req.method(), req.uri().path());
    if matches!(req.uri().path(), "/drip" | "/endless") && req.method() == Method::GET {
        shared.streams_started.fetch_add(1, Ordering::SeqCst);
    }
    shared.log().push(RequestRecord::of(
        &req,
        host,
        shared.port,
        resp.status(),
        at,
    ));
    resp
}

/// A running hostile site on loopback. Stops on [`HostileSite::shutdown`] or
/// when dropped; either ends every endless or dripping body at once.
pub struct HostileSite {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: Server,
}

impl std::fmt::Debug for HostileSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostileSite")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl HostileSite {
    /// Serves the hostile site on `127.0.0.1:0` (a free port), on the
    /// current tokio runtime. The first start in a process builds the
    /// bodies (the gzip bomb, the 100,000-link page) on a blocking thread;
    /// later starts reuse them.
    pub async fn start() -> std::io::Result<HostileSite> {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let addr = listener.local_addr()?;
        let content = tokio::task::spawn_blocking(content)
            .await
            .map_err(std::io::Error::other)?;
        let shared = Arc::new(Shared {
            port: addr.port(),
            content,
            active_streams: Arc::new(AtomicUsize::new(0)),
            streams_started: AtomicUsize::new(0),
            cancel: CancellationToken::new(),
            log: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let server = Server::spawn(listener, app);
        Ok(HostileSite {
            addr,
            shared,
            server,
        })
    }

    /// The address the server listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port of the server, part of every URL of the site.
    pub fn port(&self) -> u16 {
        self.addr.port()
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
        vec![self.shared.url("/")]
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log().clone()
    }

    /// Forgets the requests received so far.
    pub fn clear_requests(&self) {
        self.shared.log().clear();
    }

    /// Number of `/drip` and `/endless` bodies currently alive on the
    /// server. Drops back to 0 once clients disconnect (within about two
    /// [`DRIP_INTERVAL`]s for `/drip`, at once for `/endless`).
    pub fn active_streams(&self) -> usize {
        self.shared.active_streams.load(Ordering::SeqCst)
    }

    /// Number of `/drip` and `/endless` GET responses started so far.
    pub fn streams_started(&self) -> usize {
        self.shared.streams_started.load(Ordering::SeqCst)
    }

    /// The body served at `path` for the static pages (`/`, `/gzip-bomb`
    /// compressed, `/invalid-utf8`, `/lying-type`, `/lying-type-2`,
    /// `/many-links`, `/broken-html`), to inspect in tests.
    pub fn body(&self, path: &str) -> Option<&[u8]> {
        let c = self.shared.content;
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
        let u = |p: &str| self.shared.url(p);
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
        self.shared.cancel.cancel();
        self.server.shutdown().await;
    }
}

impl Drop for HostileSite {
    /// Best effort: ends the streaming bodies and signals the server to
    /// stop, without waiting.
    fn drop(&mut self) {
        self.shared.cancel.cancel();
        // The server, dropped next, is signalled to stop.
    }
}
