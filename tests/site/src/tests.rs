//! Tests of the test site, with a real HTTP client and an
//! independent minimal crawler.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::{ExpectedStatus, Site, SiteSpec};
use url::Url;

fn client(site: &Site) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    for host in site.host_names() {
        b = b.resolve(&host, site.addr());
    }
    b.build().expect("client")
}

/// Attribute `name` of a tag's inner text (`a href="x" rel="y"`).
fn attr(tag: &str, name: &str) -> Option<String> {
    let pat = format!(" {name}=\"");
    let start = tag.find(&pat)? + pat.len();
    let len = tag[start..].find('"')?;
    Some(
        tag[start..start + len]
            .replace("&amp;", "&")
            .replace("&quot;", "\""),
    )
}

/// `(href, nofollow)` of every `<a>`, and the `<base href>` if any.
fn parse_links(html: &str) -> (Option<String>, Vec<(String, bool)>) {
    let mut base = None;
    let mut links = Vec::new();
    for chunk in html.split('<').skip(1) {
        let Some(end) = chunk.find('>') else { continue };
        let tag = &chunk[..end];
        if tag.starts_with("base ") && base.is_none() {
            base = attr(tag, "href");
        } else if tag.starts_with("a ")
            && let Some(href) = attr(tag, "href")
        {
            let nofollow = attr(tag, "rel").is_some_and(|r| {
                r.split_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("nofollow"))
            });
            links.push((href, nofollow));
        }
    }
    (base, links)
}

/// A minimal, independent, sequential crawler following the rules the
/// expectation assumes. Returns its view of every discovered URL.
async fn mini_crawl(site: &Site) -> BTreeMap<String, ExpectedStatus> {
    let client = client(site);
    let in_scope: BTreeSet<String> = site.in_scope_host_names().into_iter().collect();
    let mut disallow: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for host in &in_scope {
        let resp = client
            .get(site.url(host, "/robots.txt"))
            .send()
            .await
            .expect("robots");
        let mut rules = Vec::new();
        if resp.status().is_success() {
            let text = resp.text().await.expect("robots body");
            for line in text.lines() {
                if let Some(p) = line.strip_prefix("Disallow:") {
                    rules.push(p.trim().to_owned());
                }
            }
        }
        disallow.insert(host.clone(), rules);
    }
    let mut statuses = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<Url> = VecDeque::new();
    let discover = |mut u: Url, seen: &mut BTreeSet<String>, queue: &mut VecDeque<Url>| {
        u.set_fragment(None);
        let host = u.host_str().unwrap_or("").to_owned();
        if in_scope.contains(&host) && seen.insert(u.to_string()) {
            queue.push_back(u);
        }
    };
    for s in site.seeds() {
        discover(Url::parse(&s).expect("seed"), &mut seen, &mut queue);
    }
    while let Some(u) = queue.pop_front() {
        let host = u.host_str().unwrap_or("").to_owned();
        if disallow[&host]
            .iter()
            .any(|p| !p.is_empty() && u.path().starts_with(p.as_str()))
        {
            statuses.insert(u.to_string(), ExpectedStatus::RobotsDenied);
            continue;
        }
        let resp = client.get(u.clone()).send().await.expect("fetch");
        let status = resp.status();
        let st = if status.is_redirection() {
            let loc = resp.headers()["location"].to_str().expect("location");
            discover(u.join(loc).expect("location url"), &mut seen, &mut queue);
            ExpectedStatus::Redirection
        } else if status.is_success() {
            let ct = resp.headers()["content-type"]
                .to_str()
                .expect("ct")
                .to_owned();
            let body = resp.text().await.expect("body");
            if ct.starts_with("text/html") {
                assert!(body.contains("<title>"), "no title: {u}");
                let (base, links) = parse_links(&body);
                let base = match base {
                    Some(b) => u.join(&b).expect("base"),
                    None => u.clone(),
                };
                for (href, nofollow) in links {
                    if !nofollow {
                        discover(base.join(&href).expect("href"), &mut seen, &mut queue);
                    }
                }
            }
            ExpectedStatus::Fetched
        } else {
            ExpectedStatus::FetchError
        };
        statuses.insert(u.to_string(), st);
    }
    statuses
}

