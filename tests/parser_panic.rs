//! A page that makes the parser stage panic, end to end on loopback: that page gets ERROR with the
//! reason, the crawl fetches the rest of the site and ends Idle. Two ways in: markup that trips
//! lol_html's internal checks (the fuzz regression input of tests/fuzz_regressions.rs; a panic where
//! lol_html keeps its debug assertions, as here and in a dependent's debug build), and a parse
//! filter of the user's that panics on one page. (`error.message`, which names the panic, is not
//! among the keys stored by default; src/parse/bolt_tests.rs reads it.)

use crate::support;
use std::time::Duration;

use axum::Router;
use axum::http::{Uri, header};
use axum::response::{IntoResponse, Response};
use squall::frontier::EmbeddedFrontier;
use squall::message::{PageSink, ProcessedPage};
use squall::model::{Status, keys};
use squall::parse::{ParseFilter, ParseResult};
use squall::topology::StopReason;
use support::crawler;
use support::http::html;
use url::Url;

/// The smallest fuzz input that trips lol_html 3.0.3's "Tag should be a start tag" check.
const HOSTILE_MARKUP: &[u8] =
    include_bytes!("fixtures/fuzz/html_links-crash-2036a632107535631f69efe7621312064a6f3e51");

async fn serve(uri: Uri) -> Response {
    match uri.path() {
        "/" => html("<a href=\"/hostile\">h</a> <a href=\"/boom\">b</a> <a href=\"/after\">a</a>"),
        "/hostile" => (
            [(header::CONTENT_TYPE, "text/html; charset=windows-1252")],
            HOSTILE_MARKUP,
        )
            .into_response(),
        "/after" => html("<a href=\"/last\">l</a>"),
        _ => html("leaf"),
    }
}

/// Panics while filtering the page `/boom`.
struct PanicsOnBoom;

impl ParseFilter for PanicsOnBoom {
    fn filter(&self, url: &Url, _body: &[u8], _parse: &mut ParseResult) {
        if url.path() == "/boom" {
            panic!("a parse filter gave up on {url}");
        }
    }
}

/// What a page sink saw of each page: its path, status and title.
#[derive(Default)]
struct Seen(std::sync::Mutex<Vec<(String, Status, Option<String>)>>);

impl PageSink for Seen {
    fn on_page(&self, page: &ProcessedPage<'_>) {
        let title = page.content.and_then(|c| c.title.clone());
        let seen = (page.url.url.path().to_string(), page.status, title);
        self.0.lock().expect("not poisoned").push(seen);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_makes_the_parser_panic_is_an_error_and_the_crawl_ends_idle() {
    let addr = support::http::serve(Router::new().fallback(serve)).await;
    let (builder, frontier, _dir): (_, EmbeddedFrontier, _) =
        crawler::embedded(crawler::config(&[
            "http.agent.name=squall",
            "fetcher.server.delay=0",
            "spout.min.delay.queries=50",
        ]));
    let seen = std::sync::Arc::new(Seen::default());
    let crawler = builder
        .parse_filter(PanicsOnBoom)
        .page_sink(std::sync::Arc::clone(&seen))
        .resolve("panic.test", addr)
        .build()
        .expect("crawler");
    let origin = format!("http://panic.test:{}", addr.port());
    crawler.inject([format!("{origin}/").as_str()]).await;
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(60))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    let stored = |path: &str| {
        frontier
            .lookup(&format!("{origin}{path}"))
            .expect("lookup")
            .unwrap_or_else(|| panic!("{path} is stored"))
    };
    for path in ["/", "/after", "/last"] {
        assert_eq!(stored(path).status, Status::Fetched, "{path}");
    }
    let boom = stored("/boom");
    assert_eq!(boom.status, Status::Error);
    assert_eq!(boom.metadata.first(keys::ERROR_CAUSE), Some("parse"));
    let hostile = stored("/hostile");
    if cfg!(debug_assertions) {
        assert_eq!(hostile.status, Status::Error);
        assert_eq!(hostile.metadata.first(keys::ERROR_CAUSE), Some("parse"));
    } else {
        assert_eq!(
            hostile.status,
            Status::Fetched,
            "lol_html without its checks"
        );
    }
    // The page sink saw every page once, with its final status; none for the page that failed.
    let mut seen = seen.0.lock().expect("not poisoned").clone();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    let paths: Vec<&str> = seen.iter().map(|(path, _, _)| path.as_str()).collect();
    assert_eq!(paths, ["/", "/after", "/boom", "/hostile", "/last"]);
    let boom = &seen[2];
    assert_eq!((boom.1, boom.2.as_deref()), (Status::Error, None));
    assert_eq!(seen[0].1, Status::Fetched);
}
