//! squall-frontier's gRPC layer, as a client that means it harm meets it: the raw request body of
//! a call (gRPC's 5-byte message prefix, a compression flag and a length, then the message, as
//! many times as the input holds: truncated, oversized, lying about its length, compressed
//! without an encoding) sent verbatim over HTTP/2 to a real server
//! (`squall_urlfrontier::server::start` on a loopback port, over an embedded frontier in a temp
//! dir, started once). The first byte picks the method (PutURLs, GetURLs, GetStats, ListQueues,
//! DeleteQueue, then the other twelve of URLFrontier 2.5); the rest is the body. Each call must:
//!
//! - be answered within [`CALL_TIMEOUT`]: HTTP 200, a `grpc-status` from 0 to 16 (in the trailers,
//!   or in the headers of a trailers-only answer); a hang or a reset stream is a finding, as is a
//!   panic anywhere in the process (libFuzzer aborts on it);
//! - answer with a body of whole, uncompressed gRPC messages; a unary call answered OK with
//!   exactly one;
//! - not be answered OK when the body is not a sequence of whole uncompressed messages within the
//!   4 MB limit (a truncated or oversized message ends the call with an error: PutURLs once looped
//!   forever on that error);
//!
//! and after it the server must still answer a plain GetStats (OK, one message) on the same
//! connection. A fresh connection is opened for each input. Crawls the inputs open (crawl IDs in
//! the messages) are deleted, with DeleteCrawl, once more than [`MAX_CRAWLS`] are known, so that
//! the run's frontiers stay bounded.
#![no_main]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::{self, SendRequest};
use hyper_util::rt::{TokioExecutor, TokioIo};
use libfuzzer_sys::fuzz_target;
use prost::Message;
use squall_urlfrontier::proto::{DeleteCrawlMessage, QueueWithinCrawlParams};
use squall_urlfrontier::server::{DEFAULT_CRAWL, RunningServer};

/// The methods of `/urlfrontier.URLFrontier/`, the first byte of an input (mod their count)
/// picking one, and whether the server answers with one message (unary) or a stream.
const METHODS: [(&str, Answer); 17] = [
    ("PutURLs", Answer::Stream),
    ("GetURLs", Answer::Stream),
    ("GetStats", Answer::Unary),
    ("ListQueues", Answer::Unary),
    ("DeleteQueue", Answer::Unary),
    ("ListNodes", Answer::Unary),
    ("ListCrawls", Answer::Unary),
    ("DeleteCrawl", Answer::Unary),
    ("BlockQueueUntil", Answer::Unary),
    ("SetActive", Answer::Unary),
    ("GetActive", Answer::Unary),
    ("SetDelay", Answer::Unary),
    ("SetLogLevel", Answer::Unary),
    ("SetCrawlLimit", Answer::Unary),
    ("GetURLStatus", Answer::Unary),
    ("ListURLs", Answer::Stream),
    ("CountURLs", Answer::Unary),
];

#[derive(Clone, Copy, PartialEq)]
enum Answer {
    Unary,
    Stream,
}

/// The time a call (connecting, sending, reading the whole answer) may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(15);
/// The largest message the server takes (tonic's default, which squall-frontier keeps).
const MAX_MESSAGE: usize = 4 * 1024 * 1024;
/// Crawls known to the server (open, or with a frontier on disk) before the harness deletes all
/// but `DEFAULT`.
const MAX_CRAWLS: usize = 16;
/// The prefix of the temp dirs holding the server's frontiers, the process ID after it.
const DIR_PREFIX: &str = "squall-fuzz-grpc_requests-";

struct Harness {
    runtime: tokio::runtime::Runtime,
    server: RunningServer,
    addr: SocketAddr,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let dir = frontier_dir();
        let config = squall::config::ConfigBuilder::new()
            .set("http.agent.name=squall-fuzz")
            .and_then(|b| b.set(&format!("frontier.path={}", dir.join("frontier").display())))
            .and_then(|b| b.set("fetcher.server.delay=0"))
            .and_then(|b| b.build())
            .expect("the server's configuration");
        let server = runtime.block_on(async {
            // Loopback only: the server serves no one else.
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            squall_urlfrontier::server::start(config, listener)
                .await
                .expect("the server starts")
        });
        let addr = server.addr();
        Harness {
            runtime,
            server,
            addr,
        }
    })
}

/// A fresh dir for this process's frontiers, `DIR_PREFIX` and its process ID in the system's temp
/// dir; those of earlier runs whose process is gone are removed first (libFuzzer exits without
/// dropping statics, so a `TempDir` would stay).
fn frontier_dir() -> PathBuf {
    let temp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&temp) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let Some(pid) = name.strip_prefix(DIR_PREFIX) else {
                continue;
            };
            if pid.parse::<u32>().is_ok() && !PathBuf::from("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = temp.join(format!("{DIR_PREFIX}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the frontier's temp dir");
    dir
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let (method, answer) = METHODS[usize::from(pick) % METHODS.len()];
    let harness = harness();
    harness.runtime.block_on(async {
        let mut sender = connect(harness.addr).await;
        let body = Bytes::copy_from_slice(body);
        let reply = call(&mut sender, harness.addr, method, body.clone()).await;
        check(method, answer, &body, &reply);

        let stats = call(&mut sender, harness.addr, "GetStats", frame(&QueueWithinCrawlParams {
            key: String::new(),
            crawl_id: String::new(),
            local: false,
        }))
        .await;
        assert_eq!(
            stats.status, 0,
            "after {method}, a plain GetStats was answered with grpc-status {} ({:?})",
            stats.status, stats.message
        );
        assert_eq!(messages(&stats.body), Some(1), "after {method}, GetStats's answer");

        forget_crawls(harness, &mut sender).await;
    });
});