async fn crawl_matches_expectation(spec: SiteSpec) -> usize {
    let site = Site::start(spec).await.expect("start");
    let got = mini_crawl(&site).await;
    let expected = site.expected();
    assert_eq!(&got, expected.statuses());
    let problems = expected.check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");
    let n = site.request_count();
    site.shutdown().await;
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_crawl_of_small_site_matches_expectation() {
    for seed in [1, 2, 3, 0xDEAD_BEEF] {
        crawl_matches_expectation(SiteSpec::small().with_seed(seed)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_crawl_of_default_site_matches_expectation() {
    let n = crawl_matches_expectation(SiteSpec::default()).await;
    assert!(n > 1000, "{n} requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn degenerate_specs_work() {
    let tiny = SiteSpec {
        hosts: 1,
        pages_per_host: 1,
        outside_hosts: 0,
        robots_host: None,
        ..SiteSpec::small()
    };
    crawl_matches_expectation(tiny).await;
    let empty = SiteSpec {
        pages_per_host: 0,
        ..SiteSpec::small()
    };
    crawl_matches_expectation(empty).await;
}

#[test]
fn expectation_is_deterministic_and_seed_dependent() {
    let spec = SiteSpec::default();
    let a = spec.expectation(4242);
    assert_eq!(a, spec.expectation(4242));
    assert_eq!(a.to_json(), spec.clone().expectation(4242).to_json());
    assert_ne!(a, spec.with_seed(7).expectation(4242));
}

#[tokio::test]
async fn served_bytes_are_deterministic() {
    let spec = SiteSpec::small();
    let a = Site::start(spec.clone()).await.expect("a");
    let b = Site::start(spec).await.expect("b");
    let (pa, pb) = (a.port().to_string(), b.port().to_string());
    let ea = a.expected();
    let mut compared = 0;
    for url in ea.statuses().keys() {
        let u = Url::parse(url).expect("url");
        let host = u.host_str().expect("host");
        if let Some(body) = a.body(host, u.path()) {
            let other = b.body(host, u.path()).expect("same resource on b");
            let ta = String::from_utf8_lossy(body).replace(&pa, "PORT");
            let tb = String::from_utf8_lossy(other).replace(&pb, "PORT");
            assert_eq!(ta, tb, "{url}");
            compared += 1;
        }
    }
    assert!(compared > 20);
}

#[test]
fn default_expectation_counts() {
    let spec = SiteSpec::default();
    let port = 18080;
    let e = spec.expectation(port);
    let reachable = e.reachable_in_scope_urls();
    assert!(reachable.len() >= 1000, "{}", reachable.len());
    for s in [
        ExpectedStatus::Fetched,
        ExpectedStatus::Redirection,
        ExpectedStatus::FetchError,
        ExpectedStatus::RobotsDenied,
    ] {
        assert!(e.count(s) > 0, "{s:?}");
    }
    assert_eq!(
        e.count(ExpectedStatus::Fetched)
            + e.count(ExpectedStatus::Redirection)
            + e.count(ExpectedStatus::FetchError)
            + e.count(ExpectedStatus::RobotsDenied),
        e.len()
    );
    assert_eq!(
        reachable.len() + e.count(ExpectedStatus::RobotsDenied),
        e.len()
    );
    // Every ordinary page is reachable except the unreachable and
    // nofollow-only ones; all homes and special paths are reached.
    let pages = e.statuses().keys().filter(|u| u.contains("/p/")).count();
    let hidden = spec.unreachable_per_host + spec.nofollow_only_per_host;
    assert_eq!(pages, spec.hosts * (spec.pages_per_host - hidden));
    for s in spec.seeds(port) {
        assert_eq!(e.status(&s), Some(ExpectedStatus::Fetched));
    }
    assert_eq!(e.count(ExpectedStatus::RobotsDenied), spec.private_pages);
    assert_eq!(e.redirects().len(), spec.hosts * spec.redirects_per_host);
    for target in e.redirects().values() {
        assert_eq!(e.status(target), Some(ExpectedStatus::Fetched));
    }
    assert_eq!(
        e.count(ExpectedStatus::FetchError),
        spec.hosts * (spec.missing_per_host + spec.errors_per_host)
    );
    // must-not-request: disjoint from reachable, covers hidden pages,
    // robots-denied and out-of-scope URLs, never robots.txt.
    let must_not = e.must_not_request();
    assert!(must_not.is_disjoint(&reachable));
    let hidden_pages = must_not
        .iter()
        .filter(|u| u.contains("//host-") && u.contains("/p/"))
        .count();
    assert_eq!(hidden_pages, spec.hosts * hidden);
    assert!(must_not.iter().any(|u| u.contains("/private/")));
    assert!(must_not.iter().any(|u| u.contains("//outside-")));
    assert!(!must_not.iter().any(|u| u.ends_with("/robots.txt")));
    for (u, s) in e.statuses() {
        if *s == ExpectedStatus::RobotsDenied {
            assert!(must_not.contains(u));
        }
    }
}

#[tokio::test]
async fn html_features_are_present() {
    let site = Site::start(SiteSpec::default()).await.expect("start");
    let e = site.expected();
    let (mut base, mut nofollow, mut fragment, mut dotdot, mut relative, mut dup) =
        (0, 0, 0, 0, 0, 0);
    for url in e.statuses().keys() {
        let u = Url::parse(url).expect("url");
        let Some(body) = site.body(u.host_str().expect("host"), u.path()) else {
            continue;
        };
        let html = String::from_utf8_lossy(body);
        if !html.starts_with("<!DOCTYPE") {
            continue;
        }
        let (b, links) = parse_links(&html);
        base += usize::from(b.is_some());
        let mut hrefs = BTreeSet::new();
        for (h, nf) in &links {
            nofollow += usize::from(*nf);
            fragment += usize::from(h.contains('#'));
            dotdot += usize::from(h.starts_with("../"));
            relative += usize::from(!h.contains("//") && !h.starts_with('/'));
            dup += usize::from(!hrefs.insert(h.clone()));
        }
    }
    for (name, n) in [
        ("base", base),
        ("nofollow", nofollow),
        ("fragment", fragment),
        ("dotdot", dotdot),
        ("relative", relative),
        ("duplicate", dup),
    ] {
        assert!(n > 0, "no {name}");
    }
    site.shutdown().await;
}

/// `url`'s answer to a GET through `c` with `headers`; `what` names it if it fails.
async fn get(
    c: &reqwest::Client,
    url: String,
    headers: &[(&str, &str)],
    what: &str,
) -> reqwest::Response {
    let request = headers
        .iter()
        .fold(c.get(url), |r, (k, v)| r.header(*k, *v));
    request.send().await.expect(what)
}

#[tokio::test]
async fn reqwest_fetches_and_log_records() {
    let site = Site::start(SiteSpec::default()).await.expect("start");
    let c = client(&site);
    let url = |host: &str, path: &str| site.url(host, path);
    let seed = &site.seeds()[0];
    assert_eq!(seed, &site.url("host-00.test", "/"));

    let r = c.get(seed).send().await.expect("seed");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
    assert!(
        r.text()
            .await
            .expect("text")
            .contains("<title>Home of host-00.test</title>")
    );

    let e = site.expected();
    let (from, to) = e.redirects().iter().next().expect("a redirect");
    let r = c.get(from).send().await.expect("redirect");
    assert_eq!(r.status(), 301);
    assert_eq!(r.headers()["location"], to.as_str());

    let r = get(&c, url("host-02.test", "/missing/0"), &[], "404").await;
    assert_eq!(r.status(), 404);

    let r = get(&c, url("host-02.test", "/error/0"), &[], "500").await;
    assert_eq!(r.status(), 500);

    let r = get(&c, url("host-01.test", "/robots.txt"), &[], "robots").await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.text().await.expect("robots text"),
        "User-agent: *\nDisallow: /private/\n"
    );

    let r = get(&c, url("host-00.test", "/robots.txt"), &[], "robots 404").await;
    assert_eq!(r.status(), 404);

    let target = url("HOST-03.test", "/files/0.pdf");
    let r = get(&c, target, &[("user-agent", "squall-test")], "pdf").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/pdf");
    assert!(r.bytes().await.expect("pdf").starts_with(b"%PDF"));

    let log = site.requests();
    let got: Vec<(&str, &str, u16)> = log
        .iter()
        .map(|r| (r.host.as_str(), r.path.as_str(), r.status))
        .collect();
    let from_url = Url::parse(from).expect("from");
    assert_eq!(
        got,
        vec![
            ("host-00.test", "/", 200),
            (from_url.host_str().expect("host"), from_url.path(), 301),
            ("host-02.test", "/missing/0", 404),
            ("host-02.test", "/error/0", 500),
            ("host-01.test", "/robots.txt", 200),
            ("host-00.test", "/robots.txt", 404),
            ("host-03.test", "/files/0.pdf", 200),
        ]
    );
    assert_eq!(log[0].url, *seed);
    assert_eq!(log[6].user_agent.as_deref(), Some("squall-test"));
    assert!(log.windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(log[2].method, "GET");

    site.clear_requests();
    assert_eq!(site.request_count(), 0);
    let problems = e.check_requests(&site.requests());
    assert!(problems.iter().all(|p| p.starts_with("never requested")));

    let target = url("host-00.test", "/");
    let r = get(&c, target, &[("host", "unknown.test")], "unknown host").await;
    assert_eq!(r.status(), 404);
    let addr = site.addr();
    site.shutdown().await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}
