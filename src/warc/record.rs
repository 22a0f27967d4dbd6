//! WARC/1.1 records, each compressed as a gzip member of its own.

use std::io::Write;

use chrono::{DateTime, Utc};
use flate2::Compression;
use flate2::write::GzEncoder;
use sha1::{Digest, Sha1};

use super::exchange::Exchange;

/// Ends the header block of a record, and the record itself.
const CRLF: &[u8] = b"\r\n";

/// A new `<urn:uuid:...>` record ID.
pub(super) fn record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// `sha1:` and the base32 SHA-1 of `parts`, one after the other.
pub(super) fn sha1_digest(parts: &[&[u8]]) -> String {
    let mut hasher = Sha1::new();
    for part in parts {
        hasher.update(part);
    }
    format!(
        "sha1:{}",
        data_encoding::BASE32.encode(hasher.finalize().as_slice())
    )
}

/// The WARC-Date form: UTC, microseconds (WARC/1.1 allows fractions of a second).
pub(super) fn warc_date(date: &DateTime<Utc>) -> String {
    date.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// One record: its named fields (WARC-Type first) and its block, in parts.
pub(super) struct Record<'a> {
    fields: Vec<(&'static str, String)>,
    block: Vec<&'a [u8]>,
}

impl<'a> Record<'a> {
    /// A record of `kind` with `id`, dated `date`, whose block is `block` (in parts).
    pub(super) fn new(kind: &str, id: &str, date: &DateTime<Utc>, block: Vec<&'a [u8]>) -> Self {
        let fields = vec![
            ("WARC-Type", kind.to_string()),
            ("WARC-Record-ID", id.to_string()),
            ("WARC-Date", warc_date(date)),
        ];
        Record { fields, block }
    }

    /// Adds a named field.
    pub(super) fn field(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.fields.push((name, value.into()));
        self
    }

    /// Adds `WARC-Block-Digest`.
    pub(super) fn with_block_digest(self) -> Self {
        let digest = sha1_digest(&self.block);
        self.field("WARC-Block-Digest", digest)
    }

    /// The record as one gzip member: version line, fields, `Content-Length`, the block, and
    /// the two line ends that close a record.
    pub(super) fn gzip_member(&self) -> std::io::Result<Vec<u8>> {
        let length: usize = self.block.iter().map(|part| part.len()).sum();
        let mut head = String::from("WARC/1.1\r\n");
        for (name, value) in &self.fields {
            head.push_str(name);
            head.push_str(": ");
            head.push_str(value);
            head.push_str("\r\n");
        }
        head.push_str(&format!("Content-Length: {length}\r\n\r\n"));
        let mut encoder =
            GzEncoder::new(Vec::with_capacity(length / 2 + 512), Compression::default());
        encoder.write_all(head.as_bytes())?;
        for part in &self.block {
            encoder.write_all(part)?;
        }
        encoder.write_all(CRLF)?;
        encoder.write_all(CRLF)?;
        encoder.finish()
    }
}

/// The `warcinfo` record that opens the file `filename`.
pub(super) fn warcinfo(
    id: &str,
    filename: &str,
    info: &[(String, String)],
) -> std::io::Result<Vec<u8>> {
    let mut fields = String::new();
    for (name, value) in info {
        fields.push_str(&format!("{name}: {value}\r\n"));
    }
    fields.push_str("format: WARC File Format 1.1\r\n");
    fields.push_str(
        "conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
    );
    Record::new("warcinfo", id, &Utc::now(), vec![fields.as_bytes()])
        .field("WARC-Filename", filename)
        .field("Content-Type", "application/warc-fields")
        .with_block_digest()
        .gzip_member()
}

/// The gzip members of an exchange: its `request` record (when `with_request`), then its
/// `response` record, linked to each other by `WARC-Concurrent-To` and to the file's `warcinfo`.
/// Secrets are not archived: the request's credential headers (`Authorization`,
/// `Proxy-Authorization`, `Cookie`) are masked, and so is a password in the target URI
/// ([`crate::redact`]); the record's `Content-Length` and digest are those of what is written.
pub(super) fn exchange_members(
    exchange: &Exchange,
    warcinfo_id: &str,
    with_request: bool,
) -> std::io::Result<Vec<Vec<u8>>> {
    let response_id = record_id();
    let request_id = record_id();
    let mut members = Vec::with_capacity(2);
    if with_request {
        let head = crate::redact::http_head(&exchange.request);
        let request = common(
            Record::new("request", &request_id, &exchange.date, vec![&head]),
            exchange,
            warcinfo_id,
        )
        .field("WARC-Concurrent-To", response_id.clone())
        .field("Content-Type", "application/http;msgtype=request")
        .with_block_digest();
        members.push(request.gzip_member()?);
    }
    let block = vec![exchange.response_head.as_ref(), exchange.payload.as_ref()];
    let mut response = common(
        Record::new("response", &response_id, &exchange.date, block),
        exchange,
        warcinfo_id,
    );
    if with_request {
        response = response.field("WARC-Concurrent-To", request_id);
    }
    response = response
        .field("Content-Type", "application/http;msgtype=response")
        .with_block_digest()
        .field("WARC-Payload-Digest", sha1_digest(&[&exchange.payload]));
    if exchange.truncated {
        response = response.field("WARC-Truncated", "length");
    }
    members.push(response.gzip_member()?);
    Ok(members)
}

/// The fields both records of an exchange have.
fn common<'a>(record: Record<'a>, exchange: &Exchange, warcinfo_id: &str) -> Record<'a> {
    let record = record
        .field(
            "WARC-Target-URI",
            crate::redact::url_text(&exchange.target_uri).into_owned(),
        )
        .field("WARC-Warcinfo-ID", warcinfo_id);
    match exchange.ip_address {
        Some(ip) => record.field("WARC-IP-Address", ip.to_string()),
        None => record,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn exchange() -> Exchange {
        Exchange {
            target_uri: "http://a.test/page".to_string(),
            date: Utc::now(),
            ip_address: Some(std::net::IpAddr::from([127, 0, 0, 1])),
            request: bytes::Bytes::from_static(b"GET /page HTTP/1.1\r\nhost: a.test\r\n\r\n"),
            response_head: bytes::Bytes::from_static(
                b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n",
            ),
            payload: bytes::Bytes::from_static(b"hello"),
            truncated: true,
        }
    }

    fn gunzip(member: &[u8]) -> String {
        let mut text = String::new();
        flate2::read::GzDecoder::new(member)
            .read_to_string(&mut text)
            .expect("one gzip member");
        text
    }

    #[test]
    fn an_exchange_is_a_request_and_a_response_linked_to_each_other() {
        let members = exchange_members(&exchange(), "<urn:uuid:info>", true).expect("encoded");
        assert_eq!(members.len(), 2);
        let request = gunzip(&members[0]);
        let response = gunzip(&members[1]);
        assert!(
            request.starts_with("WARC/1.1\r\nWARC-Type: request\r\n"),
            "{request}"
        );
        assert!(
            response.contains("WARC-Truncated: length\r\n"),
            "{response}"
        );
        assert!(
            response.contains("WARC-IP-Address: 127.0.0.1\r\n"),
            "{response}"
        );
        let id = |text: &str, name: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(name).map(str::to_string))
                .expect("field")
        };
        assert_eq!(
            id(&request, "WARC-Concurrent-To: "),
            id(&response, "WARC-Record-ID: ")
        );
        assert_eq!(
            id(&response, "WARC-Concurrent-To: "),
            id(&request, "WARC-Record-ID: ")
        );
        let block = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
        assert!(response.contains(&format!("Content-Length: {}\r\n", block.len())));
        assert!(
            response.ends_with(&format!("\r\n\r\n{block}\r\n\r\n")),
            "{response}"
        );
        assert_eq!(
            id(&response, "WARC-Payload-Digest: "),
            sha1_digest(&[b"hello"])
        );
    }

    #[test]
    fn digests_are_base32_sha1() {
        // SHA-1 of the empty string, da39a3ee..., in base32.
        assert_eq!(sha1_digest(&[]), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(sha1_digest(&[b"ab", b"c"]), sha1_digest(&[b"abc"]));
    }
}
