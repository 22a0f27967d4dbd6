//! HTTP behaviour against real servers on loopback: conditional re-fetches, redirects followed or
//! recorded, the private-address guard, and links found only inside `<noscript>`.

use crate::support;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use squall::config::CrawlConfig;
use squall::frontier::{EmbeddedFrontier, StatusStore, StatusWrite};
use squall::model::{CrawlUrl, Status, keys};
use squall::topology::RunLimits;
use support::crawler;
use support::http::html;

type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

async fn serve(State(seen): State<Seen>, headers: HeaderMap, uri: Uri) -> Response {
    let condition = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Ok(mut seen) = seen.lock() {
        seen.push((uri.path().to_string(), condition.clone()));
    }
    match uri.path() {
        "/page" if condition.as_deref() == Some("\"v1\"") => {
            StatusCode::NOT_MODIFIED.into_response()
        }
        "/page" => (
            [
                (header::CONTENT_TYPE, "text/html"),
                (header::ETAG, "\"v1\""),
            ],
            "<a href=/other>o</a>",
        )
            .into_response(),
        // A documentation generator's book: the sidebar is built by script, and the table of
        // contents is reachable only through the <noscript> iframe.
        "/book/" => html(
            "<html><head><script src=/book/toc.js></script></head><body><nav id=sidebar></nav>\
             <noscript><iframe class=sidebar-iframe-outer src=toc.html></iframe></noscript>\
             <main>Introduction</main></body></html>",
        ),
        "/book/toc.html" => html("<ol><li><a href=chapter-1.html>One</a></li></ol>"),
        "/book/chapter-1.html" => html("<p>Chapter one</p>"),
        "/hop" => (StatusCode::FOUND, [(header::LOCATION, "/landing")]).into_response(),
        "/landing" => ([(header::CONTENT_TYPE, "text/html")], "<a href=next>n</a>").into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn server() -> (std::net::SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let addr = support::http::serve(Router::new().fallback(serve).with_state(seen.clone())).await;
    (addr, seen)
}

fn config(extra: &[&str]) -> CrawlConfig {
    let mut settings = vec![
        "http.agent.name=squall-test",
        "fetcher.server.delay=0",
        "spout.min.delay.queries=50",
        "spout.ttl.purgatory=0",
    ];
    settings.extend_from_slice(extra);
    crawler::config(&settings)
}

async fn crawl(
    config: CrawlConfig,
    seeds: &[String],
    addr: std::net::SocketAddr,
    limits: RunLimits,
) -> (EmbeddedFrontier, tempfile::TempDir) {
    let (builder, frontier, dir) = crawler::embedded(config);
    let crawler = builder.resolve("site.test", addr).build().expect("crawler");
    crawler.inject(seeds.iter().map(String::as_str)).await;
    crawler.run(limits).await;
    (frontier, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refetch_is_conditional_and_304_keeps_the_page_fetched() {
    let (addr, seen) = server().await;
    let page = format!("http://site.test:{}/page", addr.port());
    // Due again at once: the page is fetched, then re-fetched with its ETag.
    let config = config(&["fetchInterval.default=0", "redirections.allowed=false"]);
    let limits = RunLimits::default()
        .with_max_pages(4)
        .with_max_duration(Duration::from_secs(30));
    let (frontier, _dir) = crawl(config, std::slice::from_ref(&page), addr, limits).await;
    let requests: Vec<(String, Option<String>)> = seen
        .lock()
        .expect("seen")
        .iter()
        .filter(|(path, _)| path == "/page")
        .cloned()
        .collect();
    assert!(requests.len() >= 2, "{requests:?}");
    assert_eq!(requests[0].1, None, "the first fetch is unconditional");
    assert_eq!(
        requests[1].1.as_deref(),
        Some("\"v1\""),
        "the re-fetch sends If-None-Match"
    );
    // The server answered that re-fetch 304 Not Modified: the page stays FETCHED, validator kept.
    let stored = frontier.lookup(&page).expect("lookup").expect("stored");
    assert_eq!(stored.status, Status::Fetched);
    assert_eq!(stored.metadata.first(keys::ETAG), Some("\"v1\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_recorded_by_default_and_followed_on_request() {
    let (addr, _seen) = server().await;
    let hop = format!("http://site.test:{}/hop", addr.port());
    let landing = format!("http://site.test:{}/landing", addr.port());
    let next = format!("http://site.test:{}/next", addr.port());
    let idle = RunLimits::until_idle().with_max_duration(Duration::from_secs(30));

    let (recorded, _dir1) =
        crawl(config(&[]), std::slice::from_ref(&hop), addr, idle.clone()).await;
    let stored = recorded.lookup(&hop).expect("lookup").expect("stored");
    assert_eq!(stored.status, Status::Redirection);
    assert_eq!(
        stored.metadata.first(keys::REDIRECT_TO),
        Some(landing.as_str())
    );
    assert_eq!(
        recorded.lookup(&landing).expect("lookup").map(|s| s.status),
        Some(Status::Fetched)
    );

    let (followed, _dir2) = crawl(
        config(&["http.allow.redirects=true"]),
        std::slice::from_ref(&hop),
        addr,
        idle,
    )
    .await;
    let stored = followed.lookup(&hop).expect("lookup").expect("stored");
    assert_eq!(stored.status, Status::Fetched);
    assert_eq!(
        stored.metadata.first(keys::REDIRECT_TO),
        Some(landing.as_str())
    );
    // Links on the landing page resolve against the landing page.
    assert!(followed.lookup(&next).expect("lookup").is_some());
}

/// URLs on loopback that the crawl found (in its frontier, not given as seeds: a page's links)
/// are refused by the guard, by address and by a name resolving to loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_private_address_guard_refuses_loopback() {
    let (addr, seen) = server().await;
    let by_ip = format!("http://127.0.0.1:{}/page", addr.port());
    let by_name = format!("http://localhost:{}/page", addr.port());
    let idle = RunLimits::until_idle().with_max_duration(Duration::from_secs(30));
    let config = config(&["http.refuse.private.addresses=true", "max.fetch.errors=1"]);
    let (builder, frontier, _dir) = crawler::embedded(config);
    let crawler = builder.resolve("site.test", addr).build().expect("crawler");
    let found = [&by_ip, &by_name].map(|url| StatusWrite {
        url: CrawlUrl::new(url::Url::parse(url).expect("url")),
        key: "found".to_string(),
        status: Status::Discovered,
        next_fetch: Some(chrono::Utc::now()),
        queue: Default::default(),
    });
    let stored = StatusStore::store(&frontier, found.to_vec()).await;
    assert!(stored.iter().all(Result::is_ok), "{stored:?}");
    crawler.run(idle).await;
    assert!(
        seen.lock().expect("seen").is_empty(),
        "the guard let a request through"
    );
    for url in [&by_ip, &by_name] {
        let refused = frontier.lookup(url).expect("lookup").expect("stored");
        assert_eq!(
            refused.status,
            Status::Error,
            "{url}: {:?}",
            refused.metadata
        );
        assert_eq!(
            refused.metadata.first(keys::ERROR_CAUSE),
            Some("private_address"),
            "{url}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_reached_only_through_a_noscript_iframe_is_crawled() {
    let (addr, seen) = server().await;
    let book = format!("http://site.test:{}/book/", addr.port());
    let idle = RunLimits::until_idle().with_max_duration(Duration::from_secs(30));
    let config = config(&["urlfilter.ignore.outside.host=true"]);
    let (frontier, _dir) = crawl(config, std::slice::from_ref(&book), addr, idle).await;
    for path in ["/book/toc.html", "/book/chapter-1.html"] {
        let url = format!("http://site.test:{}{path}", addr.port());
        let stored = frontier.lookup(&url).expect("lookup");
        assert_eq!(stored.map(|s| s.status), Some(Status::Fetched), "{url}");
    }
    let paths: Vec<String> = seen
        .lock()
        .expect("seen")
        .iter()
        .map(|(path, _)| path.clone())
        .collect();
    assert!(
        paths.iter().any(|p| p == "/book/chapter-1.html"),
        "{paths:?}"
    );
}
