//! WARC output, end to end: the crawl binary crawls a loopback site with `--warc-dir`, and every
//! record it wrote is read back by an independent reader, Python's `warcio` (`scripts/warcio-check`:
//! `warcio check` verifies the digests, then each record is dumped as JSON), and compared with the
//! crawl's fetch log and with the bytes the site served: a gzip-coded page (kept coded in the
//! archive, decoded for the parser), pages longer than the content limit (cut, `WARC-Truncated`), a
//! chunked page, a redirect, a 404 and a binary file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use axum::body::Body;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use dump::{bytes_of, field, fields_of};
use serde_json::Value;

use crate::support;
use support::binary::crawl_binary;

/// Body bytes kept per page in this crawl (`http.content.limit`).
const CONTENT_LIMIT: usize = 2000;

/// The host name the site is crawled under.
const HOST: &str = "warc.test";

/// What the site serves at a path: the bytes sent, and their decoding (equal when not coded).
#[derive(Clone)]
struct Served {
    status: StatusCode,
    headers: Vec<(&'static str, String)>,
    wire: Vec<u8>,
    decoded: Vec<u8>,
    /// Sent without a length, in chunks.
    chunked: bool,
}

impl Served {
    fn page(status: StatusCode, content_type: &str, body: Vec<u8>) -> Self {
        Served {
            status,
            headers: vec![("content-type", content_type.to_string())],
            wire: body.clone(),
            decoded: body,
            chunked: false,
        }
    }

    fn gzip(content: Vec<u8>) -> Self {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&content).expect("gzip");
        let mut served = Served::page(StatusCode::OK, "text/html", encoder.finish().expect("gzip"));
        served
            .headers
            .push(("content-encoding", "gzip".to_string()));
        served.decoded = content;
        served
    }

    fn response(&self) -> Response {
        let mut builder = Response::builder().status(self.status);
        for (name, value) in &self.headers {
            builder = builder.header(*name, value);
        }
        let body = if self.chunked {
            let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                self.wire.chunks(100).map(|c| Ok(c.to_vec())).collect();
            Body::from_stream(futures::stream::iter(chunks))
        } else {
            Body::from(self.wire.clone())
        };
        builder.body(body).expect("response")
    }
}

/// Text that gzip cannot shrink much, so that coded pages span several reads.
fn noisy_text(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            b"abcdefghijklmnopqrstuvwxyz <>/"[(state >> 59) as usize % 30]
        })
        .collect()
}

/// The site, by path.
fn site() -> BTreeMap<&'static str, Served> {
    let html = |body: &str| Served::page(StatusCode::OK, "text/html", body.as_bytes().to_vec());
    let mut pages = BTreeMap::new();
    pages.insert(
        "/",
        html(
            "<html><body><a href='/gzip'>g</a> <a href='/long'>l</a> <a href='/long-gzip'>lg</a> \
             <a href='/chunked'>c</a> <a href='/redirect'>r</a> <a href='/missing'>m</a> \
             <a href='/image.png'>i</a></body></html>",
        ),
    );
    pages.insert(
        "/gzip",
        Served::gzip(
            b"<html><body><a href='/from-gzip'>only in the coded page</a></body></html>".to_vec(),
        ),
    );
    pages.insert(
        "/from-gzip",
        html("<html><body>found in a gzip page</body></html>"),
    );
    let mut long = b"<html><body>".to_vec();
    long.extend(noisy_text(3 * CONTENT_LIMIT, 1));
    pages.insert("/long", Served::page(StatusCode::OK, "text/html", long));
    pages.insert(
        "/long-gzip",
        Served::gzip(noisy_text(40 * CONTENT_LIMIT, 2)),
    );
    let mut chunked = html("<html><body>sent in chunks, with no length</body></html>");
    chunked.wire = noisy_text(1500, 3);
    chunked.decoded = chunked.wire.clone();
    chunked.chunked = true;
    pages.insert("/chunked", chunked);
    let mut redirect = Served::page(StatusCode::MOVED_PERMANENTLY, "text/plain", Vec::new());
    redirect.headers.push(("location", "/target".to_string()));
    pages.insert("/redirect", redirect);
    pages.insert("/target", html("<html><body>redirected here</body></html>"));
    pages.insert(
        "/image.png",
        Served::page(
            StatusCode::OK,
            "image/png",
            (0..=255u8).cycle().take(700).collect(),
        ),
    );
    pages
}

/// Serves `pages` on loopback; any other path is a 404 with a short body.
async fn serve(pages: BTreeMap<&'static str, Served>) -> std::net::SocketAddr {
    let app = axum::Router::new().fallback(move |uri: Uri| {
        let page = pages.get(uri.path()).cloned();
        async move {
            match page {
                Some(page) => page.response(),
                None => (StatusCode::NOT_FOUND, "no such page").into_response(),
            }
        }
    });
    squall_testsite::serve_router(app)
        .await
        .expect("a loopback port")
}

