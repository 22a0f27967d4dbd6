//! WARC output read back by an independent reader: a few HTTP exchanges built from the input (a URL
//! — exchanges whose URL does not parse are left out —, a date, the server's address, the response
//! status, headers and body bytes, whether the body was cut), written by squall's WARC writer to
//! files that rotate at a fuzzed size, then read back with the `warc` crate (which inflates with
//! libflate, not the writer's flate2). Nothing may panic, and the round trip holds:
//!
//! - every file is a series of whole gzip members, one record each, and reads the same member by
//!   member and as one stream; no file is left open (`.open`), and files rotate at their size;
//! - the record count is the writer's report's: a `warcinfo` opening each file, then per exchange
//!   a `request` (when asked for) and a `response`;
//! - each record's `Content-Length` is its block's length, its block is what was written (the
//!   request as sent; the status line, headers and body bytes as received), its `WARC-Target-URI`
//!   the URL, its date the exchange's to the microsecond, its digests the block's and payload's
//!   SHA-1, and its links (`WARC-Concurrent-To`, `WARC-Warcinfo-ID`) name the right records;
//! - the writer's thread ends once the writer is finished.
#![no_main]

use std::collections::HashSet;
use std::io::Read;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use libfuzzer_sys::fuzz_target;
use sha1::{Digest, Sha1};
use squall::warc::{Exchange, WarcSettings};
use warc::{EmptyBody, RawRecordHeader, Record, RecordType, WarcHeader, WarcReader};

/// What the writer is given.
#[derive(Arbitrary, Debug)]
struct Input {
    /// Whether a request record precedes each response record.
    request_records: bool,
    /// The size at which a file is closed, in bytes; 0 for the default (1 GiB).
    max_file_size: u16,
    /// The exchanges, in the order they are archived (the first few).
    exchanges: Vec<Fetched>,
}

/// One HTTP exchange, as the HTTP protocol sees it.
#[derive(Arbitrary, Debug)]
struct Fetched {
    url: String,
    /// When it was sent: seconds (kept within the years 1970 to 9999, as WARC dates are written)
    /// and nanoseconds.
    secs: u64,
    nanos: u32,
    ip_address: Option<IpAddr>,
    /// The User-Agent header sent (left out when it is no header value).
    user_agent: Vec<u8>,
    /// The status code (exchanges with a code out of 100..=999 are left out).
    status: u16,
    /// The response headers (those that are no header name and value are left out).
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    truncated: bool,
}

/// The most exchanges archived from one input, and headers kept from one response.
const MAX_EXCHANGES: usize = 4;
const MAX_HEADERS: usize = 8;

/// 9999-12-31T23:59:59Z + 1 s.
const YEAR_10000: u64 = 253_402_300_800;

/// A directory of its own for the files each run writes (in memory where /dev/shm is, since the
/// writer syncs each file it closes).
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("squall-fuzz-warc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    })
}

/// The threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

/// The exchange `fetched` describes, and the URL it is for; `None` when its URL or status is not
/// one a fetch can have.
fn exchange(fetched: &Fetched) -> Option<Exchange> {
    let url = url::Url::parse(&fetched.url).ok()?;
    let status = http::StatusCode::from_u16(fetched.status).ok()?;
    let date = DateTime::<Utc>::from_timestamp(
        i64::try_from(fetched.secs % YEAR_10000).ok()?,
        fetched.nanos % 1_000_000_000,
    )?;

    // The request as the archive writes it: request line, Host, the headers squall sets.
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    let mut request = format!("GET {target} HTTP/1.1\r\n").into_bytes();
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => request.extend_from_slice(format!("host: {host}:{port}\r\n").as_bytes()),
        None => request.extend_from_slice(format!("host: {host}\r\n").as_bytes()),
    }
    if http::HeaderValue::from_bytes(&fetched.user_agent).is_ok() {
        request.extend_from_slice(b"user-agent: ");
        request.extend_from_slice(&fetched.user_agent);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"accept: */*\r\n\r\n");

    // The response head as received, header names lower case as the HTTP stack gives them.
    let reason = status.canonical_reason().unwrap_or("");
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", status.as_u16()).into_bytes();
    for (name, value) in fetched.headers.iter().take(MAX_HEADERS) {
        let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_bytes(value),
        ) else {
            continue;
        };
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");

    Some(Exchange {
        target_uri: url.to_string(),
        date,
        ip_address: fetched.ip_address,
        request: Bytes::from(request),
        response_head: Bytes::from(head),
        payload: Bytes::from(fetched.body.clone()),
        truncated: fetched.truncated,
    })
}

/// A record read back: its header fields, its block, and the length of the gzip member it came in.
struct ReadRecord {
    header: RawRecordHeader,
    block: Vec<u8>,
    member_len: usize,
}

