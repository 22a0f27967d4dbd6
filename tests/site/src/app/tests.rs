//! Tests of the app site with a real HTTP client (no browser).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::redirect::Policy;
use serde_json::Value;

use super::*;
use crate::test_links::links;

fn client(site: &AppSite) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .no_proxy()
        .redirect(Policy::none());
    for host in site.host_names() {
        b = b.resolve(&host, site.addr());
    }
    b.resolve("other.test", site.addr())
        .build()
        .expect("client")
}

async fn get(client: &reqwest::Client, url: &str) -> reqwest::Response {
    client.get(url).send().await.expect("request")
}

async fn json(client: &reqwest::Client, url: &str) -> (StatusCode, Value) {
    let resp = get(client, url).await;
    let status = resp.status();
    let ct = resp.headers()[reqwest::header::CONTENT_TYPE].clone();
    assert_eq!(ct, "application/json", "{url}");
    let body = resp.bytes().await.expect("body");
    (status, serde_json::from_slice(&body).expect("json"))
}

#[tokio::test]
async fn documents_and_script_hold_no_post_link_title_or_text() {
    let site = AppSite::start(AppSpec::default()).await.expect("start");
    let c = client(&site);
    let expected = site.expected();
    for host in site.host_names() {
        for path in ["/", "/scroll", "/post/3", "/post/999", "/never-settles"] {
            let resp = get(&c, &site.url(&host, path)).await;
            assert_eq!(resp.status(), 200, "{host}{path}");
            let body = resp.bytes().await.expect("body");
            assert_eq!(links(&body), Vec::<String>::new(), "{host}{path}");
            let text = String::from_utf8_lossy(&body);
            assert!(!text.contains("/post/"), "{host}{path}");
        }
        let home = get(&c, &site.url(&host, "/"))
            .await
            .text()
            .await
            .expect("home");
        assert!(home.contains("<button id=\"more\""));
        assert!(home.contains("<img src=\"/static/logo.png\""));
    }
    let mut served = String::new();
    for host in site.host_names() {
        for path in [
            "/",
            "/scroll",
            "/post/3",
            "/never-settles",
            "/static/app.js",
        ] {
            served.push_str(
                &get(&c, &site.url(&host, path))
                    .await
                    .text()
                    .await
                    .expect("body"),
            );
        }
    }
    assert!(!served.contains("The text of post"));
    for (url, text) in expected.post_texts() {
        assert!(!served.contains(text.as_str()), "{url}");
    }
    for (url, title) in expected.post_titles() {
        assert!(!served.contains(title.as_str()), "{url}");
    }
    site.shutdown().await;
}

#[tokio::test]
async fn api_pages_cover_every_post_once() {
    for spec in [
        AppSpec::default(),
        AppSpec::small(),
        AppSpec {
            posts_per_host: 20,
            ..AppSpec::default()
        },
    ] {
        let site = AppSite::start(spec.clone()).await.expect("start");
        let c = client(&site);
        let expected = site.expected();
        let mut seen = BTreeSet::new();
        for host in site.host_names() {
            let mut page = 0;
            loop {
                let url = site.url(&host, &format!("/api/posts?page={page}"));
                let (status, body) = json(&c, &url).await;
                assert_eq!(status, 200, "{url}");
                let posts = body["posts"].as_array().expect("posts");
                assert!(posts.len() <= spec.page_size, "{url}");
                for post in posts {
                    let id = post["id"].as_u64().expect("id");
                    let post_url = site.url(&host, &format!("/post/{id}"));
                    assert_eq!(
                        post["title"].as_str(),
                        expected.post_titles().get(&post_url).map(String::as_str)
                    );
                    assert!(seen.insert(post_url), "{url} repeats {id}");
                }
                page += 1;
                if body["more"] == Value::Bool(false) {
                    break;
                }
                assert_eq!(posts.len(), spec.page_size, "{url}");
                assert!(page <= spec.pages(), "{url}: more after the last page");
            }
            assert_eq!(page, spec.pages());
            assert_eq!(page - 1, expected.clicks_to_show_all());
            let past = site.url(&host, &format!("/api/posts?page={page}"));
            let (_, body) = json(&c, &past).await;
            assert_eq!(body["posts"], serde_json::json!([]));
            assert_eq!(body["more"], Value::Bool(false));
        }
        assert_eq!(seen, expected.post_urls());
        assert_eq!(seen.len(), spec.hosts * spec.posts_per_host);
        site.shutdown().await;
    }
}

#[tokio::test]
async fn api_serves_each_post_and_404_for_unknown() {
    let site = AppSite::start(AppSpec::small()).await.expect("start");
    let c = client(&site);
    let expected = site.expected();
    for (url, text) in expected.post_texts() {
        let api = url.replace("/post/", "/api/post/");
        let (status, body) = json(&c, &api).await;
        assert_eq!(status, 200, "{api}");
        assert_eq!(body["text"].as_str(), Some(text.as_str()));
        assert_eq!(
            body["title"].as_str(),
            expected.post_titles().get(url).map(String::as_str)
        );
        assert!(text.starts_with("The text of post "), "{text}");
    }
    let texts: BTreeSet<&String> = expected.post_texts().values().collect();
    assert_eq!(texts.len(), expected.post_texts().len(), "texts unique");
    let host = "app-01.test";
    for path in ["/api/post/5", "/api/post/05", "/api/post/x", "/api/nothing"] {
        let (status, body) = json(&c, &site.url(host, path)).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"], "not found");
    }
    let (status, _) = json(&c, &site.url(host, "/api/posts?page=x")).await;
    assert_eq!(status, 400);
    let (status, body) = json(&c, &site.url(host, "/api/posts")).await;
    assert_eq!(status, 200);
    assert_eq!(body["page"], 0);
    let (status, _) = json(&c, &site.url(host, "/api/tick")).await;
    assert_eq!(status, 200);
    site.shutdown().await;
}

