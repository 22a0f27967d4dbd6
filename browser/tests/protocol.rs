//! The browser protocol on its own, against the JavaScript test application: what a navigation's
//! document response becomes (redirects, error statuses, content that is not HTML), which URLs it
//! accepts, and restarts after K pages or above the memory limit.

use crate::support;
use std::collections::BTreeSet;
use std::time::Duration;

use squall::message::{FetchOutcome, FetchedResponse};
use squall::model::Metadata;
use squall::protocol::Protocol;
use squall_browser::{BrowserConfig, BrowserProtocol};
use squall_testsite::app::{AppSite, AppSpec};
use support::{config, require_chromium};
use url::Url;

async fn protocol(extra: &[&str]) -> BrowserProtocol {
    require_chromium();
    let settings = BrowserConfig::from_config(&config(extra)).expect("settings");
    BrowserProtocol::start(settings).await.expect("browser")
}

async fn fetch(browser: &BrowserProtocol, url: &str) -> FetchedResponse {
    let url = Url::parse(url).expect("url");
    let (record, outcome) = browser.fetch(&url, &Metadata::default()).await;
    assert_eq!(record.protocol, "browser");
    match outcome {
        FetchOutcome::Response(response) => *response,
        other => panic!("{url}: {other:?}"),
    }
}

fn text(response: &FetchedResponse) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_responses_are_recorded_as_http_records_them() {
    let site = AppSite::start(AppSpec::small()).await.expect("site");
    let post = site.url("app-00.test", "/post/1");
    let go = site.url("app-00.test", "/go/1");
    let post_text = site.expected().post_texts()[&post].clone();

    let browser = protocol(&[]).await;
    let redirect = fetch(&browser, &go).await;
    assert_eq!(
        redirect.status_code, 301,
        "not followed without http.allow.redirects"
    );
    assert_eq!(redirect.location.as_deref(), Some(post.as_str()));
    assert!(redirect.body.is_empty());
    let missing = fetch(&browser, &site.url("app-00.test", "/post/xyz")).await;
    assert_eq!(missing.status_code, 404);
    assert!(!missing.body.is_empty(), "the error page as served");
    let api = site.url("app-00.test", "/api/post/1");
    let json = fetch(&browser, &api).await;
    assert_eq!(json.status_code, 200);
    assert_eq!(json.content_type.as_deref(), Some("application/json"));
    assert!(
        text(&json).starts_with('{'),
        "not HTML: the bytes as served"
    );
    assert!(text(&json).contains(&post_text));

    let following = protocol(&["http.allow.redirects=true"]).await;
    let followed = fetch(&following, &go).await;
    assert_eq!(followed.status_code, 200);
    assert_eq!(
        followed.final_url.as_ref().map(Url::as_str),
        Some(post.as_str())
    );
    assert!(
        text(&followed).contains(&post_text),
        "rendered after the redirect"
    );

    let limited = protocol(&["http.content.limit=100"]).await;
    let cut = fetch(&limited, &post).await;
    assert_eq!(
        cut.body.len(),
        100,
        "the rendered HTML is cut at http.content.limit"
    );
    assert!(cut.truncated);
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_urls_the_rules_select_are_rendered() {
    let browser = protocol(&[
        "browser.render.hosts=['*.app.test']",
        "browser.render.patterns=['/render/']",
        "browser.render.metadata=render",
    ])
    .await;
    let url = |text: &str| Url::parse(text).expect("url");
    let plain = Metadata::default();
    assert!(browser.accepts(&url("http://a.app.test/"), &plain));
    assert!(browser.accepts(&url("http://other.test/render/1"), &plain));
    assert!(!browser.accepts(&url("http://other.test/page"), &plain));
    let mut marked = Metadata::default();
    marked.set("render", "true");
    assert!(browser.accepts(&url("http://other.test/page"), &marked));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_is_restarted_after_k_pages_and_above_its_memory_limit() {
    let site = AppSite::start(AppSpec::small()).await.expect("site");
    let posts: Vec<String> = site.expected().post_urls().into_iter().collect();

    let browser = protocol(&["browser.restart.pages=2", "browser.tabs=1"]).await;
    let mut pids = Vec::new();
    for post in posts.iter().take(5) {
        let response = fetch(&browser, post).await;
        assert_eq!(response.status_code, 200);
        pids.push(browser.browser_pid().await.expect("pid"));
    }
    let distinct: BTreeSet<u32> = pids.iter().copied().collect();
    assert_eq!(distinct.len(), 3, "a new browser every 2 pages: {pids:?}");

    let tiny = protocol(&["browser.max.rss.mb=1", "browser.tabs=1"]).await;
    let mut pids = BTreeSet::new();
    for post in posts.iter().take(3) {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let response = fetch(&tiny, post).await;
        assert!(text(&response).contains("post-text"), "{post} rendered");
        pids.insert(tiny.browser_pid().await.expect("pid"));
    }
    assert_eq!(pids.len(), 3, "over the limit after every page: {pids:?}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrolling_reveals_every_page_and_a_selector_settles_a_busy_page() {
    let site = AppSite::start(AppSpec::default()).await.expect("site");
    let scroll = site.url("app-01.test", "/scroll");
    let posts: Vec<String> = site
        .expected()
        .post_urls()
        .into_iter()
        .filter(|url| url.contains("app-01.test"))
        .collect();
    let path = |url: &String| Url::parse(url).expect("url").path().to_string();

    let still = protocol(&["browser.paging.click=''"]).await;
    let first_page = text(&fetch(&still, &scroll).await);
    let shown = posts
        .iter()
        .filter(|p| first_page.contains(&path(p)))
        .count();
    assert!(
        shown < posts.len(),
        "without scrolling only the first page shows"
    );

    let scrolling = protocol(&["browser.paging.click=''", "browser.paging.scroll=true"]).await;
    let all = text(&fetch(&scrolling, &scroll).await);
    for post in &posts {
        assert!(
            all.contains(&format!("href=\"{}\"", path(post))),
            "{post} not revealed"
        );
    }

    let busy = site.url("app-01.test", "/never-settles");
    let waiting = protocol(&["browser.settle.selector='#ticks'", "browser.page.timeout=5"]).await;
    let settled = fetch(&waiting, &busy).await;
    assert_eq!(
        settled.status_code, 200,
        "the selector settles a page the network never does"
    );
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_browser_is_used_through_its_devtools_address() {
    require_chromium();
    let site = AppSite::start(AppSpec::small()).await.expect("site");
    let profile = tempfile::tempdir().expect("profile");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("addr").port()
    };
    let mut chromium =
        std::process::Command::new(squall_browser::find_on_path().expect("chromium"))
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--host-resolver-rules=MAP *.test 127.0.0.1, MAP * ~NOTFOUND",
                &format!("--remote-debugging-port={port}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromium");
    let address = format!("browser.devtools.url=http://127.0.0.1:{port}");
    let mut attached = None;
    for _ in 0..100 {
        let settings = BrowserConfig::from_config(&config(&[&address])).expect("settings");
        if let Ok(browser) = BrowserProtocol::start(settings).await {
            attached = Some(browser);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let browser = attached.expect("attached to the running browser");
    assert_eq!(browser.browser_pid().await, None, "not launched by squall");
    let post = site.url("app-00.test", "/post/1");
    let rendered = text(&fetch(&browser, &post).await);
    assert!(rendered.contains(&site.expected().post_texts()[&post]));
    drop(browser);
    let _ = chromium.kill();
    let _ = chromium.wait();
    site.shutdown().await;
}