impl ReadRecord {
    /// The value of field `name` as text; panics when the record lacks it.
    fn field(&self, name: WarcHeader) -> String {
        let value = self
            .header
            .headers
            .get(&name)
            .unwrap_or_else(|| panic!("no {name} field in {:?}", self.header));
        String::from_utf8(value.clone()).unwrap_or_else(|_| panic!("{name} is not UTF-8"))
    }

    fn has(&self, name: WarcHeader) -> bool {
        self.header.headers.contains_key(&name)
    }
}

/// `sha1:` and the base32 SHA-1 of `bytes`, as WARC digests are written.
fn sha1(bytes: &[u8]) -> String {
    format!(
        "sha1:{}",
        data_encoding::BASE32.encode(Sha1::digest(bytes).as_slice())
    )
}

/// The records of the WARC file `path`, read member by member (each gzip member on its own, with
/// flate2's single-member decoder, must hold one whole record) and checked against a read of the
/// whole file as one gzip stream by the `warc` crate.
fn read_file(path: &Path) -> Vec<ReadRecord> {
    let bytes = std::fs::read(path).expect("the WARC file reads");
    let mut rest: &[u8] = &bytes;
    let mut records = Vec::new();
    while !rest.is_empty() {
        let mut member = flate2::bufread::GzDecoder::new(rest);
        let mut text = Vec::new();
        member
            .read_to_end(&mut text)
            .expect("the file is whole gzip members");
        let left = member.into_inner();
        let member_len = rest.len() - left.len();
        assert!(member_len > 0, "an empty gzip member");
        rest = left;
        let mut read: Vec<_> = WarcReader::new(text.as_slice())
            .iter_raw_records()
            .collect();
        assert_eq!(read.len(), 1, "a gzip member holds one record");
        let (header, block) = read.pop().and_then(Result::ok).unwrap_or_else(|| {
            panic!(
                "a record that does not read: {:?}",
                String::from_utf8_lossy(&text)
            )
        });
        records.push(ReadRecord {
            header,
            block,
            member_len,
        });
    }
    let stream: Vec<_> = WarcReader::from_path_gzip(path)
        .expect("the file opens as gzip")
        .iter_raw_records()
        .map(|record| record.expect("a record read from the gzip stream"))
        .collect();
    assert_eq!(
        stream.len(),
        records.len(),
        "records in the stream and in members"
    );
    for ((header, block), record) in stream.iter().zip(&records) {
        assert_eq!(header, &record.header);
        assert_eq!(block, &record.block);
    }
    records
}

/// Checks the fields every record has: version, length, type, ID (unique), date.
fn check_common(
    record: &ReadRecord,
    kind: RecordType,
    ids: &mut HashSet<String>,
) -> Record<EmptyBody> {
    assert_eq!(record.header.version, "1.1");
    assert_eq!(
        record.field(WarcHeader::ContentLength),
        record.block.len().to_string(),
        "Content-Length is the block's length"
    );
    let parsed = Record::<EmptyBody>::try_from(record.header.clone())
        .unwrap_or_else(|error| panic!("not a valid record ({error}): {:?}", record.header));
    assert_eq!(parsed.warc_type(), &kind);
    let id = parsed.warc_id().to_string();
    assert!(id.starts_with("<urn:uuid:") && id.ends_with('>'), "{id}");
    assert!(ids.insert(id.clone()), "record ID {id} used twice");
    assert_eq!(
        record.field(WarcHeader::BlockDigest),
        sha1(&record.block),
        "WARC-Block-Digest"
    );
    parsed
}

/// Checks the fields both records of an exchange have.
fn check_exchange_fields(
    record: &ReadRecord,
    parsed: &Record<EmptyBody>,
    exchange: &Exchange,
    warcinfo_id: &str,
) {
    assert_eq!(record.field(WarcHeader::TargetURI), exchange.target_uri);
    assert_eq!(record.field(WarcHeader::WarcInfoID), warcinfo_id);
    let written = exchange.date.timestamp_micros();
    assert_eq!(
        parsed.date().timestamp_micros(),
        written,
        "WARC-Date {} for {}",
        parsed.date(),
        exchange.date
    );
    assert_eq!(parsed.date().timestamp_subsec_nanos() % 1000, 0);
    match exchange.ip_address {
        Some(ip) => assert_eq!(
            record.field(WarcHeader::IPAddress).parse::<IpAddr>().ok(),
            Some(ip)
        ),
        None => assert!(!record.has(WarcHeader::IPAddress)),
    }
}

