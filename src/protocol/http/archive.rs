//! Archived fetches: the request as sent and the response as received, handed to the WARC
//! writer, while the parser gets the decoded body.
//!
//! An archiving client has reqwest's decompression turned off: it sends `Accept-Encoding` itself
//! and decodes the body itself ([`ContentDecoder`]), so that the record keeps the bytes the server
//! sent. See [`crate::warc`] for what the records hold.

use bytes::{Bytes, BytesMut};
use chrono::Utc;
use reqwest::header::{ACCEPT, CONTENT_ENCODING, HOST, HeaderMap, TRANSFER_ENCODING, USER_AGENT};
use reqwest::{Request, Response};

use url::Url;

use super::decode::{ACCEPT_ENCODING, ContentDecoder};
use crate::warc::{Exchange, WarcSink};

/// What an archived fetch received, for the HTTP protocol to turn into its answer.
pub(super) struct Received {
    /// The status code.
    pub status_code: u16,
    /// The headers as received.
    pub headers: HeaderMap,
    /// The URL answered, when redirects followed within the fetch led elsewhere.
    pub final_url: Option<Url>,
    /// The decoded body, at most the content limit.
    pub body: Bytes,
    /// The body was cut at the content limit.
    pub truncated: bool,
}

/// Why an archived fetch failed.
pub(super) enum WireError {
    /// The request or the body failed.
    Http(reqwest::Error),
    /// The body is not in the coding its `Content-Encoding` names.
    Decode(String),
    /// The exchange could not be archived.
    Archive(String),
}

/// How an archiving client fetches: its client, what it sends, and where exchanges go.
pub(super) struct Archived<'a> {
    /// The client, built without decompression.
    pub client: &'a reqwest::Client,
    /// The User-Agent, set on each request so that the record shows it.
    pub user_agent: &'a str,
    /// Decoded body bytes kept.
    pub content_limit: Option<usize>,
    /// The WARC writer.
    pub sink: &'a WarcSink,
}

impl Archived<'_> {
    /// Sends `request`, reads and decodes the answer, and archives the exchange; a fetch whose
    /// records could not be written fails with [`WireError::Archive`].
    pub(super) async fn fetch(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<Received, WireError> {
        let request = request
            .header(USER_AGENT, self.user_agent)
            .header(ACCEPT, "*/*")
            .header(reqwest::header::ACCEPT_ENCODING, ACCEPT_ENCODING)
            .build()
            .map_err(WireError::Http)?;
        let requested = request.url().clone();
        let request_bytes = request_head(&request);
        let date = Utc::now();
        let mut response = self
            .client
            .execute(request)
            .await
            .map_err(WireError::Http)?;
        let headers = response.headers().clone();
        let status_code = response.status().as_u16();
        let encoding = headers.get(CONTENT_ENCODING).and_then(|v| v.to_str().ok());
        // (asked before the body is read: afterwards it is what remains unread)
        let sent_length = response.content_length();
        let body = self.read_body(&mut response, encoding).await?;
        let exchange = Exchange {
            target_uri: response.url().to_string(),
            date,
            ip_address: response.remote_addr().map(|addr| addr.ip()),
            request: request_bytes,
            response_head: response_head(&response),
            truncated: body.wire_cut(sent_length),
            payload: body.wire,
        };
        self.sink
            .archive(exchange)
            .await
            .map_err(|error| WireError::Archive(error.to_string()))?;
        Ok(Received {
            status_code,
            final_url: (response.url() != &requested).then(|| response.url().clone()),
            headers,
            body: body.decoded,
            truncated: body.truncated,
        })
    }

    /// Reads the body: the bytes received, and their decoding up to the content limit.
    async fn read_body(
        &self,
        response: &mut Response,
        encoding: Option<&str>,
    ) -> Result<Body, WireError> {
        let undecodable = |error: std::io::Error| {
            let coding = encoding.unwrap_or("identity");
            WireError::Decode(format!("cannot decode the {coding} body: {error}"))
        };
        let mut decoder = ContentDecoder::for_encoding(encoding).map_err(undecodable)?;
        let limit = self.content_limit.unwrap_or(usize::MAX);
        let mut wire = BytesMut::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(WireError::Http)? {
            // Unencoded, the cut is exact; encoded, the chunk that crosses the limit is kept whole.
            let chunk = if decoder.is_identity() && wire.len() + chunk.len() > limit {
                truncated = true;
                chunk.slice(..limit - wire.len())
            } else {
                chunk
            };
            wire.extend_from_slice(&chunk);
            decoder.write(&chunk).map_err(undecodable)?;
            if truncated || decoder.decoded_len() > limit {
                truncated = true;
                break;
            }
        }
        let mut decoded = if truncated {
            decoder.partial()
        } else {
            decoder.finish(!wire.is_empty()).map_err(undecodable)?
        };
        if decoded.len() > limit {
            decoded.truncate(limit);
            truncated = true;
        }
        Ok(Body {
            wire: wire.freeze(),
            decoded: Bytes::from(decoded),
            truncated,
        })
    }
}