/// Runs the crawl binary over the site with WARC output into `warc`; the fetch log's entries.
fn crawl(addr: std::net::SocketAddr, dir: &Path, warc: &Path) -> Vec<Value> {
    let fetch_log = dir.join("fetch.jsonl");
    let sets = [
        "http.agent.name=squall-warc-test".to_string(),
        "fetcher.server.delay=0.02".to_string(),
        "spout.min.delay.queries=50".to_string(),
        format!("http.content.limit={CONTENT_LIMIT}"),
        // Small files, so that the crawl rotates through several.
        "warc.max.file.size=3000".to_string(),
        "warc.prefix=test".to_string(),
    ];
    let mut command = Command::new(crawl_binary());
    command
        .arg("--frontier-path")
        .arg(dir.join("frontier"))
        .arg("--fetch-log")
        .arg(&fetch_log)
        .arg("--warc-dir")
        .arg(warc)
        .arg("--resolve")
        .arg(format!("{HOST}:{}", addr.ip()))
        .arg("--until-idle")
        .arg(format!("http://{HOST}:{}/", addr.port()));
    for set in sets {
        command.arg("--set").arg(set);
    }
    let output = command.output().expect("run the crawl binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the crawl failed: {stderr}");
    std::fs::read_to_string(&fetch_log)
        .expect("fetch log")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The files of the WARC directory, sorted.
fn warc_files(warc: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(warc)
        .expect("the WARC directory")
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    files
}

/// What warcio reads from `files` (`scripts/warcio-check`), after `warcio check` passed.
fn read_with_warcio(files: &[PathBuf]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/warcio-check");
    let output = Command::new(script)
        .args(files)
        .output()
        .expect("run scripts/warcio-check");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "warcio rejected the files: {stderr}"
    );
    serde_json::from_slice(&output.stdout).expect("warcio's dump is JSON")
}

/// Reading warcio's JSON dump.
mod dump {
    use serde_json::Value;

    /// The value of WARC field `name` (case-insensitive) in a `[[name, value], ...]` list.
    pub fn field<'a>(list: &'a Value, name: &str) -> Option<&'a str> {
        fields_of(list, name).into_iter().next()
    }

    /// Every value of field `name`.
    pub fn fields_of<'a>(list: &'a Value, name: &str) -> Vec<&'a str> {
        list.as_array()
            .map(|pairs| {
                pairs
                    .iter()
                    .filter(|pair| {
                        pair[0]
                            .as_str()
                            .is_some_and(|n| n.eq_ignore_ascii_case(name))
                    })
                    .filter_map(|pair| pair[1].as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The bytes of a hex string.
    pub fn bytes_of(value: &Value) -> Option<Vec<u8>> {
        let text = value.as_str()?.as_bytes();
        text.chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
            .collect()
    }
}

/// A response record and its request record, as warcio read them.
struct Pair<'a> {
    response: &'a Value,
    request: &'a Value,
}

/// Checks every file: closed under its final name, one gzip member per record, a `warcinfo`
/// first, every digest verified. Returns the response records with their request records, by
/// target URI.
fn check_files<'a>(dump: &'a Value, problems: &mut Vec<String>) -> BTreeMap<String, Pair<'a>> {
    let files = dump["files"].as_array().expect("files");
    let mut by_id = BTreeMap::new();
    let mut responses = Vec::new();
    for file in files {
        let path = file["path"].as_str().unwrap_or_default();
        if !path.ends_with(".warc.gz") {
            problems.push(format!("{path}: not closed under its final name"));
        }
        let records = file["records"].as_array().expect("records");
        if file["gzip_members"].as_u64() != Some(records.len() as u64) {
            problems.push(format!(
                "{path}: {} gzip members for {} records",
                file["gzip_members"],
                records.len()
            ));
        }
        if records.first().map(|r| r["type"].as_str()) != Some(Some("warcinfo")) {
            problems.push(format!("{path}: does not open with a warcinfo record"));
        }
        for record in records {
            let fields = &record["fields"];
            if record["digest_passed"] != Value::Bool(true)
                || record["digest_problems"] != serde_json::json!([])
            {
                problems.push(format!("{path}: digests not verified: {record}"));
            }
            if field(fields, "WARC-Type") != record["type"].as_str() {
                problems.push(format!("{path}: WARC-Type differs from the record type"));
            }
            by_id.insert(
                field(fields, "WARC-Record-ID")
                    .unwrap_or_default()
                    .to_string(),
                record,
            );
            if record["type"] == "response" {
                responses.push(record);
            }
        }
    }
    let mut pairs = BTreeMap::new();
    for response in responses {
        let fields = &response["fields"];
        let uri = field(fields, "WARC-Target-URI")
            .unwrap_or_default()
            .to_string();
        let request = field(fields, "WARC-Concurrent-To").and_then(|id| by_id.get(id).copied());
        let Some(request) = request else {
            problems.push(format!("{uri}: the response names no request record"));
            continue;
        };
        if field(&request["fields"], "WARC-Concurrent-To") != field(fields, "WARC-Record-ID") {
            problems.push(format!(
                "{uri}: the request record does not point back to its response"
            ));
        }
        if field(&request["fields"], "WARC-Target-URI") != Some(uri.as_str()) {
            problems.push(format!("{uri}: the request record names another URI"));
        }
        if pairs
            .insert(uri.clone(), Pair { response, request })
            .is_some()
        {
            problems.push(format!("{uri}: archived twice"));
        }
    }
    pairs
}

