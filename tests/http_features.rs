//! HTTP for real sites, against real servers on loopback: a forward proxy that every request goes
//! through with its credentials, custom headers, a cookie jar, Basic credentials for one host only,
//! and politeness queues by registrable domain and by resolved IP address.

use crate::support;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeDelta, Utc};
use squall::config::CrawlConfig;
use squall::frontier::EmbeddedFrontier;
use squall::message::{CrawlEvent, CrawlObserver};
use squall::model::{Status, keys};
use squall::topology::{CrawlerBuilder, StopReason};
use support::crawler;
use support::http::html;
use support::proxy::ForwardProxy;
use support::socks::SocksProxy;

/// `Basic` credentials `crawler:s3cret`.
const SITE_AUTHORIZATION: &str = "Basic Y3Jhd2xlcjpzM2NyZXQ=";
/// `Basic` credentials `proxyuser:pr0xy`.
const PROXY_AUTHORIZATION: &str = "Basic cHJveHl1c2VyOnByMHh5";

/// A request one of the test servers received.
#[derive(Debug, Clone)]
struct Received {
    host: String,
    path: String,
    headers: HeaderMap,
}

type Log = Arc<Mutex<Vec<Received>>>;

/// The pages of every test host; what a page answers depends on its host and on the request's
/// headers (cookie, credentials).
async fn serve(State(log): State<Log>, headers: HeaderMap, uri: Uri) -> Response {
    let authority = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let (host, port) = authority.split_once(':').unwrap_or((&authority, "80"));
    let (host, path) = (host.to_string(), uri.path().to_string());
    if let Ok(mut log) = log.lock() {
        log.push(Received {
            host: host.clone(),
            path: path.clone(),
            headers: headers.clone(),
        });
    }
    let has = |name: header::HeaderName, wanted: &str| {
        headers
            .get_all(name)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.contains(wanted)))
    };
    match (host.as_str(), path.as_str()) {
        (_, "/robots.txt") => StatusCode::NOT_FOUND.into_response(),
        ("cookies.test", "/") => (
            [(header::SET_COOKIE, "session=abc; Path=/")],
            html(format!(
                "<a href=/needs-cookie>in</a> <a href=http://other.test:{port}/needs-cookie>out</a>"
            )),
        )
            .into_response(),
        ("greedy.test", path) if path.starts_with("/g/") => greedy_page(path),
        (_, "/needs-cookie") if has(header::COOKIE, "session=abc") => html("<p>welcome back</p>"),
        (_, "/needs-cookie") => StatusCode::FORBIDDEN.into_response(),
        ("auth.test", "/private") if has(header::AUTHORIZATION, SITE_AUTHORIZATION) => {
            html(format!("<a href=http://open.test:{port}/page>open</a>"))
        }
        ("auth.test", "/private") => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"test\"")],
        )
            .into_response(),
        ("one.byip.test", "/") => html(format!(
            "<a href=/a>a</a> <a href=/b>b</a> <a href=http://two.byip.test:{port}/from-one>2</a>"
        )),
        (_, "/") => html("<a href=/a>a</a> <a href=/b>b</a>"),
        _ => html("<p>a page</p>"),
    }
}

/// Pages `/g/0` (linking to all the others) to `/g/{GREEDY_PAGES}`, each setting a cookie of a new name (and the
/// first one a cookie over 4 KiB), as a hostile site would to grow a crawler's cookie jar.
fn greedy_page(path: &str) -> Response {
    let at: usize = path.trim_start_matches("/g/").parse().unwrap_or(0);
    let mut cookies = vec![format!("c{at}=v; Path=/")];
    if at == 0 {
        cookies.push(format!("big={}; Path=/", "x".repeat(5000)));
    }
    let mut headers = HeaderMap::new();
    for cookie in cookies {
        if let Ok(value) = cookie.parse() {
            headers.append(header::SET_COOKIE, value);
        }
    }
    let links = match at {
        0 => (1..=GREEDY_PAGES)
            .map(|n| format!("<a href=/g/{n}>{n}</a>"))
            .collect(),
        _ => String::new(),
    };
    (headers, html(links)).into_response()
}

/// The last of the greedy site's pages: more than the 50 cookies a domain may keep.
const GREEDY_PAGES: usize = 80;