#[tokio::test]
async fn other_paths_static_and_redirects() {
    let site = AppSite::start(AppSpec::small()).await.expect("start");
    let c = client(&site);
    let host = "app-00.test";
    let go = get(&c, &site.url(host, "/go/3")).await;
    assert_eq!(go.status(), 301);
    assert_eq!(go.headers()["location"], site.url(host, "/post/3"));
    for path in [
        "/post/xyz",
        "/post/03",
        "/post/",
        "/go/x",
        "/robots.txt",
        "/nope",
    ] {
        let resp = get(&c, &site.url(host, path)).await;
        assert_eq!(resp.status(), 404, "{path}");
        assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    }
    let port = site.port();
    for url in [
        format!("http://other.test:{port}/"),
        format!("http://other.test:{port}/api/posts?page=0"),
    ] {
        assert_eq!(get(&c, &url).await.status(), 404, "{url}");
    }
    let unknown = c
        .get(site.url(host, "/"))
        .header("host", format!("app-99.test:{port}"))
        .send()
        .await
        .expect("request");
    assert_eq!(unknown.status(), 404);
    let post = c.post(site.url(host, "/")).send().await.expect("post");
    assert_eq!(post.status(), 405);
    let js = get(&c, &site.url(host, "/static/app.js")).await;
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let png = get(&c, &site.url(host, "/static/logo.png")).await;
    assert_eq!(png.headers()["content-type"], "image/png");
    assert_eq!(png.headers()["cache-control"], "no-store");
    assert_png_valid(&png.bytes().await.expect("png"));
    site.shutdown().await;
}

/// Signature, then chunks whose CRC-32 is right, ending with IEND.
fn assert_png_valid(png: &[u8]) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let mut rest = &png[8..];
    let mut kinds = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().expect("len")) as usize;
        let (kind_and_data, tail) = rest[4..].split_at(4 + len);
        let mut crc = flate2::Crc::new();
        crc.update(kind_and_data);
        assert_eq!(tail[..4], crc.sum().to_be_bytes());
        kinds.push(String::from_utf8_lossy(&kind_and_data[..4]).into_owned());
        rest = &tail[4..];
    }
    assert_eq!(kinds, ["IHDR", "IDAT", "IEND"]);
}

#[tokio::test]
async fn request_log_records_everything_and_navigations_keep_documents() {
    let site = AppSite::start(AppSpec::small()).await.expect("start");
    let c = client(&site);
    let host = "app-01.test";
    let paths = [
        "/",
        "/static/app.js",
        "/static/logo.png",
        "/api/posts?page=1",
        "/api/post/2",
        "/post/2",
        "/go/2",
        "/scroll",
        "/never-settles",
        "/api/tick",
        "/robots.txt",
        "/missing",
    ];
    for path in paths {
        get(&c, &site.url(host, path)).await;
    }
    let log = site.requests();
    let logged: Vec<&str> = log.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(logged, paths);
    assert!(log.iter().all(|r| r.host == host && r.method == "GET"));
    assert_eq!(log[3].url, site.url(host, "/api/posts?page=1"));
    assert_eq!(log[3].status, 200);
    assert_eq!(log[11].status, 404);
    let nav: Vec<String> = site.navigations().into_iter().map(|r| r.path).collect();
    assert_eq!(nav, ["/", "/post/2", "/go/2", "/scroll", "/never-settles"]);
    assert_eq!(navigations(&log).len(), 5);
    assert!(is_navigation("/?x=1") && !is_navigation("/api/tick"));
    site.clear_requests();
    assert!(site.requests().is_empty());
    site.shutdown().await;
}

#[tokio::test]
async fn api_answers_wait_the_delay_documents_do_not() {
    let delay = Duration::from_millis(300);
    let site = AppSite::start(AppSpec {
        api_delay: delay,
        ..AppSpec::small()
    })
    .await
    .expect("start");
    let c = client(&site);
    let started = Instant::now();
    let (status, _) = json(&c, &site.url("app-00.test", "/api/tick")).await;
    assert_eq!(status, 200);
    assert!(started.elapsed() >= delay);
    let started = Instant::now();
    get(&c, &site.url("app-00.test", "/")).await;
    assert!(started.elapsed() < delay);
    site.shutdown().await;
}

#[tokio::test]
async fn expectation_lists_homes_posts_and_first_page() {
    let site = AppSite::start(AppSpec::default()).await.expect("start");
    let e = site.expected();
    assert_eq!(e.homes(), site.seeds().as_slice());
    assert_eq!(site.seeds()[2], site.url("app-02.test", "/"));
    assert_eq!(e.post_urls().len(), 75);
    assert_eq!(e.documents().len(), 78);
    assert_eq!(e.first_page_post_urls().len(), 30);
    assert!(
        e.first_page_post_urls()
            .contains(&site.url("app-01.test", "/post/9"))
    );
    assert_eq!(e.clicks_to_show_all(), 2);
    let url = site.url("app-01.test", "/post/7");
    assert_eq!(e.post_titles()[&url], "Post 7 on app-01");
    assert!(e.post_texts()[&url].starts_with("The text of post 7 on app-01.test: "));
    assert_eq!(e, site.expected(), "deterministic");
    site.shutdown().await;
}