fuzz_target!(|input: Input| {
    let exchanges: Vec<Exchange> = input
        .exchanges
        .iter()
        .take(MAX_EXCHANGES)
        .filter_map(exchange)
        .collect();
    if exchanges.is_empty() {
        return;
    }
    let dir = dir();
    let defaults = WarcSettings::default();
    let max_file_size = match input.max_file_size {
        0 => defaults.max_file_size,
        size => u64::from(size),
    };
    let settings = WarcSettings {
        enabled: true,
        dir: dir.clone(),
        max_file_size,
        request_records: input.request_records,
        ..defaults
    };
    let threads_before = threads();
    let (sink, writer) = squall::warc::start(settings).expect("the writer starts");
    for exchange in &exchanges {
        futures::executor::block_on(sink.archive(exchange.clone())).expect("archived");
    }
    drop(sink);
    let report = futures::executor::block_on(writer.finish()).expect("the writer finishes");
    assert_eq!(report.failed, 0);
    // The writer's thread ends once finished: waited for, so that no allocation of its own (its
    // thread-locals) is still live when libFuzzer looks for leaks after the run.
    let waited = std::time::Instant::now();
    while threads() > threads_before && waited.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_micros(20));
    }
    assert!(
        threads() <= threads_before,
        "the writer's thread runs on after finishing"
    );

    let mut on_disk: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the directory lists")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    on_disk.sort();
    let mut reported = report.files.clone();
    reported.sort();
    assert_eq!(
        on_disk, reported,
        "the files on disk are the files reported, all closed"
    );

    let per_exchange = if input.request_records { 2 } else { 1 };
    let mut ids = HashSet::new();
    let mut remaining = exchanges.iter();
    let mut records_read = 0u64;
    for (index, path) in report.files.iter().enumerate() {
        let records = read_file(path);
        records_read += records.len() as u64;
        assert!(records.len() > 1, "a file without an exchange: {path:?}");
        assert_eq!(
            (records.len() - 1) % per_exchange,
            0,
            "{path:?} holds a partial exchange"
        );

        // The warcinfo record that opens the file.
        let info = &records[0];
        let parsed = check_common(info, RecordType::WarcInfo, &mut ids);
        let warcinfo_id = parsed.warc_id().to_string();
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .expect("a file name");
        assert_eq!(info.field(WarcHeader::Filename), name);
        assert!(name.ends_with(".warc.gz"), "{name}");
        assert_eq!(
            info.field(WarcHeader::ContentType),
            "application/warc-fields"
        );

        // Each exchange, in order: the request record, then the response record.
        // The file's length after each exchange.
        let mut length = info.member_len;
        let mut lengths = Vec::new();
        for pair in records[1..].chunks(per_exchange) {
            let exchange = remaining
                .next()
                .expect("no more exchanges than were written");
            let response = &pair[per_exchange - 1];
            let parsed_response = check_common(response, RecordType::Response, &mut ids);
            check_exchange_fields(response, &parsed_response, exchange, &warcinfo_id);
            let mut block = exchange.response_head.to_vec();
            block.extend_from_slice(&exchange.payload);
            assert!(
                response.block == block,
                "the response block differs from what was written"
            );
            assert_eq!(
                response.field(WarcHeader::ContentType),
                "application/http;msgtype=response"
            );
            assert_eq!(
                response.field(WarcHeader::PayloadDigest),
                sha1(&exchange.payload)
            );
            if exchange.truncated {
                assert_eq!(response.field(WarcHeader::Truncated), "length");
            } else {
                assert!(!response.has(WarcHeader::Truncated));
            }
            if input.request_records {
                let request = &pair[0];
                let parsed_request = check_common(request, RecordType::Request, &mut ids);
                check_exchange_fields(request, &parsed_request, exchange, &warcinfo_id);
                assert!(
                    request.block == exchange.request.as_ref(),
                    "the request block differs"
                );
                assert_eq!(
                    request.field(WarcHeader::ContentType),
                    "application/http;msgtype=request"
                );
                assert_eq!(
                    request.field(WarcHeader::ConcurrentTo),
                    parsed_response.warc_id()
                );
                assert_eq!(
                    response.field(WarcHeader::ConcurrentTo),
                    parsed_request.warc_id()
                );
            } else {
                assert!(!response.has(WarcHeader::ConcurrentTo));
            }
            length += pair.iter().map(|record| record.member_len).sum::<usize>();
            lengths.push(length as u64);
        }
        // A file is closed after the exchange that brings it to the maximum size, not before
        // (the last one may stay under it: the writer finished).
        let (last, earlier) = lengths.split_last().expect("an exchange");
        assert!(
            earlier.iter().all(|&length| length < max_file_size),
            "{path:?} went on past {max_file_size} bytes: {lengths:?}"
        );
        if index + 1 < report.files.len() {
            assert!(
                *last >= max_file_size,
                "{path:?} was closed at {last} bytes, under {max_file_size}"
            );
        }
    }
    assert!(remaining.next().is_none(), "an exchange was not archived");
    assert_eq!(
        records_read, report.records,
        "records read and records reported"
    );
    assert_eq!(
        report.records,
        report.files.len() as u64 + (exchanges.len() * per_exchange) as u64
    );
    for path in &report.files {
        let _ = std::fs::remove_file(path);
    }
});
