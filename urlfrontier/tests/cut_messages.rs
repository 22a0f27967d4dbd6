//! A client stream whose body ends inside a gRPC message ends its call with an error, wherever the
//! cut falls: right after a message's 5-byte prefix (which tonic alone takes as a clean end; the
//! `grpc_requests` fuzz target found PutURLs answering such a call OK), inside a prefix, or inside
//! a message. The whole messages before the cut are answered first. The bodies are sent verbatim
//! over HTTP/2 (hyper), as no gRPC client would send them.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use prost::Message;
use squall_urlfrontier::proto::url_item::Item;
use squall_urlfrontier::proto::{AckMessage, DiscoveredUrlItem, UrlInfo, UrlItem};
use tonic::codegen::http;

use crate::support::serving::{embedded_config, serve};

/// `message` with gRPC's prefix (uncompressed).
fn framed(message: &impl Message) -> Vec<u8> {
    let encoded = message.encode_to_vec();
    let length = u32::try_from(encoded.len()).expect("a small message");
    let mut bytes = vec![0];
    bytes.extend(length.to_be_bytes());
    bytes.extend(encoded);
    bytes
}

fn item(url: &str) -> UrlItem {
    UrlItem {
        id: url.to_string(),
        item: Some(Item::Discovered(DiscoveredUrlItem {
            info: Some(UrlInfo {
                url: url.to_string(),
                key: "a.test".to_string(),
                ..Default::default()
            }),
        })),
        ..Default::default()
    }
}

/// What a call answered: the acks' IDs, and the gRPC status code and message.
struct Answer {
    acked: Vec<String>,
    code: u32,
    message: String,
}

/// Calls PutURLs on `addr` with `body`, verbatim, and reads the whole answer.
async fn put_urls(addr: std::net::SocketAddr, body: Vec<u8>) -> Answer {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, connection) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .expect("an HTTP/2 handshake");
    tokio::spawn(connection);
    let request = http::Request::post(format!("http://{addr}/urlfrontier.URLFrontier/PutURLs"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(Bytes::from(body)))
        .expect("a request");
    let call = async {
        let response = sender.send_request(request).await.expect("an answer");
        let (parts, body) = response.into_parts();
        (parts, body.collect().await.expect("the whole answer"))
    };
    let (parts, collected) = tokio::time::timeout(std::time::Duration::from_secs(20), call)
        .await
        .expect("answered in 20 s");
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let status = trailers
        .get("grpc-status")
        .or(parts.headers.get("grpc-status"));
    let code = status
        .and_then(|s| s.to_str().ok())
        .and_then(|s| s.parse().ok())
        .expect("a grpc-status");
    let message = trailers
        .get("grpc-message")
        .or(parts.headers.get("grpc-message"))
        .map(|m| {
            percent_encoding::percent_decode(m.as_bytes())
                .decode_utf8_lossy()
                .to_string()
        })
        .unwrap_or_default();
    let mut body = collected.to_bytes();
    let mut acked = Vec::new();
    while body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let ack = AckMessage::decode(&body[5..5 + length]).expect("an ack");
        acked.push(ack.id);
        body = body.slice(5 + length..);
    }
    Answer {
        acked,
        code,
        message,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cut_inside_a_message_ends_put_urls_with_an_error_after_the_whole_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = embedded_config(dir.path());
    let server = serve(config).await;
    let whole = framed(&item("http://a.test/whole"));
    let next = framed(&item("http://a.test/cut"));
    let cuts = [
        ("after a prefix", 5, "short of its last message's end"),
        (
            "inside a prefix",
            3,
            "inside a message's prefix (3 of 5 bytes)",
        ),
        ("inside a message", next.len() - 2, "2 bytes short"),
    ];
    for (place, kept, said) in cuts {
        let body = [whole.clone(), next[..kept].to_vec()].concat();
        let answer = put_urls(server.addr(), body).await;
        assert_eq!(answer.acked, ["http://a.test/whole"], "cut {place}");
        assert_eq!(
            answer.code, 3,
            "cut {place}: INVALID_ARGUMENT ({})",
            answer.message
        );
        assert!(
            answer.message.contains(said),
            "cut {place}: {}",
            answer.message
        );
    }
    // The same messages whole: acked, OK.
    let answer = put_urls(server.addr(), [whole, next].concat()).await;
    assert_eq!(answer.code, 0, "{}", answer.message);
    assert_eq!(answer.acked.len(), 2);
    server.shutdown().await;
}