/// A server of every test host on `ip` (a loopback address), with the log of its requests.
async fn server_on(ip: &str) -> (SocketAddr, Log) {
    let log: Log = Arc::default();
    let app = Router::new().fallback(serve).with_state(log.clone());
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, log)
}

fn received(log: &Log) -> Vec<Received> {
    log.lock().map(|l| l.clone()).unwrap_or_default()
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

/// Crawls from `seed` until idle on a fresh embedded frontier, `hosts` resolved to `addr`.
async fn crawl(
    config: CrawlConfig,
    hosts: &[&str],
    addr: SocketAddr,
    seed: &str,
) -> (EmbeddedFrontier, tempfile::TempDir) {
    let (builder, frontier, dir) = crawler::embedded(config);
    let hosts = hosts.iter().map(|h| h.to_string()).collect();
    let crawler = crawler::resolve_hosts(builder, hosts, addr)
        .build()
        .expect("crawler");
    crawler.inject([seed]).await;
    let summary = crawler::run_until_idle(crawler, None).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);
    (frontier, dir)
}

fn status_of(frontier: &EmbeddedFrontier, url: &str) -> Option<Status> {
    frontier.lookup(url).expect("lookup").map(|s| s.status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_goes_through_the_proxy_with_its_credentials() {
    let (origin, log) = server_on("127.0.0.1").await;
    let routes = HashMap::from([("proxied.test".to_string(), origin)]);
    let proxy = ForwardProxy::start(routes, Some(PROXY_AUTHORIZATION.to_string())).await;
    // Were the proxy bypassed, the name would lead to a closed loopback port, never to DNS.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let port = origin.port();
    let config = config(&[
        "http.proxy.host=127.0.0.1",
        &format!("http.proxy.port={}", proxy.addr.port()),
        "http.proxy.user=proxyuser",
        "http.proxy.pass=pr0xy",
    ]);
    let seed = format!("http://proxied.test:{port}/");
    let (frontier, _dir) = crawl(config, &["proxied.test"], closed, &seed).await;

    for path in ["/", "/a", "/b"] {
        let url = format!("http://proxied.test:{port}{path}");
        assert_eq!(status_of(&frontier, &url), Some(Status::Fetched), "{url}");
    }
    let through_proxy = proxy.requests();
    let mut targets: Vec<&str> = through_proxy.iter().map(|r| r.target.as_str()).collect();
    targets.sort_unstable();
    let expected: Vec<String> = ["/", "/a", "/b", "/robots.txt"]
        .iter()
        .map(|path| format!("http://proxied.test:{port}{path}"))
        .collect();
    assert_eq!(targets, expected, "absolute-form requests, robots.txt too");
    for request in &through_proxy {
        assert_eq!(
            request.authorization.as_deref(),
            Some(PROXY_AUTHORIZATION),
            "{request:?}"
        );
        assert!(request.forwarded, "{request:?}");
    }
    let at_origin = received(&log);
    assert_eq!(at_origin.len(), through_proxy.len(), "nothing bypassed it");
    assert!(
        at_origin
            .iter()
            .all(|r| !r.headers.contains_key("proxy-authorization")),
        "the proxy's credentials stop at the proxy"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_proxy_credentials_fetch_nothing() {
    let (origin, log) = server_on("127.0.0.1").await;
    let routes = HashMap::from([("proxied.test".to_string(), origin)]);
    let proxy = ForwardProxy::start(routes, Some(PROXY_AUTHORIZATION.to_string())).await;
    let config = config(&[
        &format!(
            "http.proxy=http://proxyuser:wrong@127.0.0.1:{}",
            proxy.addr.port()
        ),
        "http.skip.robots=true",
    ]);
    let seed = format!("http://proxied.test:{}/", origin.port());
    let (frontier, _dir) = crawl(config, &[], origin, &seed).await;
    let stored = frontier.lookup(&seed).expect("lookup").expect("stored");
    assert_eq!(stored.status, Status::FetchError, "407 from the proxy");
    assert_eq!(proxy.requests().len(), 1);
    assert!(received(&log).is_empty(), "the proxy let nothing through");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socks_proxy_carries_every_connection_and_resolves_the_names() {
    let (origin, log) = server_on("127.0.0.1").await;
    let routes = HashMap::from([("socks.test".to_string(), origin)]);
    let credentials = ("proxyuser".to_string(), "pr0xy".to_string());
    let proxy = SocksProxy::start(routes, Some(credentials)).await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let config = config(&[
        "http.proxy.type=SOCKS",
        "http.proxy.host=127.0.0.1",
        &format!("http.proxy.port={}", proxy.addr.port()),
        "http.proxy.user=proxyuser",
        "http.proxy.pass=pr0xy",
    ]);
    let seed = format!("http://socks.test:{}/", origin.port());
    let (frontier, _dir) = crawl(config, &["socks.test"], closed, &seed).await;
    for path in ["/", "/a", "/b"] {
        let url = format!("http://socks.test:{}{path}", origin.port());
        assert_eq!(status_of(&frontier, &url), Some(Status::Fetched), "{url}");
    }
    let tunnels = proxy.tunnels();
    assert!(!tunnels.is_empty());
    for tunnel in &tunnels {
        assert_eq!(tunnel.target, format!("socks.test:{}", origin.port()));
        assert_eq!(tunnel.user.as_deref(), Some("proxyuser"));
    }
    assert_eq!(received(&log).len(), 4, "robots.txt, /, /a and /b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_headers_go_with_every_request() {
    let (addr, log) = server_on("127.0.0.1").await;
    let config = config(&["http.custom.headers=[\"X-Api-Key=s3cret=1\", \"Accept-Language=fr\"]"]);
    let seed = format!("http://headers.test:{}/", addr.port());
    let (frontier, _dir) = crawl(config, &["headers.test"], addr, &seed).await;
    assert_eq!(status_of(&frontier, &seed), Some(Status::Fetched));
    let requests = received(&log);
    assert_eq!(requests.len(), 4, "robots.txt, /, /a and /b: {requests:?}");
    for request in requests {
        let value = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(value("x-api-key"), Some("s3cret=1"), "{}", request.path);
        assert_eq!(value("accept-language"), Some("fr"), "{}", request.path);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_a_site_sets_come_back_to_it_only_when_asked() {
    let (addr, log) = server_on("127.0.0.1").await;
    let hosts = ["cookies.test", "other.test"];
    let seed = format!("http://cookies.test:{}/", addr.port());
    let inside = format!("http://cookies.test:{}/needs-cookie", addr.port());
    let outside = format!("http://other.test:{}/needs-cookie", addr.port());

    let (frontier, _dir) = crawl(config(&["http.use.cookies=true"]), &hosts, addr, &seed).await;
    assert_eq!(status_of(&frontier, &inside), Some(Status::Fetched));
    assert_eq!(
        status_of(&frontier, &outside),
        Some(Status::FetchError),
        "another host never gets the cookie"
    );
    let cookie_to_other_host = received(&log)
        .iter()
        .any(|r| r.host == "other.test" && r.headers.contains_key(header::COOKIE));
    assert!(!cookie_to_other_host);

    let (without, _dir) = crawl(config(&[]), &hosts, addr, &seed).await;
    assert_eq!(
        status_of(&without, &inside),
        Some(Status::FetchError),
        "without http.use.cookies no cookie is kept"
    );
}

/// A site setting a new cookie on every page: the jar keeps 50 for its domain, and sends no more
/// back; a cookie over 4 KiB is never kept (reqwest's own jar kept and sent them all).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_setting_a_new_cookie_on_every_page_gets_back_a_bounded_number() {
    let (addr, log) = server_on("127.0.0.1").await;
    let seed = format!("http://greedy.test:{}/g/0", addr.port());
    let last = format!("http://greedy.test:{}/g/{GREEDY_PAGES}", addr.port());
    let config = config(&["http.use.cookies=true"]);
    let (frontier, _dir) = crawl(config, &["greedy.test"], addr, &seed).await;
    assert_eq!(status_of(&frontier, &last), Some(Status::Fetched));
    let sent: Vec<Vec<String>> = received(&log)
        .iter()
        .filter(|r| r.host == "greedy.test")
        .map(|r| {
            let value = r.headers.get(header::COOKIE).and_then(|v| v.to_str().ok());
            let pairs = value
                .unwrap_or_default()
                .split("; ")
                .filter(|p| !p.is_empty());
            pairs
                .map(|p| p.split('=').next().unwrap_or_default().to_string())
                .collect()
        })
        .collect();
    let most = sent.iter().map(Vec::len).max().unwrap_or(0);
    assert_eq!(most, 50, "at most 50 cookies sent back, and that many kept");
    assert!(
        !sent.iter().flatten().any(|name| name == "big"),
        "the 5000-byte cookie is not kept"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_credentials_go_to_their_host_only() {
    let (addr, log) = server_on("127.0.0.1").await;
    let hosts = ["auth.test", "open.test"];
    let private = format!("http://auth.test:{}/private", addr.port());
    let open = format!("http://open.test:{}/page", addr.port());
    let credentials = "http.basicauth.hosts={auth.test: {user: crawler, password: s3cret}}";

    let (frontier, _dir) = crawl(config(&[credentials]), &hosts, addr, &private).await;
    assert_eq!(status_of(&frontier, &private), Some(Status::Fetched));
    assert_eq!(status_of(&frontier, &open), Some(Status::Fetched));
    let requests = received(&log);
    assert!(requests.iter().any(|r| r.host == "open.test"));
    for request in &requests {
        let sent = request.headers.get(header::AUTHORIZATION);
        match request.host.as_str() {
            "auth.test" => assert!(sent.is_some(), "{}", request.path),
            _ => assert!(sent.is_none(), "{} got the credentials", request.host),
        }
    }

    let (without, _dir) = crawl(config(&[]), &hosts, addr, &private).await;
    assert_eq!(
        status_of(&without, &private),
        Some(Status::FetchError),
        "401 without the credentials"
    );
}

/// One fetch: its URL, the fetcher queue it waited in, and when it ran.
#[derive(Debug, Clone)]
struct QueuedFetch {
    url: String,
    queue: String,
    started: DateTime<Utc>,
    finished: DateTime<Utc>,
}

/// Records the fetcher's queue of each fetch, and the frontier key each processed URL came with.
#[derive(Default)]
struct Queues {
    fetches: Mutex<Vec<QueuedFetch>>,
    frontier_keys: Mutex<BTreeMap<String, String>>,
}

impl CrawlObserver for Queues {
    fn on_event(&self, event: &CrawlEvent) {
        match event {
            CrawlEvent::Fetched { url, key, fetch } => {
                if let Ok(mut fetches) = self.fetches.lock() {
                    fetches.push(QueuedFetch {
                        url: url.clone(),
                        queue: key.clone(),
                        started: fetch.started,
                        finished: fetch.finished,
                    });
                }
            }
            CrawlEvent::Processed { url, key, .. } => {
                if let Ok(mut keys) = self.frontier_keys.lock() {
                    keys.insert(url.clone(), key.clone());
                }
            }
            _ => {}
        }
    }
}

impl Queues {
    fn fetches(&self) -> Vec<QueuedFetch> {
        self.fetches.lock().map(|f| f.clone()).unwrap_or_default()
    }

    fn frontier_keys(&self) -> BTreeMap<String, String> {
        self.frontier_keys
            .lock()
            .map(|k| k.clone())
            .unwrap_or_default()
    }

    /// The queue of every fetched URL, by host.
    fn queue_by_host(&self) -> BTreeMap<String, Vec<String>> {
        let mut by_host: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for fetch in self.fetches() {
            let host = url::Url::parse(&fetch.url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
                .unwrap_or_default();
            let queues = by_host.entry(host).or_default();
            if !queues.contains(&fetch.queue) {
                queues.push(fetch.queue);
            }
        }
        by_host
    }

    /// Asserts that the fetches of `queue` never overlapped and were at least `gap` apart.
    fn assert_polite(&self, queue: &str, gap: TimeDelta) {
        let mut spans: Vec<(DateTime<Utc>, DateTime<Utc>, String)> = self
            .fetches()
            .into_iter()
            .filter(|f| f.queue == queue)
            .map(|f| (f.started, f.finished, f.url))
            .collect();
        spans.sort();
        assert!(spans.len() >= 4, "{queue}: {spans:?}");
        for pair in spans.windows(2) {
            let (_, end, first) = &pair[0];
            let (next, _, second) = &pair[1];
            assert!(
                *next - *end >= gap,
                "{queue}: {second} started {:?} after {first} ended",
                *next - *end
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_domain_two_hosts_of_one_domain_share_one_queue() {
    let (addr, _log) = server_on("127.0.0.1").await;
    let hosts = ["a.shop.test", "b.shop.test", "c.other.test"];
    let delay = 0.2;
    let config = config(&[
        "partition.url.mode=byDomain",
        &format!("fetcher.server.delay={delay}"),
    ]);
    let (builder, _frontier, _dir) = crawler::embedded(config);
    let queues = Arc::new(Queues::default());
    let hosts_owned = hosts.iter().map(|h| h.to_string()).collect();
    let crawler = crawler::resolve_hosts(builder.observer(queues.clone()), hosts_owned, addr)
        .build()
        .expect("crawler");
    let seeds: Vec<String> = hosts
        .iter()
        .map(|h| format!("http://{h}:{}/", addr.port()))
        .collect();
    crawler.inject(seeds.iter().map(String::as_str)).await;
    let summary = crawler::run_until_idle(crawler, None).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);

    let by_host = queues.queue_by_host();
    assert_eq!(by_host["a.shop.test"], ["shop.test"]);
    assert_eq!(by_host["b.shop.test"], ["shop.test"]);
    assert_eq!(by_host["c.other.test"], ["other.test"]);
    queues.assert_polite(
        "shop.test",
        TimeDelta::milliseconds((delay * 1000.0) as i64),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_ip_host_names_on_one_address_share_one_queue() {
    // one.byip.test and two.byip.test are served from 127.0.0.2, three.byip.test from 127.0.0.3.
    let (shared, _log) = server_on("127.0.0.2").await;
    let (alone, _log) = server_on("127.0.0.3").await;
    let unresolvable = format!("{}.invalid", "x".repeat(64));
    let seeds = [
        format!("http://one.byip.test:{}/", shared.port()),
        format!("http://two.byip.test:{}/", shared.port()),
        format!("http://three.byip.test:{}/", alone.port()),
        format!("http://{unresolvable}/"),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = EmbeddedFrontier::open(dir.path()).expect("frontier");
    let pinned = |builder: CrawlerBuilder| {
        builder
            .resolve("one.byip.test", shared)
            .resolve("two.byip.test", shared)
            .resolve("three.byip.test", alone)
    };
    // The seeds are written keyed by host name, as another process or an older index might have
    // them: the fetcher must queue them by address all the same.
    let by_host = CrawlerBuilder::new(config(&[]))
        .frontier(frontier.spout(crawler::TEST_QUERY_LIMITS), frontier.clone());
    let injector = pinned(by_host).build().expect("crawler");
    assert_eq!(
        injector
            .inject(seeds.iter().map(String::as_str))
            .await
            .accepted,
        4
    );
    drop(injector);

    let delay = 0.2;
    let config = config(&[
        "partition.url.mode=byIP",
        &format!("fetcher.server.delay={delay}"),
    ]);
    let queues = Arc::new(Queues::default());
    let by_ip = CrawlerBuilder::new(config)
        .frontier(frontier.spout(crawler::TEST_QUERY_LIMITS), frontier.clone())
        .observer(queues.clone());
    let crawler = pinned(by_ip).build().expect("crawler");
    let summary = crawler::run_until_idle(crawler, None).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);

    let by_host = queues.queue_by_host();
    assert_eq!(by_host["one.byip.test"], ["127.0.0.2"]);
    assert_eq!(by_host["two.byip.test"], ["127.0.0.2"]);
    assert_eq!(by_host["three.byip.test"], ["127.0.0.3"]);
    queues.assert_polite(
        "127.0.0.2",
        TimeDelta::milliseconds((delay * 1000.0) as i64),
    );

    // Outlinks found in the byIP crawl were written keyed by address.
    let frontier_keys = queues.frontier_keys();
    let outlink = format!("http://two.byip.test:{}/from-one", shared.port());
    assert_eq!(
        frontier_keys.get(&outlink).map(String::as_str),
        Some("127.0.0.2")
    );
    assert_eq!(
        frontier_keys.get(&seeds[0]).map(String::as_str),
        Some("one.byip.test"),
        "the seed kept the key it was written with"
    );

    // A host that does not resolve: FETCH_ERROR without a request.
    let stored = frontier.lookup(&seeds[3]).expect("lookup").expect("stored");
    assert_eq!(stored.status, Status::FetchError);
    assert_eq!(stored.metadata.first(keys::ERROR_CAUSE), Some("connection"));
    assert!(queues.fetches().iter().all(|f| f.url != seeds[3]));
}
