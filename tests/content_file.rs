//! The content indexer on the embedded frontier, writing JSON lines: every fetched HTML page is
//! indexed once, noindex pages and content that is not HTML are not, canonical URLs are honoured,
//! and a URL is acked only once its line is written.

use crate::support;
use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;
use squall::index::document_id;
use squall::model::Status;
use squall::topology::{RunLimits, StopReason};
use support::content_site::ContentSite;
use support::crawler;

fn config(file: &std::path::Path) -> squall::config::CrawlConfig {
    crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.02",
        "spout.min.delay.queries=100",
        "indexer.kind=file",
        &format!("indexer.file={}", file.display()),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fetched_html_page_is_indexed_once_as_stormcrawler_would() {
    let site = ContentSite::start().await;
    let files = tempfile::tempdir().expect("temp dir");
    let file = files.path().join("content.jsonl");
    let (builder, frontier, _dir) = crawler::embedded(config(&file));
    let crawler = site.resolve(builder).build().expect("crawler");
    crawler
        .inject(site.seeds().iter().map(String::as_str))
        .await;
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(120))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    assert_eq!(summary.write_failures, 0, "{summary}");

    for url in site.fetched_urls() {
        let stored = frontier.lookup(&url).expect("lookup").map(|s| s.status);
        assert_eq!(stored, Some(Status::Fetched), "{url}");
    }
    let text = std::fs::read_to_string(&file).expect("the content file");
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let urls: Vec<&str> = lines
        .iter()
        .map(|line| line["url"].as_str().expect("url"))
        .collect();
    let distinct: BTreeSet<String> = urls.iter().map(|u| u.to_string()).collect();
    assert_eq!(urls.len(), distinct.len(), "a page indexed twice: {urls:?}");
    assert_eq!(distinct, site.indexed_urls());
    for url in site.not_indexed_urls() {
        assert!(!distinct.contains(&url), "{url} was indexed");
    }
    for line in &lines {
        let url = line["url"].as_str().expect("url");
        assert_eq!(line["id"].as_str(), Some(document_id(url).as_str()));
        assert_eq!(line["document"]["url"].as_str(), Some(url));
    }

    let home_url = site.url("www.site.test", "/");
    let home = lines
        .iter()
        .find(|line| line["url"] == home_url.as_str())
        .expect("the home page");
    let document = &home["document"];
    assert_eq!(document["title"], "Home");
    assert_eq!(document["description"], "The home page");
    assert_eq!(document["keywords"], "alpha, beta");
    assert_eq!(document["host"], "www.site.test");
    assert_eq!(document["domain"], "site.test");
    let content = document["content"].as_str().expect("text");
    assert!(content.starts_with("Welcome home."), "{content}");
    let blog = site.url("blog.site.test", "/");
    let blog = lines
        .iter()
        .find(|l| l["url"] == blog.as_str())
        .expect("blog");
    assert_eq!(blog["document"]["host"], "blog.site.test");
    assert_eq!(blog["document"]["domain"], "site.test");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_content_write_fails_is_not_acked_and_stays_due() {
    let site = ContentSite::start().await;
    // A real device on which every write fails ("no space left on device").
    let (builder, frontier, _dir) = crawler::embedded(config(std::path::Path::new("/dev/full")));
    let crawler = site.resolve(builder).build().expect("crawler");
    let html = site.url("www.site.test", "/a");
    let text = site.url("www.site.test", "/notes.txt");
    crawler.inject([html.as_str(), text.as_str()]).await;
    // Stop once both were processed: the text page written, the HTML page failed (or, were it
    // acked without its content, written too).
    let stats = crawler.stats();
    let stop = crawler.stop_token();
    tokio::spawn(async move {
        while stats.pages() < 2 && (stats.pages() < 1 || stats.write_failures() < 1) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.cancel();
    });
    let summary = crawler
        .run(RunLimits::default().with_max_duration(Duration::from_secs(120)))
        .await;
    assert_eq!(summary.stop_reason, StopReason::Requested, "{summary}");
    assert_eq!(summary.write_failures, 1, "{summary}");
    let status = |url: &str| frontier.lookup(url).expect("lookup").map(|s| s.status);
    assert_eq!(
        status(&html),
        Some(Status::Discovered),
        "its status was written although its content was not"
    );
    assert_eq!(
        status(&text),
        Some(Status::Fetched),
        "nothing to index: acked"
    );
}
