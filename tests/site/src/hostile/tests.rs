//! Tests of the hostile site with a real HTTP client.

use std::io::Read;
use std::time::{Duration, Instant};

use reqwest::redirect::Policy;

use super::content::{Content, INDEX_LINKS, gzip_bomb};
use super::*;
use crate::test_links::links;

fn builder(site: &HostileSite) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .resolve(HOSTILE_HOST, site.addr())
}

fn client(site: &HostileSite) -> reqwest::Client {
    builder(site).build().expect("client")
}

/// A client that gives up on an answer after two seconds.
fn short_client(site: &HostileSite) -> reqwest::Client {
    builder(site)
        .timeout(Duration::from_secs(2))
        .build()
        .expect("client")
}

fn url(site: &HostileSite, path: &str) -> String {
    site.url(HOSTILE_HOST, path)
}

async fn get(site: &HostileSite, path: &str) -> reqwest::Response {
    get_with(&client(site), site, path).await
}

/// GETs `path` of the site with `client`.
async fn get_with(client: &reqwest::Client, site: &HostileSite, path: &str) -> reqwest::Response {
    client.get(url(site, path)).send().await.expect(path)
}

/// GETs `path`, checks the answer is a 200 and reads its body whole.
async fn ok_body(site: &HostileSite, path: &str) -> (reqwest::header::HeaderMap, Vec<u8>) {
    let resp = get(site, path).await;
    assert_eq!(resp.status(), 200, "{path}");
    let headers = resp.headers().clone();
    (headers, resp.bytes().await.expect(path).to_vec())
}

/// Whether a response's Content-Type says HTML.
fn says_html(headers: &reqwest::header::HeaderMap) -> bool {
    headers["content-type"]
        .to_str()
        .is_ok_and(|ct| ct.starts_with("text/html"))
}

/// Reads a body to its end: the bytes read, and the error that ended it if one did.
async fn read_to_end(resp: &mut reqwest::Response) -> (usize, Result<(), reqwest::Error>) {
    let mut got = 0;
    loop {
        match resp.chunk().await {
            Ok(Some(c)) => got += c.len(),
            Ok(None) => return (got, Ok(())),
            Err(e) => return (got, Err(e)),
        }
    }
}

/// Checks an answer is streamed: a 200 with no Content-Length.
fn streamed(resp: reqwest::Response) -> reqwest::Response {
    assert_eq!(resp.status(), 200, "{}", resp.url());
    assert!(resp.content_length().is_none(), "{}", resp.url());
    resp
}

/// Drops a streamed answer, waits until the server stops streaming (panics after `within`),
/// says how long that took after what was `read`, and shuts the site down.
async fn hang_up(
    site: HostileSite,
    resp: reqwest::Response,
    within: Duration,
    read: std::fmt::Arguments<'_>,
) {
    drop(resp);
    let drained = streams_drain(&site, within).await;
    eprintln!("{read}; stream stopped {drained:?} after disconnect");
    site.shutdown().await;
}

/// Reads an endless body until more than `bytes` bytes came; returns how many came and its
/// start: the chunks that began within the first `kept` bytes.
async fn read_past(resp: &mut reqwest::Response, bytes: usize, kept: usize) -> (usize, Vec<u8>) {
    let mut got = 0;
    let mut head = Vec::new();
    while got <= bytes {
        let c = resp.chunk().await.expect("chunk").expect("no end");
        if head.len() < kept {
            head.extend_from_slice(&c);
        }
        got += c.len();
    }
    (got, head)
}