/// A body read for the archive.
struct Body {
    /// As received (content coding kept).
    wire: Bytes,
    /// Decoded, at most the content limit.
    decoded: Bytes,
    /// The decoded body was cut at the content limit.
    truncated: bool,
}

impl Body {
    /// Whether reading stopped before the end of the body as sent: the decoded body was cut, and
    /// the bytes received fall short of the `Content-Length` (or there was none to tell). A coded
    /// body read whole whose decoding was cut is not cut on the wire.
    fn wire_cut(&self, content_length: Option<u64>) -> bool {
        self.truncated && content_length.is_none_or(|length| (self.wire.len() as u64) < length)
    }
}

/// The request line and headers of a GET, with `Host` first as HTTP/1.1 clients send it.
fn request_head(request: &Request) -> Bytes {
    let url = request.url();
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let mut head = format!("{} {target} HTTP/1.1\r\n", request.method());
    if !request.headers().contains_key(HOST) {
        let host = url.host_str().unwrap_or_default();
        match url.port() {
            Some(port) => head.push_str(&format!("host: {host}:{port}\r\n")),
            None => head.push_str(&format!("host: {host}\r\n")),
        }
    }
    let mut bytes = head.into_bytes();
    write_headers(&mut bytes, request.headers());
    bytes.extend_from_slice(b"\r\n");
    Bytes::from(bytes)
}

/// The status line and headers as received, `Transfer-Encoding` renamed (the body is de-chunked).
fn response_head(response: &Response) -> Bytes {
    let status = response.status();
    let reason = status.canonical_reason().unwrap_or("");
    let mut bytes = format!("HTTP/1.1 {} {reason}\r\n", status.as_u16()).into_bytes();
    let mut headers = response.headers().clone();
    let chunked: Vec<_> = headers.get_all(TRANSFER_ENCODING).iter().cloned().collect();
    if !chunked.is_empty() {
        headers.remove(TRANSFER_ENCODING);
        for value in chunked {
            headers.append("x-crawler-transfer-encoding", value);
        }
    }
    write_headers(&mut bytes, &headers);
    bytes.extend_from_slice(b"\r\n");
    Bytes::from(bytes)
}

/// `name: value` lines, values as their raw bytes.
fn write_headers(out: &mut Vec<u8>, headers: &HeaderMap) {
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use axum::response::IntoResponse;

    use crate::message::{FetchFailure, FetchOutcome};
    use crate::model::Metadata;
    use crate::protocol::{HttpClient, HttpContext, HttpSettings};
    use crate::warc::WarcSettings;

    const PAGE: &[u8] = b"<html><body>a page sent gzip-coded</body></html>";

    /// Serves `PAGE` gzip-coded; its address, and the coded bytes.
    async fn gzip_server() -> (std::net::SocketAddr, Vec<u8>) {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(PAGE).expect("gzip");
        let coded = encoder.finish().expect("gzip");
        let served = coded.clone();
        let app = axum::Router::new().fallback(move || {
            let coded = coded.clone();
            async move { ([("content-encoding", "gzip")], coded).into_response() }
        });
        let addr = squall_testsite::serve_router(app)
            .await
            .expect("a loopback port");
        (addr, served)
    }

    #[tokio::test]
    async fn the_parser_gets_decoded_content_and_a_stopped_archive_abandons_the_fetch() {
        let (addr, coded) = gzip_server().await;
        let dir = tempfile::tempdir().expect("temp dir");
        let (sink, writer) = crate::warc::start(WarcSettings {
            dir: dir.path().to_path_buf(),
            ..WarcSettings::default()
        })
        .expect("writer");
        let config = HttpSettings::default();
        let client =
            HttpClient::archived(&config, &HttpContext::new(&config), sink).expect("client");
        let url = url::Url::parse(&format!("http://{addr}/page")).expect("url");
        let (record, outcome) = client.fetch(&url, &Metadata::new()).await;
        let FetchOutcome::Response(response) = outcome else {
            panic!("not fetched: {outcome:?}");
        };
        assert_eq!(response.body.as_ref(), PAGE, "decoded for the parser");
        assert_eq!(record.bytes, PAGE.len() as u64);
        let report = writer.finish().await.expect("finished");
        assert_eq!(report.records, 3, "warcinfo, request, response");
        let mut archived = Vec::new();
        let file = std::fs::File::open(&report.files[0]).expect("the WARC file");
        flate2::read::MultiGzDecoder::new(file)
            .read_to_end(&mut archived)
            .expect("gzip members");
        let holds = |bytes: &[u8]| archived.windows(bytes.len()).any(|w| w == bytes);
        assert!(
            holds(b"\r\ncontent-encoding: gzip\r\n"),
            "the header as received"
        );
        assert!(holds(&coded), "the archive keeps the coded bytes");
        let (record, outcome) = client.fetch(&url, &Metadata::new()).await;
        let FetchOutcome::Abandoned { cause, message } = outcome else {
            panic!("archived by a stopped writer: {outcome:?}");
        };
        assert_eq!(cause, FetchFailure::Archive);
        assert!(message.contains("WARC writer has stopped"), "{message}");
        assert!(record.error.is_some_and(|e| e.starts_with("archive")));
    }
}
