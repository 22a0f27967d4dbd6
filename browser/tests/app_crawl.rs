//! Crawls of the JavaScript test application with real Chromium: what plain HTTP misses and the
//! browser finds, politeness counted in navigations, blocked images, a page that never settles,
//! and a browser killed mid-crawl.

use crate::support;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use squall::model::Status;
use squall::topology::StopReason;
use squall_testsite::app::{AppSite, AppSpec};
use support::{app_crawl, config, crawler};

const CRAWL_LIMIT: Option<Duration> = Some(Duration::from_secs(240));

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_finds_no_post_and_the_browser_finds_every_one_politely() {
    let site = AppSite::start(AppSpec::default()).await.expect("site");
    let expected = site.expected();

    let plain = config(&["protocol.schemes={http: http}"]);
    let crawl = app_crawl(&site, plain, false).await;
    let summary = crawler::run_until_idle(crawl.crawler, CRAWL_LIMIT).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);
    let fetched: BTreeSet<String> = crawl.fetches.fetches().into_iter().map(|f| f.url).collect();
    assert_eq!(
        fetched,
        expected.homes().iter().cloned().collect::<BTreeSet<_>>()
    );
    for url in expected.post_urls() {
        assert!(
            crawl.frontier.lookup(&url).expect("lookup").is_none(),
            "HTTP found {url}"
        );
    }
    site.clear_requests();

    let delay = 0.5;
    let rendered = config(&[
        &format!("fetcher.server.delay={delay}"),
        "browser.tabs=2",
        "parsefilter.css={post.text: p.post-text}",
        "parsefilter.xpath={post.title: '//h1'}",
        "metadata.persist=[post.text, post.title]",
    ]);
    let crawl = app_crawl(&site, rendered, true).await;
    let summary = crawler::run_until_idle(crawl.crawler, CRAWL_LIMIT).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);
    for (url, text) in expected.post_texts() {
        let body = crawl
            .bodies
            .get(url)
            .unwrap_or_else(|| panic!("{url} not parsed"));
        assert!(
            body.contains(text.as_str()),
            "{url}: its text is not in the rendered page"
        );
        let stored = crawl.frontier.lookup(url).expect("lookup").expect("stored");
        assert_eq!(stored.status, Status::Fetched, "{url}");
        let extracted = stored.metadata.first("post.text");
        assert_eq!(
            extracted,
            Some(text.as_str()),
            "{url}: extracted after rendering"
        );
        let title = &expected.post_titles()[url];
        assert_eq!(
            stored.metadata.first("post.title"),
            Some(title.as_str()),
            "{url}"
        );
    }
    let fetches = crawl.fetches.fetches();
    let fetched: BTreeSet<String> = fetches.iter().map(|f| f.url.clone()).collect();
    assert_eq!(
        fetched,
        expected.documents(),
        "every document, nothing else"
    );
    assert_eq!(fetches.len(), fetched.len(), "each document fetched once");
    assert!(
        fetches.iter().all(|f| f.protocol == "browser"),
        "the log names the protocol"
    );

    let requests = site.requests();
    assert!(
        !requests
            .iter()
            .any(|r| r.path.starts_with("/static/logo.png")),
        "images are blocked by default"
    );
    assert!(
        requests.iter().any(|r| r.path.starts_with("/api/posts")),
        "scripts ran"
    );
    let mut by_host: BTreeMap<String, Vec<std::time::Instant>> = BTreeMap::new();
    for navigation in site.navigations() {
        by_host
            .entry(navigation.host)
            .or_default()
            .push(navigation.at);
    }
    assert_eq!(by_host.len(), site.host_names().len());
    let min_gap = Duration::from_secs_f64(delay);
    for (host, mut times) in by_host {
        times.sort();
        for pair in times.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(gap >= min_gap, "{host}: navigations only {gap:?} apart");
        }
    }
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_settles_times_out_and_its_tab_renders_the_next() {
    let spec = AppSpec {
        hosts: 1,
        posts_per_host: 4,
        page_size: 10,
        ..AppSpec::default()
    };
    let site = AppSite::start(spec).await.expect("site");
    let never = site.url("app-00.test", "/never-settles");
    let settings = [
        "browser.tabs=1",
        "browser.page.timeout=3",
        "fetcher.server.delay=0",
    ];
    let crawl = app_crawl(&site, config(&settings), true).await;
    crawl.crawler.inject([never.as_str()]).await;
    let summary = crawler::run_until_idle(crawl.crawler, CRAWL_LIMIT).await;
    assert_eq!(summary.stop_reason, StopReason::Idle);
    let stored = crawl
        .frontier
        .lookup(&never)
        .expect("lookup")
        .expect("stored");
    assert_eq!(stored.status, Status::FetchError);
    assert_eq!(stored.metadata.first("error.cause"), Some("timeout"));
    for url in site.expected().post_urls() {
        let stored = crawl
            .frontier
            .lookup(&url)
            .expect("lookup")
            .expect("stored");
        assert_eq!(
            stored.status,
            Status::Fetched,
            "{url}: the one tab went on rendering"
        );
    }
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_killed_mid_crawl_is_restarted_and_nothing_is_lost() {
    signalled_mid_crawl("-KILL").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_paused_mid_crawl_is_replaced_and_nothing_is_lost() {
    signalled_mid_crawl("-STOP").await;
}

/// Crawls the app site with three tabs, sends `signal` to the browser once 8 pages are in, and
/// checks that the crawl still fetched every document exactly once, on a new browser, with the
/// renders caught in flight failed back and fetched again.
async fn signalled_mid_crawl(signal: &str) {
    let spec = AppSpec {
        hosts: 4,
        posts_per_host: 8,
        api_delay: Duration::from_millis(150),
        ..AppSpec::default()
    };
    let site = AppSite::start(spec).await.expect("site");
    let expected = site.expected();
    // A page settles after 1.5 s without a request (0.5 s by default): the subject is the
    // browser's replacement, and on a loaded machine a post's script once issued its API call
    // more than 0.5 s after the document loaded, so the post settled without its text.
    let settings = [
        "browser.tabs=3",
        "fetcher.server.delay=0.1",
        "browser.page.timeout=4",
        "browser.settle.idle=1.5",
    ];
    let crawl = app_crawl(&site, config(&settings), true).await;
    let browser = crawl.browser.clone().expect("browser");
    let first_pid = browser.browser_pid().await.expect("a launched browser");
    let fetches = crawl.fetches.clone();
    let run = tokio::spawn(crawler::run_until_idle(crawl.crawler, CRAWL_LIMIT));
    while fetches.fetches().len() < 8 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let signalled = std::process::Command::new("kill")
        .args([signal, &first_pid.to_string()])
        .status()
        .expect("kill");
    assert!(signalled.success());
    let summary = run.await.expect("crawl task");
    assert_eq!(summary.stop_reason, StopReason::Idle);
    let second_pid = browser.browser_pid().await.expect("a browser again");
    assert_ne!(first_pid, second_pid, "the {signal} browser was replaced");
    for url in expected.documents() {
        let stored = crawl.frontier.lookup(&url).expect("lookup");
        let status = stored.as_ref().map(|s| s.status);
        let why = stored.map(|s| format!("{:?}", s.metadata));
        assert_eq!(
            status,
            Some(Status::Fetched),
            "{url} was lost or failed: {why:?}"
        );
    }
    for (url, text) in expected.post_texts() {
        let body = crawl.bodies.get(url).unwrap_or_default();
        assert!(body.contains(text.as_str()), "{url}: its text is missing");
    }
    let attempts = crawl.attempts.all();
    let abandoned: Vec<&String> = attempts
        .iter()
        .filter(|(_, error)| error.as_deref().is_some_and(|e| e.starts_with("abandoned")))
        .map(|(url, _)| url)
        .collect();
    assert!(
        !abandoned.is_empty(),
        "the {signal} caught renders in flight"
    );
    for url in abandoned {
        let retried = attempts
            .iter()
            .filter(|(u, e)| u == url && e.is_none())
            .count();
        assert_eq!(retried, 1, "{url}: failed back, then fetched once");
    }
    site.shutdown().await;
}
