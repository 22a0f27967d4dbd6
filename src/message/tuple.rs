//! What travels between the stages of a topology.

use bytes::Bytes;
use chrono::{DateTime, Utc};

use super::AckHandle;
use crate::frontier::{QueueHints, QueueReport};
use crate::model::{CrawlUrl, Status};

/// A URL emitted by the spout, on its way to the fetcher.
#[derive(Debug)]
pub struct Tuple {
    /// The URL and its metadata.
    pub url: CrawlUrl,
    /// Its partition key: the fetcher's politeness queue.
    pub key: String,
    /// What the frontier says about the queue (shared crawl delay, lease).
    pub hints: QueueHints,
    /// Reports the outcome back to the spout.
    pub ack: AckHandle,
}

/// One fetch attempt, as recorded for logs and metrics.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FetchRecord {
    /// When the request started.
    pub started: DateTime<Utc>,
    /// When the body was complete (or the attempt failed).
    pub finished: DateTime<Utc>,
    /// The HTTP status code, when the server answered.
    pub http_status: Option<u16>,
    /// Why the attempt failed, when it did.
    pub error: Option<String>,
    /// Bytes of body received (after decompression).
    pub bytes: u64,
    /// What fetched it: `http`, `browser`, or the name a [`Protocol`](crate::protocol::Protocol) of
    /// your own gives.
    pub protocol: &'static str,
}

/// What a fetch produced.
#[derive(Debug, Clone)]
pub enum FetchOutcome {
    /// The server answered.
    Response(Box<FetchedResponse>),
    /// No usable answer, or the URL may not be fetched: the status is decided already.
    Failed {
        /// FETCH_ERROR for a failure that may heal, ERROR for a refusal (robots.txt, ...).
        status: Status,
        /// What kind of failure it was; stored as the URL's `error.cause`.
        cause: FetchFailure,
        /// A human-readable message.
        message: String,
    },
    /// The attempt was given up for a reason that is not the URL's (the browser rendering it
    /// crashed or was restarted): the fetcher fails the URL back to the spout unfetched, it stays
    /// due, and no status is written.
    Abandoned {
        /// What gave up; used as the `error.cause` if the URL reaches the parser anyway.
        cause: FetchFailure,
        /// A human-readable message.
        message: String,
    },
}

/// Why a fetch produced no usable answer, or was not made.
///
/// Its [`as_str`](FetchFailure::as_str) is what the status index records as `error.cause`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FetchFailure {
    /// The server did not answer in time.
    Timeout,
    /// No connection could be made (refused, reset, DNS, TLS).
    Connection,
    /// A redirect could not be followed (too many hops, or a refused target).
    Redirect,
    /// The body could not be read or decoded.
    Body,
    /// Any other failure of the HTTP exchange.
    Http,
    /// robots.txt forbids the URL, or could not be read (everything is refused meanwhile).
    RobotsTxt,
    /// robots.txt asks for a crawl delay above `fetcher.max.crawl.delay`.
    CrawlDelay,
    /// The host resolves to a private address and `http.refuse.private.addresses` is on.
    PrivateAddress,
    /// No protocol fetches URLs of this scheme.
    UnsupportedScheme,
    /// The headless browser failed to render the page (crashed, or the page did not settle in time).
    Browser,
    /// The exchange could not be written to the WARC archive (the URL stays due).
    Archive,
}

impl FetchFailure {
    /// The cause as recorded in metadata (`error.cause`) and in the fetch log.
    pub fn as_str(self) -> &'static str {
        match self {
            FetchFailure::Timeout => "timeout",
            FetchFailure::Connection => "connection",
            FetchFailure::Redirect => "redirect",
            FetchFailure::Body => "body",
            FetchFailure::Http => "http",
            FetchFailure::RobotsTxt => "robots.txt",
            FetchFailure::CrawlDelay => "crawl_delay",
            FetchFailure::PrivateAddress => "private_address",
            FetchFailure::UnsupportedScheme => "unsupported_scheme",
            FetchFailure::Browser => "browser",
            FetchFailure::Archive => "archive",
        }
    }
}

impl std::fmt::Display for FetchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A server's answer.
#[derive(Debug, Clone)]
pub struct FetchedResponse {
    /// HTTP status code.
    pub status_code: u16,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The `Location` header, for redirects.
    pub location: Option<String>,
    /// The `X-Robots-Tag` header values.
    pub robots_tag: Vec<String>,
    /// The `ETag` header.
    pub etag: Option<String>,
    /// The `Last-Modified` header.
    pub last_modified: Option<String>,
    /// How long the server asked us to wait (`Retry-After`, on 429 and 503).
    pub retry_after: Option<std::time::Duration>,
    /// Where redirects that were followed ended, when they were.
    pub final_url: Option<url::Url>,
    /// The body, possibly truncated.
    pub body: Bytes,
    /// Whether the body was cut at the content limit.
    pub truncated: bool,
}

/// A fetched URL, on its way to the parser.
#[derive(Debug)]
pub struct FetchedPage {
    /// The URL as emitted, with its ack handle.
    pub tuple: Tuple,
    /// The attempt, for the fetch log; `None` when no request was made (robots.txt refused it).
    pub record: Option<FetchRecord>,
    /// What it produced.
    pub outcome: FetchOutcome,
    /// Sitemaps announced by the site's robots.txt, when it was read for this fetch.
    pub sitemaps: Vec<url::Url>,
    /// What the fetch taught about the URL's queue (Retry-After hold, robots.txt crawl delay).
    pub queue: QueueReport,
}

/// A URL found on a page (or a redirect target), ready to be written as DISCOVERED.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlink {
    /// The URL, normalized and filtered, with the metadata it inherits.
    pub url: CrawlUrl,
    /// Its partition key.
    pub key: String,
}

/// A processed URL, on its way to the status updater.
#[derive(Debug)]
pub struct StatusUpdate {
    /// The URL with its metadata as updated by the fetcher and parser.
    pub url: CrawlUrl,
    /// Its partition key.
    pub key: String,
    /// Its new status.
    pub status: Status,
    /// URLs to write as DISCOVERED.
    pub outlinks: Vec<Outlink>,
    /// The fetch attempt, if a fetch happened.
    pub fetch: Option<FetchRecord>,
    /// What the fetch taught about the URL's queue, passed on to the frontier.
    pub queue: QueueReport,
    /// What a parsed HTML page says, for the content indexer; `None` for anything else.
    pub content: Option<PageContent>,
    /// Acked once the status and every outlink are written (and the page's content, when it is
    /// indexed).
    pub ack: AckHandle,
}

/// What the parser read from an HTML page, carried to the content indexer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageContent {
    /// The `<title>` text.
    pub title: Option<String>,
    /// The visible text, when it was extracted (`parser.text.max.bytes`, or an indexer is on).
    pub text: Option<String>,
}
