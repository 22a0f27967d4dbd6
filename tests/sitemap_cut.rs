//! Sitemaps larger than the crawl takes, end to end on loopback: a sitemap cut at
//! `http.content.limit` keeps the entries that arrived whole and records the cut, and one cut before
//! its first entry is an error that says so.

use crate::support;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, Uri, header};
use axum::response::{IntoResponse, Response};
use squall::frontier::EmbeddedFrontier;
use squall::model::{Status, keys};
use support::crawler;
use support::http::html;

/// The content limit of the crawl, in bytes.
const LIMIT: usize = 16 * 1024;
/// Entries in the long sitemap.
const ENTRIES: usize = 100;
/// Padding that makes each entry's path about 1 KiB long, so that few fit under the limit.
const PAD: usize = 1000;

/// The path of entry `i` of the long sitemap.
fn entry_path(i: usize) -> String {
    format!("/page-{i}-{}", "x".repeat(PAD))
}

/// A `<urlset>` of the entries `0..count` on `origin`, each path of about 1 KiB.
fn urlset(origin: &str, count: usize) -> String {
    let mut body = String::from("<?xml version=\"1.0\"?><urlset>\n");
    for i in 0..count {
        body.push_str(&format!(
            "<url><loc>{origin}{}</loc></url>\n",
            entry_path(i)
        ));
    }
    body.push_str("</urlset>\n");
    body
}

/// A plain-text sitemap of the entries `0..ENTRIES` on `origin`.
fn text_sitemap(origin: &str) -> String {
    (0..ENTRIES)
        .map(|i| format!("{origin}{}\n", entry_path(i)))
        .collect()
}

async fn serve(headers: HeaderMap, uri: Uri) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let origin = format!("http://{host}");
    match uri.path() {
        "/robots.txt" => format!("User-agent: *\nSitemap: {origin}/sitemap.xml\n").into_response(),
        "/sitemap.xml" if host.starts_with("long.test") => xml(urlset(&origin, ENTRIES)),
        "/sitemap.xml" if host.starts_with("text.test") => text_sitemap(&origin).into_response(),
        "/sitemap.xml" => {
            // One entry whose location alone is longer than the limit.
            let loc = format!("{origin}/{}", "y".repeat(2 * LIMIT));
            xml(format!("<urlset><url><loc>{loc}</loc></url></urlset>"))
        }
        _ => html("leaf"),
    }
}

fn xml(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/xml")], body).into_response()
}

/// Crawls `long.test`, `huge.test` and `text.test` until idle; returns the frontier and the port.
async fn crawl() -> (EmbeddedFrontier, u16, tempfile::TempDir) {
    let addr = support::http::serve(Router::new().fallback(serve)).await;
    let (builder, frontier, dir) = crawler::embedded(crawler::config(&[
        "http.agent.name=squall",
        "fetcher.server.delay=0",
        "fetcher.threads.per.queue=4",
        "spout.min.delay.queries=50",
        "status.updater.flush.interval=0.1",
        &format!("http.content.limit={LIMIT}"),
    ]));
    let crawler = builder
        .resolve("long.test", addr)
        .resolve("huge.test", addr)
        .resolve("text.test", addr)
        .build()
        .expect("crawler");
    let seeds = [
        format!("http://long.test:{}/", addr.port()),
        format!("http://huge.test:{}/", addr.port()),
        format!("http://text.test:{}/", addr.port()),
    ];
    crawler.inject(seeds.iter().map(String::as_str)).await;
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(90))).await;
    assert!(summary.clean_shutdown, "{summary}");
    (frontier, addr.port(), dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_cut_at_the_content_limit_keeps_its_whole_entries_and_records_the_cut() {
    let (frontier, port, _dir) = crawl().await;
    let lookup = |url: &str| frontier.lookup(url).expect("lookup");
    let origin = format!("http://long.test:{port}");
    let sitemap = lookup(&format!("{origin}/sitemap.xml")).expect("the sitemap is stored");
    assert_eq!(sitemap.status, Status::Fetched);
    assert_eq!(sitemap.metadata.first(keys::TRIMMED), Some("true"));
    let record = sitemap
        .metadata
        .first(keys::SITEMAP_TRIMMED)
        .unwrap_or_default();
    assert!(
        record.contains(&format!("first {LIMIT} bytes")) && record.contains("http.content.limit"),
        "{record}"
    );
    // The entries whole within the limit, and only they, were taken, and the record counts them.
    let body = urlset(&origin, ENTRIES);
    let whole = (0..ENTRIES)
        .take_while(|&i| {
            let end = format!("{}</loc>", entry_path(i));
            body.find(&end).is_some_and(|at| at + end.len() <= LIMIT)
        })
        .count();
    assert!(whole > 5 && whole < ENTRIES / 2, "{whole}");
    for i in 0..ENTRIES {
        let stored = lookup(&format!("{origin}{}", entry_path(i)));
        assert_eq!(stored.is_some(), i < whole, "entry {i} of {whole} whole");
    }
    assert!(
        record.contains(&format!("{whole} entries kept")),
        "{record}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_cut_before_its_first_entry_is_an_error_that_says_so() {
    let (frontier, port, _dir) = crawl().await;
    let url = format!("http://huge.test:{port}/sitemap.xml");
    let sitemap = frontier.lookup(&url).expect("lookup").expect("stored");
    assert_eq!(sitemap.status, Status::Error);
    assert_eq!(sitemap.metadata.first(keys::ERROR_CAUSE), Some("sitemap"));
    assert_eq!(sitemap.metadata.first(keys::SITEMAP_TRIMMED), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_sitemap_cut_mid_line_takes_its_whole_lines_only() {
    let (frontier, port, _dir) = crawl().await;
    let origin = format!("http://text.test:{port}");
    let lookup = |url: &str| frontier.lookup(url).expect("lookup");
    let sitemap = lookup(&format!("{origin}/sitemap.xml")).expect("stored");
    assert_eq!(sitemap.status, Status::Fetched);
    let record = sitemap
        .metadata
        .first(keys::SITEMAP_TRIMMED)
        .unwrap_or_default();
    let line = format!("{origin}{}\n", entry_path(0)).len();
    let whole = LIMIT / line;
    assert!(!LIMIT.is_multiple_of(line), "the limit falls inside a line");
    assert!(
        record.contains(&format!("{whole} entries kept")),
        "{record}"
    );
    for i in 0..=whole {
        let stored = lookup(&format!("{origin}{}", entry_path(i)));
        assert_eq!(stored.is_some(), i < whole, "entry {i} of {whole} whole");
    }
    // The line cut at the limit is not taken as a URL of its own.
    let body = text_sitemap(&origin);
    let partial = body.get(whole * line..LIMIT).expect("a partial line");
    assert!(lookup(partial).is_none(), "{partial} was taken");
}