/// Waits until the server has no streaming body alive; returns how long it
/// took, or panics after `within`.
async fn streams_drain(site: &HostileSite, within: Duration) -> Duration {
    let t = Instant::now();
    while site.active_streams() != 0 {
        assert!(
            t.elapsed() < within,
            "{} streams still active after {within:?}",
            site.active_streams()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    t.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_is_quick_and_bodies_have_the_promised_sizes() {
    // Cold if this test runs first in the process (run it alone to see).
    let t = Instant::now();
    let site = HostileSite::start().await.expect("start");
    let start = t.elapsed();
    let t = Instant::now();
    let c = Content::build();
    let build = t.elapsed();
    eprintln!("HostileSite::start: {start:?}; one content build: {build:?}");
    assert!(build < Duration::from_secs(10), "{build:?}");
    assert_eq!(c.endless_chunk.len(), ENDLESS_CHUNK_LEN);
    let bomb = site.body("/gzip-bomb").expect("bomb");
    eprintln!("gzip bomb: {} bytes on the wire", bomb.len());
    assert!(
        (500_000..2_000_000).contains(&bomb.len()),
        "{} bytes",
        bomb.len()
    );
    let isize = u32::from_le_bytes(bomb[bomb.len() - 4..].try_into().expect("4 bytes"));
    assert_eq!(u64::from(isize), GZIP_BOMB_DECOMPRESSED_LEN % (1 << 32));
    let many = site.body("/many-links").expect("many");
    assert!(
        (2_000_000..3_000_000).contains(&many.len()),
        "{}",
        many.len()
    );
    site.shutdown().await;
}

#[test]
fn gzip_bomb_construction_inflates_exactly() {
    let prefix = b"<p>hello</p>";
    for spaces in [0, 1, (4 << 20) - 1, 9 * (1 << 20) + 123] {
        let gz = gzip_bomb(prefix, spaces);
        let mut out = Vec::new();
        // GzDecoder checks the CRC-32 and the size in the trailer.
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .expect("valid gzip");
        assert_eq!(out.len() as u64, prefix.len() as u64 + spaces);
        assert!(out.starts_with(prefix));
        assert!(out[prefix.len()..].iter().all(|&b| b == b' '));
    }
}

#[tokio::test]
async fn index_links_every_hostile_path() {
    let site = HostileSite::start().await.expect("start");
    let (_, body) = ok_body(&site, "/").await;
    let found = links(&body);
    for p in INDEX_LINKS {
        assert!(found.iter().any(|l| l == p), "{p} not linked: {found:?}");
    }
    let robots = get(&site, "/robots.txt").await;
    assert_eq!(robots.status(), 404);
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drip_times_out_and_its_stream_stops() {
    let site = HostileSite::start().await.expect("start");
    let client = short_client(&site);
    let t = Instant::now();
    let mut resp = streamed(get_with(&client, &site, "/drip").await);
    let (got, end) = read_to_end(&mut resp).await;
    let err = end.expect_err("drip ended");
    let took = t.elapsed();
    assert!(err.is_timeout(), "{err:?}");
    assert!((1..=4).contains(&got), "{got} bytes in {took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(site.streams_started(), 1);
    let read = format_args!("drip: {got} bytes in {took:?}");
    hang_up(site, resp, Duration::from_secs(5), read).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_streams_more_than_10_mb_and_stops_on_disconnect() {
    let site = HostileSite::start().await.expect("start");
    let mut resp = streamed(get(&site, "/endless").await);
    let (got, head) = read_past(&mut resp, 10 << 20, 1024).await;
    assert!(links(&head).iter().any(|l| l == "/ok/5"));
    assert_eq!(site.active_streams(), 1);
    let read = format_args!("endless: read {got} bytes");
    hang_up(site, resp, Duration::from_secs(2), read).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_streams_at_once() {
    let site = HostileSite::start().await.expect("start");
    let mut drip = get(&site, "/drip").await;
    let mut endless = get(&site, "/endless").await;
    drip.chunk().await.expect("first drip byte");
    endless.chunk().await.expect("first endless chunk");
    assert_eq!(site.active_streams(), 2);
    let t = Instant::now();
    site.shutdown().await;
    let took = t.elapsed();
    assert!(took < Duration::from_secs(2), "shutdown took {took:?}");
    // Both bodies end in an error (not a clean end) soon.
    let (_, drip_end) = tokio::time::timeout(Duration::from_secs(2), read_to_end(&mut drip))
        .await
        .expect("drip ends");
    assert!(drip_end.is_err(), "drip ended cleanly");
    let (_, endless_end) = tokio::time::timeout(Duration::from_secs(5), read_to_end(&mut endless))
        .await
        .expect("endless ends");
    assert!(endless_end.is_err(), "endless ended cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_bomb_is_small_on_the_wire_and_inflates_to_spaces() {
    let site = HostileSite::start().await.expect("start");
    let raw = builder(&site).no_gzip().build().expect("client");
    let resp = get_with(&raw, &site, "/gzip-bomb").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    assert!(says_html(resp.headers()));
    let wire = resp.bytes().await.expect("raw body");
    assert!(wire.len() < 2_000_000, "{} bytes", wire.len());
    assert_eq!(&wire[..2], &[0x1f, 0x8b]);

    // A decoding client sees the inflated body; read 10 MB of it only.
    let mut resp = streamed(get(&site, "/gzip-bomb").await);
    let (_, inflated) = read_past(&mut resp, 10 << 20, usize::MAX).await;
    drop(resp);
    assert!(inflated.starts_with(GZIP_BOMB_PREFIX.as_bytes()));
    assert!(
        inflated[GZIP_BOMB_PREFIX.len()..]
            .iter()
            .all(|&b| b == b' ')
    );
    site.shutdown().await;
}

#[tokio::test]
async fn loops_redirect_as_described() {
    let site = HostileSite::start().await.expect("start");
    for (from, to) in [
        ("/loop/a", "/loop/b"),
        ("/loop/b", "/loop/a"),
        ("/loop/self", "/loop/self"),
    ] {
        let resp = get(&site, from).await;
        assert_eq!(resp.status(), 301, "{from}");
        assert_eq!(
            resp.headers()["location"],
            url(&site, to).as_str(),
            "{from}"
        );
    }
    // A client that follows redirects gives up.
    let following = builder(&site)
        .redirect(Policy::limited(10))
        .build()
        .expect("client");
    for from in ["/loop/a", "/loop/self"] {
        let err = following
            .get(url(&site, from))
            .send()
            .await
            .expect_err("loop");
        assert!(err.is_redirect(), "{err:?}");
    }
    site.shutdown().await;
}

#[tokio::test]
async fn invalid_utf8_still_has_its_links() {
    let site = HostileSite::start().await.expect("start");
    let (headers, body) = ok_body(&site, "/invalid-utf8").await;
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert!(std::str::from_utf8(&body).is_err());
    let found = links(&body);
    assert_eq!(found, ["/ok/1", "/ok/2"]);
    let lossy = String::from_utf8_lossy(&body);
    assert!(lossy.contains("<a href=\"/ok/1\">") && lossy.contains("<a href=\"/ok/2\">"));
    // reqwest's text() decodes lossily, without failing.
    let text = get(&site, "/invalid-utf8")
        .await
        .text()
        .await
        .expect("text");
    assert!(text.contains('\u{FFFD}'));
    site.shutdown().await;
}

#[tokio::test]
async fn lying_types() {
    let site = HostileSite::start().await.expect("start");
    let (headers, body) = ok_body(&site, "/lying-type").await;
    assert!(says_html(&headers));
    assert!(body.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(body.len() >= 16 * 1024);
    assert!(links(&body).is_empty());

    let (headers, body) = ok_body(&site, "/lying-type-2").await;
    assert_eq!(headers["content-type"], "image/png");
    assert!(body.starts_with(b"<!DOCTYPE html>"));
    assert_eq!(links(&body), ["/ok/3"]);
    site.shutdown().await;
}

#[tokio::test]
async fn many_links_has_100k_links_to_cheap_404s() {
    let site = HostileSite::start().await.expect("start");
    let (_, body) = ok_body(&site, "/many-links").await;
    let found = links(&body);
    assert_eq!(found.len(), MANY_LINKS);
    assert_eq!(found[0], "/l/0");
    assert_eq!(found[MANY_LINKS - 1], "/l/99999");
    let c = client(&site);
    for p in ["/l/0", "/l/5", "/l/99999"] {
        let r = get_with(&c, &site, p).await;
        assert_eq!(r.status(), 404, "{p}");
    }
    for p in ["/ok/0", "/ok/1", "/ok/4", "/ok/123456"] {
        let r = get_with(&c, &site, p).await;
        assert_eq!(r.status(), 200, "{p}");
        let t = r.text().await.expect("text");
        assert!(t.contains("<title>OK "), "{p}");
    }
    for p in ["/ok/", "/ok/x", "/ok/1/2", "/nothing"] {
        let r = get_with(&c, &site, p).await;
        assert_eq!(r.status(), 404, "{p}");
    }
    site.shutdown().await;
}

#[tokio::test]
async fn broken_html_links() {
    let site = HostileSite::start().await.expect("start");
    let (_, body) = ok_body(&site, "/broken-html").await;
    assert!(body.contains(&0));
    let text = String::from_utf8_lossy(&body);
    assert!(text.contains(&"x".repeat(BROKEN_HTML_LONG_ATTR_LEN)));
    assert!(text.contains("<a href=/ok/4 "));
    assert!(text.contains("/not-a-link") && text.contains("/commented"));
    let found = links(&body);
    assert!(found.iter().any(|l| l == "/ok/4"), "{found:?}");
    assert!(
        found.iter().any(|l| l == "javascript:alert(1)"),
        "{found:?}"
    );
    assert!(found.iter().any(|l| l == "mailto:x@y"), "{found:?}");
    assert!(!found.iter().any(|l| l.contains("not-a-link")), "{found:?}");
    assert!(!found.iter().any(|l| l.contains("commented")), "{found:?}");
    site.shutdown().await;
}

#[tokio::test]
async fn requests_are_logged_any_host_is_accepted_and_only_get_head() {
    let site = HostileSite::start().await.expect("start");
    let c = client(&site);
    let r = c
        .get(format!("http://{}/ok/1", site.addr()))
        .send()
        .await
        .expect("by address");
    assert_eq!(r.status(), 200);
    let r = c.post(url(&site, "/ok/1")).send().await.expect("post");
    assert_eq!(r.status(), 405);
    let r = c
        .head(url(&site, "/many-links"))
        .send()
        .await
        .expect("head");
    assert_eq!(r.status(), 200);
    let log = site.requests();
    assert_eq!(log.len(), 3);
    assert_eq!(log[0].host, "127.0.0.1");
    assert_eq!(log[1].method, "POST");
    assert_eq!(log[1].status, 405);
    assert_eq!(log[2].url, url(&site, "/many-links"));
    assert_eq!(log[2].method, "HEAD");
    site.clear_requests();
    assert!(site.requests().is_empty());
    assert_eq!(site.seeds(), [url(&site, "/")]);
    assert_eq!(site.host_names(), [HOSTILE_HOST]);
    site.shutdown().await;
}

/// Checks every expectation against what the server actually serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expectations_match_what_is_served() {
    let site = HostileSite::start().await.expect("start");
    let short = short_client(&site);
    let expectations = site.expectations();
    assert!(expectations.len() >= 12);
    for e in &expectations {
        assert_eq!(e.url, url(&site, e.path));
        let mut resp = match short.get(&e.url).send().await {
            Ok(r) => r,
            Err(err) => panic!("{}: {err:?}", e.path),
        };
        let status = resp.status();
        match e.outcome {
            HostileOutcome::Redirection => {
                assert_eq!(status, 301, "{}", e.path);
                let loc = resp.headers()["location"].to_str().expect("location");
                assert_eq!(Some(loc), e.redirect_to.as_deref(), "{}", e.path);
                continue;
            }
            HostileOutcome::FetchError if e.path == "/drip" => {
                assert_eq!(status, 200);
                let (_, end) = read_to_end(&mut resp).await;
                assert!(end.expect_err("drip ended").is_timeout());
                continue;
            }
            HostileOutcome::FetchError => {
                assert_eq!(status, 404, "{}", e.path);
                continue;
            }
            HostileOutcome::Fetched => assert_eq!(status, 200, "{}", e.path),
            HostileOutcome::FetchedTruncated | HostileOutcome::FetchedTruncatedOrFetchError => {
                assert_eq!(status, 200, "{}", e.path);
            }
        }
        // Read at most 4 MB, as a crawler with a content limit would.
        let mut body = Vec::new();
        while body.len() < 4 << 20 {
            match resp.chunk().await.expect("chunk") {
                Some(c) => body.extend_from_slice(&c),
                None => break,
            }
        }
        let truncated = body.len() >= 4 << 20;
        assert_eq!(
            truncated,
            e.outcome != HostileOutcome::Fetched,
            "{}: {} bytes",
            e.path,
            body.len()
        );
        drop(resp);
        let found: Vec<String> = links(&body)
            .iter()
            .map(|l| {
                url::Url::parse(&e.url)
                    .and_then(|b| b.join(l))
                    .map_or_else(|_| l.clone(), String::from)
            })
            .collect();
        for m in &e.must_find {
            assert!(found.contains(m), "{}: {m} not found", e.path);
        }
        for m in &e.must_not_find {
            assert!(!found.contains(m), "{}: {m} found", e.path);
        }
    }
    streams_drain(&site, Duration::from_secs(5)).await;
    site.shutdown().await;
}
