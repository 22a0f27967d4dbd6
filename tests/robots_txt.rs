//! robots.txt end to end: real sites on loopback answering robots.txt in every way RFC 9309 covers.

use crate::support;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use squall::frontier::EmbeddedFrontier;
use squall::model::{Status, keys};
use support::crawler;
use support::http::html;

type Log = Arc<Mutex<Vec<(String, String, std::time::Instant)>>>;

async fn serve(State(log): State<Log>, headers: HeaderMap, uri: Uri) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.split(':').next())
        .unwrap_or_default()
        .to_string();
    let path = uri.path().to_string();
    if let Ok(mut log) = log.lock() {
        log.push((host.clone(), path.clone(), std::time::Instant::now()));
    }
    let port = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.split(':').nth(1))
        .unwrap_or("80")
        .to_string();
    match (host.as_str(), path.as_str()) {
        ("rules.test", "/robots.txt") => {
            "User-agent: otherbot\nDisallow: /\n\nUser-agent: squall\nDisallow: /private/\nAllow: /private/open\n"
                .into_response()
        }
        ("r404.test", "/robots.txt") => StatusCode::NOT_FOUND.into_response(),
        ("r503.test", "/robots.txt") => StatusCode::SERVICE_UNAVAILABLE.into_response(),
        ("slow.test", "/robots.txt") => "User-agent: *\nCrawl-delay: 1\n".into_response(),
        ("tooslow.test", "/robots.txt") => "User-agent: *\nCrawl-delay: 120\n".into_response(),
        ("moved.test", "/robots.txt") => {
            (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, "/real-robots.txt")]).into_response()
        }
        ("moved.test", "/real-robots.txt") => "User-agent: *\nDisallow: /x\n".into_response(),
        ("sitemap.test", "/robots.txt") => {
            format!("User-agent: *\nAllow: /\nSitemap: http://sitemap.test:{port}/sitemap.xml\n").into_response()
        }
        ("sitemap.test", "/sitemap.xml") => (
            [(header::CONTENT_TYPE, "application/xml")],
            format!(
                "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                 <url><loc>http://sitemap.test:{port}/only-in-sitemap</loc></url></urlset>"
            ),
        )
            .into_response(),
        (_, "/") => html(
            "<a href=/private/secret>s</a><a href=/private/open>o</a><a href=/x>x</a><a href=/a>a</a>\
             <a href=/b>b</a><a href=/c>c</a>",
        ),
        (_, "/robots.txt") => StatusCode::NOT_FOUND.into_response(),
        _ => html("leaf"),
    }
}

struct Crawl {
    port: u16,
    log: Log,
    frontier: EmbeddedFrontier,
    _dir: tempfile::TempDir,
}

impl Crawl {
    fn status(&self, host: &str, path: &str) -> Option<(Status, Option<String>)> {
        let url = format!("http://{host}:{}{path}", self.port);
        self.frontier.lookup(&url).ok().flatten().map(|s| {
            (
                s.status,
                s.metadata.first(keys::ERROR_CAUSE).map(str::to_string),
            )
        })
    }

    fn requested(&self, host: &str) -> Vec<(String, std::time::Instant)> {
        self.log
            .lock()
            .map(|log| {
                log.iter()
                    .filter(|(h, _, _)| h == host)
                    .map(|(_, p, t)| (p.clone(), *t))
                    .collect()
            })
            .unwrap_or_default()
    }
}

