//! WARC output: every HTTP exchange of a crawl archived as WARC/1.1 `request` and `response`
//! records, one gzip member per record, in files that rotate by size.
//!
//! The HTTP protocol hands each exchange it made ([`Exchange`]: the request as sent, the status
//! line and headers as received, the body bytes as they came off the wire, still content-encoded)
//! to a [`WarcSink`]; a writer thread of its own ([`WarcWriter`]) turns it into records and appends
//! them to the current file, then answers the fetch: a fetch whose records could not be written is
//! given up and its URL stays due, so nothing is marked fetched without its records.
//!
//! Each file opens with a `warcinfo` record and is written as `<prefix>-<timestamp>-<serial>.warc.gz.open`,
//! renamed to `.warc.gz` once closed: when it has reached the maximum size (the next exchange
//! goes to a new file), and when the writer finishes at the end of a crawl.
//!
//! What the records hold, and where they differ from the bytes on the wire:
//!
//! - The response body is the bytes received, content encoding (gzip, br, deflate, zstd) kept;
//!   the parser gets the decoded content. A body cut at `http.content.limit` is recorded as far as
//!   it was read, with `WARC-Truncated: length`.
//! - HTTP/1.1 chunked transfer coding is removed by the HTTP stack before squall sees the body: the
//!   record holds the de-chunked body, and the `Transfer-Encoding` header is renamed
//!   `X-Crawler-Transfer-Encoding`, so that readers do not try to de-chunk it again.
//! - Header names are lower case, as the HTTP stack (hyper) normalizes them, in the order it
//!   keeps; the reason phrase is the standard one for the status code. HTTP/2 exchanges are written
//!   as HTTP/1.1 messages, as WARC readers expect.
//! - The request record holds the request line and the headers squall set (`Host`, `User-Agent`,
//!   `Accept`, `Accept-Encoding`, conditional headers); the HTTP stack may order them differently
//!   on the wire, and adds nothing to a plain HTTP/1.1 GET.

mod error;
mod exchange;
mod record;
mod settings;
mod sink;
mod writer;

pub use error::WarcError;
pub use exchange::Exchange;
pub use settings::WarcSettings;
pub use sink::{WarcReport, WarcSink, WarcWriter, start};