/// Checks one response record against the fetch log's entry and what the site served.
fn check_pair(
    uri: &str,
    pair: &Pair<'_>,
    logged: &Value,
    served: &Served,
    problems: &mut Vec<String>,
) {
    let mut problem = |what: String| problems.push(format!("{uri}: {what}"));
    let response = pair.response;
    let fields = &response["fields"];
    let status_line = response["status_line"].as_str().unwrap_or_default();
    let expected_line = format!("HTTP/1.1 {}", served.status);
    if status_line != expected_line
        || logged["http_status"].as_u64() != Some(served.status.as_u16().into())
    {
        problem(format!(
            "status line {status_line:?}, logged {}, served {expected_line:?}",
            logged["http_status"]
        ));
    }
    let payload = bytes_of(&response["payload"]).unwrap_or_default();
    let decoded = bytes_of(&response["decoded"]).unwrap_or_default();
    let cut = served.decoded.len() > CONTENT_LIMIT;
    let truncated = field(fields, "WARC-Truncated");
    if !served.wire.starts_with(&payload) || (!cut && payload != served.wire) {
        problem(format!(
            "the payload ({} bytes) is not the {} bytes served",
            payload.len(),
            served.wire.len()
        ));
    }
    if truncated.is_some() != (payload.len() < served.wire.len())
        || truncated.is_some_and(|t| t != "length")
    {
        problem(format!(
            "WARC-Truncated {truncated:?} for {} of {} bytes",
            payload.len(),
            served.wire.len()
        ));
    }
    let kept = decoded.len().min(CONTENT_LIMIT);
    if !served.decoded.starts_with(&decoded) || logged["bytes"].as_u64() != Some(kept as u64) {
        problem(format!(
            "decoded {} bytes, logged {}, served {}",
            decoded.len(),
            logged["bytes"],
            served.decoded.len()
        ));
    }
    if !cut && decoded != served.decoded {
        problem("the decoded payload is not the content served".to_string());
    }
    if field(fields, "WARC-IP-Address") != Some("127.0.0.1") {
        problem("no WARC-IP-Address 127.0.0.1".to_string());
    }
    let http = &response["http_headers"];
    for (name, value) in &served.headers {
        if !fields_of(http, name).contains(&value.as_str()) {
            problem(format!("header {name}: {value} not recorded"));
        }
    }
    if !fields_of(http, "transfer-encoding").is_empty()
        || (served.chunked && field(http, "x-crawler-transfer-encoding") != Some("chunked"))
    {
        problem(format!("Transfer-Encoding not renamed: {http}"));
    }
    let request = pair.request;
    let path = uri
        .split_once(HOST)
        .map(|(_, rest)| rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit()));
    let request_line = request["status_line"].as_str().unwrap_or_default();
    if Some(request_line) != path.map(|p| format!("GET {p} HTTP/1.1")).as_deref()
        || !field(&request["http_headers"], "user-agent")
            .is_some_and(|ua| ua.starts_with("squall-warc-test"))
        || field(&request["http_headers"], "accept-encoding").is_none()
    {
        problem(format!(
            "request record {request_line:?}: {}",
            request["http_headers"]
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_reads_back_with_warcio_and_matches_the_fetch_log_and_the_site() {
    let pages = site();
    let addr = serve(pages.clone()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let warc = dir.path().join("warc");
    let log = tokio::task::block_in_place(|| crawl(addr, dir.path(), &warc));
    let files = warc_files(&warc);
    assert!(files.len() >= 2, "the files rotate by size: {files:?}");
    let dump = tokio::task::block_in_place(|| read_with_warcio(&files));
    let mut problems = Vec::new();
    let pairs = check_files(&dump, &mut problems);
    let mut responses = 0;
    for entry in &log {
        let url = entry["url"].as_str().expect("url");
        if entry["http_status"].is_null() {
            problems.push(format!("{url}: fetch failed: {entry}"));
            continue;
        }
        responses += 1;
        let path = url
            .split_once(HOST)
            .map(|(_, rest)| rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit()));
        let served = match path.and_then(|path| pages.get(path)) {
            Some(page) => page.clone(),
            None => Served::page(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                b"no such page".to_vec(),
            ),
        };
        match pairs.get(url) {
            Some(pair) => check_pair(url, pair, entry, &served, &mut problems),
            None => problems.push(format!("{url}: fetched but not archived")),
        }
    }
    if pairs.len() != responses {
        problems.push(format!(
            "{} response records for {responses} fetches in the log",
            pairs.len()
        ));
    }
    let fetched: Vec<&str> = log.iter().filter_map(|e| e["url"].as_str()).collect();
    for path in [
        "/from-gzip",
        "/target",
        "/missing",
        "/image.png",
        "/long-gzip",
        "/chunked",
    ] {
        if !fetched.iter().any(|url| url.ends_with(path)) {
            problems.push(format!("{path} was never fetched: {fetched:?}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