/// What a call was answered with.
struct Reply {
    status: u32,
    message: Option<String>,
    body: Bytes,
}

/// A fresh HTTP/2 connection to the server.
async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let connected = tokio::time::timeout(CALL_TIMEOUT, async {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connect to the server");
        let _ = stream.set_nodelay(true);
        let (sender, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .expect("the server's HTTP/2 handshake");
        tokio::spawn(async move {
            let _ = connection.await;
        });
        sender
    })
    .await;
    connected.unwrap_or_else(|_| panic!("the server did not accept a connection in {CALL_TIMEOUT:?}"))
}

/// Calls `method` with the request body `body`, and reads the whole answer.
async fn call(
    sender: &mut SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    method: &str,
    body: Bytes,
) -> Reply {
    let length = body.len();
    let request = Request::post(format!("http://{addr}/urlfrontier.URLFrontier/{method}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(body))
        .expect("a request");
    let answered = tokio::time::timeout(CALL_TIMEOUT, async {
        sender.ready().await.expect("the connection takes a request");
        let response = sender.send_request(request).await.unwrap_or_else(|error| {
            panic!("{method} with a body of {length} bytes: no answer: {error}")
        });
        let (parts, body) = response.into_parts();
        let collected = body.collect().await.unwrap_or_else(|error| {
            panic!("{method} with a body of {length} bytes: the answer's body broke off: {error}")
        });
        (parts, collected)
    })
    .await;
    let (parts, collected) = answered.unwrap_or_else(|_| {
        panic!("{method} with a body of {length} bytes: not answered in {CALL_TIMEOUT:?} (a hang)")
    });
    assert_eq!(
        parts.status,
        http::StatusCode::OK,
        "{method} with a body of {length} bytes: HTTP status"
    );
    let trailers = collected.trailers().cloned();
    let body = collected.to_bytes();
    // A trailers-only answer carries the status in its headers.
    let (status, message) = match trailers.as_ref().and_then(grpc_status) {
        Some(found) => found,
        None => grpc_status(&parts.headers).unwrap_or_else(|| {
            panic!(
                "{method} with a body of {length} bytes: answered without a grpc-status \
                 (headers {:?}, trailers {trailers:?})",
                parts.headers
            )
        }),
    };
    assert!(
        status <= 16,
        "{method} with a body of {length} bytes: grpc-status {status} is no gRPC code"
    );
    Reply {
        status,
        message,
        body,
    }
}

/// The `grpc-status` (a number) and `grpc-message` of `headers`, if they hold a status.
fn grpc_status(headers: &HeaderMap) -> Option<(u32, Option<String>)> {
    let status = headers.get("grpc-status")?;
    let text = status.to_str().expect("grpc-status is text");
    let code = text
        .parse()
        .unwrap_or_else(|_| panic!("grpc-status {text:?} is not a number"));
    let message = headers
        .get("grpc-message")
        .map(|m| String::from_utf8_lossy(m.as_bytes()).to_string());
    Some((code, message))
}

/// What must hold of the answer `reply` to a call of `method` with `body`.
fn check(method: &str, answer: Answer, body: &[u8], reply: &Reply) {
    let length = body.len();
    let sent = messages(body);
    let answered = messages(&reply.body).unwrap_or_else(|| {
        panic!(
            "{method} with a body of {length} bytes: the answer's body ({} bytes) is not whole \
             uncompressed gRPC messages (grpc-status {})",
            reply.body.len(),
            reply.status
        )
    });
    if reply.status == 0 {
        assert!(
            sent.is_some(),
            "{method}: a body that is not whole gRPC messages within the limit ({length} bytes) \
             was answered OK"
        );
        if answer == Answer::Unary {
            assert_eq!(answered, 1, "{method}: messages in a unary call's OK answer");
        }
    }
}

/// How many whole, uncompressed gRPC messages within [`MAX_MESSAGE`] `body` is, end to end; `None`
/// when it is not (a truncated or oversized message, a compression flag set).
fn messages(mut body: &[u8]) -> Option<usize> {
    let mut count = 0;
    while !body.is_empty() {
        if body.len() < 5 || body[0] != 0 {
            return None;
        }
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        if length > MAX_MESSAGE || body.len() - 5 < length {
            return None;
        }
        body = &body[5 + length..];
        count += 1;
    }
    Some(count)
}

/// `message` as a request body: one uncompressed gRPC message.
fn frame(message: &impl Message) -> Bytes {
    let encoded = message.encode_to_vec();
    let mut body = Vec::with_capacity(5 + encoded.len());
    body.push(0);
    body.extend_from_slice(&(encoded.len() as u32).to_be_bytes());
    body.extend_from_slice(&encoded);
    Bytes::from(body)
}

/// Deletes every crawl but `DEFAULT` once more than [`MAX_CRAWLS`] are known.
async fn forget_crawls(harness: &Harness, sender: &mut SendRequest<Full<Bytes>>) {
    let known = harness.server.crawls().known().await;
    if known.len() <= MAX_CRAWLS {
        return;
    }
    for crawl in known.iter().filter(|c| *c != DEFAULT_CRAWL) {
        let body = frame(&DeleteCrawlMessage {
            value: crawl.clone(),
            local: false,
        });
        let reply = call(sender, harness.addr, "DeleteCrawl", body).await;
        assert_eq!(
            reply.status, 0,
            "DeleteCrawl {crawl} (the harness's clean-up): {:?}",
            reply.message
        );
    }
}