async fn crawl(hosts: &[&str]) -> Crawl {
    let log: Log = Arc::default();
    let addr = support::http::serve(Router::new().fallback(serve).with_state(log.clone())).await;
    let (mut builder, frontier, dir) = crawler::embedded(crawler::config(&[
        "http.agent.name=squall",
        "fetcher.server.delay=0",
        "spout.min.delay.queries=50",
        "urlfilter.ignore.outside.host=true",
        "http.timeout=5000",
    ]));
    for host in hosts {
        // Nothing listens on 127.0.0.2 at this port: that host is unreachable.
        let target = if *host == "unreachable.test" {
            SocketAddr::new("127.0.0.2".parse().expect("ip"), addr.port())
        } else {
            addr
        };
        builder = builder.resolve(*host, target);
    }
    let crawler = builder.build().expect("crawler");
    let seeds: Vec<String> = hosts
        .iter()
        .map(|h| format!("http://{h}:{}/", addr.port()))
        .collect();
    crawler.inject(seeds.iter().map(String::as_str)).await;
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(60))).await;
    assert!(summary.clean_shutdown, "{summary}");
    Crawl {
        port: addr.port(),
        log,
        frontier,
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_rules_are_obeyed_and_refusals_carry_the_reason() {
    let c = crawl(&["rules.test", "moved.test"]).await;
    assert_eq!(c.status("rules.test", "/"), Some((Status::Fetched, None)));
    assert_eq!(
        c.status("rules.test", "/private/secret"),
        Some((Status::Error, Some("robots.txt".to_string())))
    );
    assert_eq!(
        c.status("rules.test", "/private/open").map(|s| s.0),
        Some(Status::Fetched)
    );
    let paths: Vec<String> = c.requested("rules.test").into_iter().map(|r| r.0).collect();
    assert!(!paths.contains(&"/private/secret".to_string()), "{paths:?}");
    assert_eq!(
        paths.iter().filter(|p| *p == "/robots.txt").count(),
        1,
        "robots.txt is cached"
    );
    // robots.txt behind a redirect is followed.
    assert_eq!(
        c.status("moved.test", "/x"),
        Some((Status::Error, Some("robots.txt".to_string())))
    );
    assert_eq!(
        c.status("moved.test", "/a").map(|s| s.0),
        Some(Status::Fetched)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_errors_allow_all_server_errors_and_unreachable_sites_allow_nothing() {
    let c = crawl(&["r404.test", "r503.test", "unreachable.test"]).await;
    assert_eq!(
        c.status("r404.test", "/a").map(|s| s.0),
        Some(Status::Fetched)
    );
    assert_eq!(
        c.status("r503.test", "/"),
        Some((Status::FetchError, Some("robots.txt".to_string())))
    );
    let r503: Vec<String> = c.requested("r503.test").into_iter().map(|r| r.0).collect();
    assert_eq!(
        r503,
        ["/robots.txt"],
        "nothing but robots.txt is requested from a 5xx site"
    );
    assert_eq!(
        c.status("unreachable.test", "/"),
        Some((Status::FetchError, Some("robots.txt".to_string())))
    );
}

/// Why a robots.txt could not be read carries its cause, not only reqwest's terse "error sending
/// request".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_robots_txt_is_refused_with_its_cause() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|socket| socket.local_addr())
        .expect("a free port")
        .port();
    let config = squall::protocol::HttpSettings::default();
    let robots = squall::protocol::RobotsCache::new(
        &config,
        &squall::protocol::HttpContext::new(&config),
        "squall-test",
        &squall::protocol::RobotsSettings {
            cache_ttl: std::time::Duration::from_secs(60),
            error_cache_ttl: std::time::Duration::from_secs(60),
            ..Default::default()
        },
    )
    .expect("robots cache");
    let page = url::Url::parse(&format!("http://127.0.0.1:{port}/page")).expect("url");
    let lookup = robots.rules_for(&page).await;
    let (reason, is_final) = lookup.rules.refusal(&page).expect("refused for now");
    assert!(!is_final);
    assert!(reason.contains("robots.txt unavailable"), "{reason}");
    assert!(reason.to_lowercase().contains("refused"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_is_honoured_and_an_excessive_one_is_refused() {
    let c = crawl(&["slow.test", "tooslow.test"]).await;
    let mut pages: Vec<std::time::Instant> = c
        .requested("slow.test")
        .into_iter()
        .filter(|(p, _)| p != "/robots.txt")
        .map(|(_, t)| t)
        .collect();
    pages.sort();
    assert_eq!(pages.len(), 7, "the home page and its six links");
    for pair in pages.windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_secs(1),
            "Crawl-delay not kept: {pair:?}"
        );
    }
    assert_eq!(
        c.status("tooslow.test", "/"),
        Some((Status::Error, Some("crawl_delay".to_string())))
    );
    let tooslow: Vec<String> = c
        .requested("tooslow.test")
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(tooslow, ["/robots.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemap_lines_become_discovered_urls() {
    let c = crawl(&["sitemap.test"]).await;
    let listed = c
        .frontier
        .lookup(&format!("http://sitemap.test:{}/only-in-sitemap", c.port))
        .expect("lookup")
        .expect("stored");
    assert_eq!(
        listed.metadata.first(keys::SITEMAP_SOURCE),
        Some(format!("http://sitemap.test:{}/sitemap.xml", c.port).as_str()),
        "URLs from a sitemap are marked with it"
    );
    let sitemap = c.status("sitemap.test", "/sitemap.xml");
    assert_eq!(sitemap.map(|s| s.0), Some(Status::Fetched));
    assert_eq!(
        c.status("sitemap.test", "/only-in-sitemap").map(|s| s.0),
        Some(Status::Fetched),
        "a URL listed only in the sitemap was crawled"
    );
    let requests: BTreeMap<String, usize> =
        c.requested("sitemap.test")
            .into_iter()
            .fold(BTreeMap::new(), |mut m, (p, _)| {
                *m.entry(p).or_default() += 1;
                m
            });
    assert_eq!(requests.get("/sitemap.xml"), Some(&1));
}
