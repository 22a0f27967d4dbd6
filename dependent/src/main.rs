//! A custom crawler built on squall as a dependency: two hosts served on loopback, a URL rule and a
//! parse filter of its own, and a page sink that writes one JSON line per page (URL, status,
//! title, links) to standard output. It runs on the embedded frontier, opened from the
//! configuration, until the crawl is idle, then checks what it saw and exits 1 if anything is off.
//!
//! It first checks that what squall's default features leave out (the cookie jar, CSS and XPath
//! extraction) is refused by name rather than silently ignored.
//!
//! One page of the site is hostile: markup that trips an internal check of the HTML parser
//! (lol_html), which panics where lol_html keeps its debug assertions, as in this crate's debug
//! build. That page must end as ERROR and the crawl must go on to its end.
//!
//! ```text
//! cargo run                     # from this directory
//! ```

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use squall::config::ConfigBuilder;
use squall::filter::UrlFilter;
use squall::listen::{GuardedListener, ListenLimits};
use squall::message::{PageSink, ProcessedPage};
use squall::parse::{Expression, ExtractFilter, ParseFilter, ParseResult};
use squall::topology::StopReason;
use squall::{CrawlUrl, CrawlerBuilder, Metadata, RunLimits, Status, Url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The politeness delay between two fetches of one host, in seconds.
const DELAY: f64 = 0.05;

/// Keeps the crawl off PDF files.
struct NoPdf;

impl UrlFilter for NoPdf {
    fn filter(&self, _source: Option<&CrawlUrl>, url: Url, _metadata: &Metadata) -> Option<Url> {
        (!url.path().ends_with(".pdf")).then_some(url)
    }
}

/// Records how many links each page has that the crawl may follow (`links`).
struct Links;

impl ParseFilter for Links {
    fn filter(&self, _url: &Url, _body: &[u8], parse: &mut ParseResult) {
        parse.metadata.set("links", parse.links.len().to_string());
    }
}

/// Writes a JSON line per page and keeps each page's status by path.
#[derive(Default)]
struct JsonLines(Mutex<BTreeMap<String, Status>>);

impl PageSink for JsonLines {
    fn on_page(&self, page: &ProcessedPage<'_>) {
        let title = page.content.and_then(|c| c.title.as_deref()).unwrap_or("");
        let links = page.url.metadata.first("links").unwrap_or("0");
        println!(
            "{{\"url\":{},\"status\":\"{}\",\"title\":{},\"links\":{links}}}",
            json_text(page.url.url.as_str()),
            page.status,
            json_text(title)
        );
        let at = format!(
            "{}{}",
            page.url.url.host_str().unwrap_or(""),
            page.url.url.path()
        );
        if let Ok(mut seen) = self.0.lock() {
            seen.insert(at, page.status);
        }
    }
}

/// `text` as a JSON string.
fn json_text(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if (c as u32) < 0x20 => quoted.push_str(&format!("\\u{:04x}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// The smallest input of squall's fuzzing that trips lol_html 3.0.3's "Tag should be a start tag"
/// check (squall's tests/fixtures/fuzz/).
const HOSTILE_MARKUP: &[u8] = include_bytes!(
    "../../tests/fixtures/fuzz/html_links-crash-2036a632107535631f69efe7621312064a6f3e51"
);

/// The answer to `path` on `host`: content type and body (`None`: 404).
fn page(host: &str, path: &str, port: u16) -> Option<(&'static str, Vec<u8>)> {
    let html = |title: &str, body: String| {
        let page = format!("<html><head><title>{title}</title></head><body>{body}</body></html>");
        Some(("text/html; charset=utf-8", page.into_bytes()))
    };
    match (host, path) {
        ("a.test", "/") => html(
            "A home",
            format!(
                "<p>Welcome to a</p><a href=\"/one\">one</a> <a href=\"/two.pdf\">pdf</a> \
                 <a href=\"http://b.test:{port}/\">b</a>"
            ),
        ),
        ("a.test", "/one") => html(
            "One",
            "<p>the first page</p><a href=\"/hostile\">h</a>".into(),
        ),
        ("a.test", "/hostile") => {
            Some(("text/html; charset=windows-1252", HOSTILE_MARKUP.to_vec()))
        }
        ("b.test", "/") => html("B home", "<p>b's home</p><a href=\"/x\">x</a>".into()),
        ("b.test", "/x") => html("X", "<p>x marks the spot</p>".into()),
        _ => None,
    }
}

/// Serves the two hosts on a loopback port: one request per connection, bounded in size, on
/// squall's guarded listener (64 connections at most, a silent one closed after 10 s).
async fn serve() -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let mut listener = GuardedListener::new(listener, "two-hosts site", ListenLimits::default());
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await;
            tokio::spawn(async move {
                let mut request = vec![0u8; 8192];
                let read = socket.read(&mut request).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&request[..read]).to_string();
                let path = text.split_whitespace().nth(1).unwrap_or("/").to_string();
                let host = text
                    .lines()
                    .find_map(|line| line.strip_prefix("host: ").or(line.strip_prefix("Host: ")))
                    .and_then(|host| host.split(':').next())
                    .unwrap_or("")
                    .to_string();
                let (status, content_type, body) = match page(&host, &path, addr.port()) {
                    Some((content_type, body)) => ("200 OK", content_type, body),
                    None => ("404 Not Found", "text/plain", Vec::new()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
            });
        }
    });
    Ok(addr)
}

/// What squall's default features leave out is refused by name: the cookie jar (`cookies`) and
/// CSS/XPath extraction (`extract`). An empty string when both are; else what went wrong.
fn check_left_out() -> String {
    let mut wrong = String::new();
    let cookies = ConfigBuilder::new()
        .set("http.agent.name=two-hosts")
        .and_then(|config| config.set("http.use.cookies=true"))
        .and_then(|config| config.build());
    match cookies {
        Err(error) if error.to_string().contains("`cookies` feature") => {}
        Ok(_) => wrong.push_str("http.use.cookies accepted without the feature; "),
        Err(error) => wrong.push_str(&format!("http.use.cookies: {error}; ")),
    }
    match ExtractFilter::new([("title", Expression::Css("h1".into()))]) {
        Err(error) if error.to_string().contains("`extract` feature") => {}
        Ok(_) => wrong.push_str("a CSS rule accepted without the feature"),
        Err(error) => wrong.push_str(&format!("a CSS rule: {error}")),
    }
    wrong
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let left_out = check_left_out();
    if !left_out.is_empty() {
        eprintln!("two-hosts: {left_out}");
        std::process::exit(1);
    }
    let addr = serve().await?;
    let dir = tempfile::tempdir()?;
    let config = ConfigBuilder::new()
        .set("http.agent.name=two-hosts")?
        .set(&format!("fetcher.server.delay={DELAY}"))?
        .set_text("frontier.path", &dir.path().display().to_string())?
        .build()?;
    let sink = Arc::new(JsonLines::default());
    let crawler = CrawlerBuilder::new(config)
        .resolve("a.test", addr)
        .resolve("b.test", addr)
        .url_filter(NoPdf)
        .parse_filter(Links)
        .page_sink(Arc::clone(&sink))
        .build()?;
    crawler
        .inject([format!("http://a.test:{}/", addr.port())])
        .await;
    let started = Instant::now();
    let summary = crawler.run(RunLimits::until_idle()).await;
    let seen = sink.0.lock().map(|seen| seen.clone()).unwrap_or_default();
    // The hostile page panics lol_html where its debug assertions are on (this crate's debug build).
    let hostile = match cfg!(debug_assertions) {
        true => Status::Error,
        false => Status::Fetched,
    };
    let expected: BTreeMap<String, Status> = [
        ("a.test/", Status::Fetched),
        ("a.test/hostile", hostile),
        ("a.test/one", Status::Fetched),
        ("b.test/", Status::Fetched),
        ("b.test/x", Status::Fetched),
    ]
    .into_iter()
    .map(|(at, status)| (at.to_string(), status))
    .collect();
    eprintln!(
        "two-hosts: {:?} after {:.2} s, {} pages",
        summary.stop_reason,
        started.elapsed().as_secs_f64(),
        summary.pages
    );
    if summary.stop_reason != StopReason::Idle || seen != expected {
        eprintln!("two-hosts: expected {expected:?}, saw {seen:?}");
        std::process::exit(1);
    }
    Ok(())
}
