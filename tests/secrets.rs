//! Secrets are never shown, logged or archived: the crawl binary crawls a loopback site behind
//! Basic authentication with the password in its seed URL (`http://user:s3cret@host/`), and
//! neither its status page, its fetch log, its log lines, its output nor its WARC files hold the
//! password (or its Base64 form in `Authorization`), while the fetches still used it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::support;
use support::binary::crawl_binary;
use support::http::{html, serve};

const HOST: &str = "vault.test";
const PASSWORD: &str = "s3cret";
/// `Basic` and the Base64 of `user:s3cret`, as the client sends it.
const AUTHORIZATION: &str = "Basic dXNlcjpzM2NyZXQ=";

/// A site whose pages need the password; `/gone` answers 500, so that it is listed among the
/// status page's errors. Counts the requests that carried the right credentials.
async fn vault(authorized: Arc<AtomicUsize>) -> std::net::SocketAddr {
    let page = move |body: &'static str| {
        let authorized = Arc::clone(&authorized);
        move |headers: HeaderMap| async move {
            let given = headers.get(header::AUTHORIZATION);
            if given.and_then(|v| v.to_str().ok()) != Some(AUTHORIZATION) {
                return (StatusCode::UNAUTHORIZED, "who are you?").into_response();
            }
            authorized.fetch_add(1, Ordering::SeqCst);
            html(body)
        }
    };
    let app = Router::new()
        .route(
            "/",
            get(page(
                "<a href=\"/next\">next</a> <a href=\"/gone\">gone</a>",
            )),
        )
        .route("/next", get(page("the next page")))
        .route("/gone", get(|| async { gone() }));
    serve(app).await
}

fn gone() -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, "gone").into_response()
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

/// Starts the crawl binary on the vault, with every output on: the fetch log, WARC files, the
/// status page on `status_port`, the log lines at debug level (into `dir/stderr.txt`).
fn start_crawl(addr: std::net::SocketAddr, dir: &Path, status_port: u16) -> Child {
    let output = |name: &str| std::fs::File::create(dir.join(name)).expect("output file");
    Command::new(crawl_binary())
        .arg("--frontier-path")
        .arg(dir.join("frontier"))
        .arg("--fetch-log")
        .arg(dir.join("fetch.jsonl"))
        .arg("--warc-dir")
        .arg(dir.join("warc"))
        .args(["--status-addr", &status_port.to_string()])
        .args(["--resolve", &format!("{HOST}:{}", addr.ip())])
        .args(["--set", "http.agent.name=squall-test"])
        .args(["--set", "fetcher.server.delay=0.05"])
        .args(["--max-duration", "90"])
        .arg(format!("http://user:{PASSWORD}@{HOST}:{}/", addr.port()))
        .env(
            "RUST_LOG",
            "debug,html5ever=info,selectors=info,lol_html=info",
        )
        .stdin(Stdio::null())
        .stdout(output("stdout.txt"))
        .stderr(output("stderr.txt"))
        .spawn()
        .expect("start the crawl binary")
}

/// `/status.json` once it lists the failed `/gone` and three fetches.
async fn status_with_the_error(port: u16, child: &mut Child) -> String {
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        assert!(child.try_wait().expect("wait").is_none(), "the crawl ended");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no error shown"
        );
        let url = format!("http://127.0.0.1:{port}/status.json");
        if let Ok(answer) = http.get(&url).send().await
            && let Ok(text) = answer.text().await
            && text.contains("/gone")
        {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The records of the WARC files, decompressed, each read by its `Content-Length`: a record
/// whose length is wrong leaves the next one unreadable, which fails the test.
fn warc_records(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the WARC directory")
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    let mut records = Vec::new();
    for file in files {
        let mut bytes = Vec::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&file).expect("open"))
            .read_to_end(&mut bytes)
            .expect("gzip members");
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let text = String::from_utf8_lossy(rest);
            let head_end = text.find("\r\n\r\n").expect("a record head") + 4;
            let length: usize = text[..head_end]
                .lines()
                .find_map(|line| line.strip_prefix("Content-Length: "))
                .and_then(|n| n.trim().parse().ok())
                .expect("a Content-Length");
            let end = head_end + length;
            assert_eq!(
                &rest[end..end + 4],
                b"\r\n\r\n",
                "a record ends after its length"
            );
            records.push(String::from_utf8_lossy(&rest[..end]).into_owned());
            rest = &rest[end + 4..];
        }
    }
    records
}

fn assert_no_secret(what: &str, text: &str) {
    assert!(
        !text.contains(PASSWORD) && !text.contains(&AUTHORIZATION[6..]),
        "{what} shows the password:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_a_seed_url_is_used_but_never_shown_logged_or_archived() {
    let authorized = Arc::new(AtomicUsize::new(0));
    let addr = vault(Arc::clone(&authorized)).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let mut child = start_crawl(addr, dir.path(), port);
    let status = status_with_the_error(port, &mut child).await;
    assert_no_secret("/status.json", &status);
    assert!(status.contains("user:***@"), "{status}");
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(interrupted.success());
    assert!(child.wait().expect("wait").success(), "the crawl failed");

    assert_eq!(
        authorized.load(Ordering::SeqCst),
        2,
        "/ and /next fetched with the password"
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect(name);
    let log = read("fetch.jsonl");
    assert_no_secret("the fetch log", &log);
    assert!(log.contains(&format!("user:***@{HOST}")), "{log}");
    assert_no_secret("the log lines", &read("stderr.txt"));
    assert!(
        read("stderr.txt").contains("DEBUG"),
        "the log lines are at debug level"
    );
    assert_no_secret("the summary", &read("stdout.txt"));

    let records = warc_records(&dir.path().join("warc"));
    let requests: Vec<&String> = records
        .iter()
        .filter(|r| r.contains("WARC-Type: request"))
        .collect();
    assert!(requests.len() >= 3, "{records:#?}");
    for record in &records {
        assert_no_secret("a WARC record", record);
    }
    assert!(
        requests
            .iter()
            .any(|r| r.to_ascii_lowercase().contains("authorization: basic ***")),
        "{requests:#?}"
    );
    // An independent reader checks every record's digests.
    let check = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/warcio-check"))
        .args(
            std::fs::read_dir(dir.path().join("warc"))
                .expect("dir")
                .map(|e| e.expect("entry").path()),
        )
        .output()
        .expect("run scripts/warcio-check");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}
