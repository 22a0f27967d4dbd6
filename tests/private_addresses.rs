//! The crawl binary keeps the web out of its own network by default: a page (reached through a
//! host pinned with `--resolve`, standing for a public site) that links or redirects to a loopback
//! address or to `localhost` does not get those fetched; the seeds the user gives, private or
//! not, are fetched.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::support;
use support::binary::{crawl_binary, set_args};

#[derive(Clone)]
struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

/// `/` links to this server through 127.0.0.1 and localhost (paths `/leak-*`) and to `/hop`,
/// which redirects to 127.0.0.1; anything else is a plain page. Every request's path is kept.
async fn answer(State(server): State<Server>, uri: Uri) -> Response {
    let path = uri.path().to_string();
    server.requests.lock().expect("requests").push(path.clone());
    let port = server.port;
    match path.as_str() {
        "/" => (
            [(header::CONTENT_TYPE, "text/html")],
            format!(
                "<a href='http://127.0.0.1:{port}/leak-ip'>ip</a>
                 <a href='http://localhost:{port}/leak-name'>name</a>
                 <a href='http://site.test:{port}/hop'>hop</a>"
            ),
        )
            .into_response(),
        "/hop" => (
            StatusCode::FOUND,
            [(
                header::LOCATION,
                format!("http://127.0.0.1:{port}/leak-redirect"),
            )],
        )
            .into_response(),
        "/robots.txt" => StatusCode::NOT_FOUND.into_response(),
        _ => ([(header::CONTENT_TYPE, "text/html")], "<p>a page</p>").into_response(),
    }
}

async fn start() -> (SocketAddr, Server) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("address");
    let server = Server {
        port: addr.port(),
        requests: Arc::default(),
    };
    let app = Router::new().fallback(answer).with_state(server.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, server)
}

/// Runs the crawl binary until idle with `extra` arguments (seeds among them) and `keys`;
/// returns its summary.
async fn crawl(dir: &std::path::Path, extra: &[String], keys: &[&str]) -> String {
    let mut args = vec![
        "--frontier-path".to_string(),
        dir.join("frontier").display().to_string(),
        "--until-idle".to_string(),
    ];
    let mut all_keys = vec!["http.agent.name=squall-test", "fetcher.server.delay=0"];
    all_keys.extend_from_slice(keys);
    args.extend(set_args(&all_keys));
    args.extend_from_slice(extra);
    let output = tokio::task::spawn_blocking(move || {
        Command::new(crawl_binary())
            .args(&args)
            .output()
            .expect("run the crawl")
    })
    .await
    .expect("joined");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    String::from_utf8_lossy(&output.stdout).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_and_redirects_into_private_addresses_are_refused_by_default() {
    for follow in [false, true] {
        let (addr, server) = start().await;
        let dir = tempfile::tempdir().expect("temp dir");
        let pin = format!("site.test:{}", addr.ip());
        let seed = format!("http://site.test:{}/", addr.port());
        let redirects = format!("http.allow.redirects={follow}");
        let summary = crawl(
            dir.path(),
            &["--resolve".to_string(), pin, seed],
            &[&redirects],
        )
        .await;
        let requests = server.requests.lock().expect("requests").clone();
        assert!(
            requests.contains(&"/".to_string()),
            "the seed: {requests:?}"
        );
        assert!(requests.contains(&"/hop".to_string()), "{requests:?}");
        assert!(
            !requests.iter().any(|path| path.starts_with("/leak")),
            "a private address was fetched (redirects followed: {follow}): {requests:?}"
        );
        // 127.0.0.1 and localhost, and the redirect's target (refused within the fetch when
        // redirects are followed; recorded, then refused as a link, when not): refused for good.
        assert!(
            summary.contains(" ERROR 3") && summary.contains("FETCH_ERROR 0"),
            "{summary}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_on_private_addresses_and_a_switched_off_guard_are_fetched() {
    // A seed on 127.0.0.1 is the user's own: it and its host's links are fetched (the redirect
    // from the pinned host to it too), localhost is not.
    let (addr, server) = start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let seed = format!("http://127.0.0.1:{}/", addr.port());
    let pin = format!("site.test:{}", addr.ip());
    crawl(dir.path(), &["--resolve".to_string(), pin, seed], &[]).await;
    let requests = server.requests.lock().expect("requests").clone();
    assert!(requests.contains(&"/leak-ip".to_string()), "{requests:?}");
    assert!(
        requests.contains(&"/leak-redirect".to_string()),
        "{requests:?}"
    );
    assert!(
        !requests.contains(&"/leak-name".to_string()),
        "{requests:?}"
    );

    // With the guard off every address is fetched.
    let (addr, server) = start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let pin = format!("site.test:{}", addr.ip());
    let seed = format!("http://site.test:{}/", addr.port());
    crawl(
        dir.path(),
        &["--resolve".to_string(), pin, seed],
        &["http.refuse.private.addresses=false"],
    )
    .await;
    let requests = server.requests.lock().expect("requests").clone();
    for path in ["/leak-ip", "/leak-name", "/leak-redirect"] {
        assert!(requests.contains(&path.to_string()), "{path}: {requests:?}");
    }
}
