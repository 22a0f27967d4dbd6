//! What the crawl binary writes for people to read: plain log lines in a file (no colour escapes
//! when standard error is not a terminal), and each cause of an error once.

use std::process::{Command, Stdio};

use crate::support;
use support::binary::crawl_binary;
use support::http::{html, serve};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_lines_written_to_a_file_carry_no_colour_escapes() {
    let app = axum::Router::new().route("/", axum::routing::get(|| async { html("a page") }));
    let addr = serve(app).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("stderr.txt");
    let status = Command::new(crawl_binary())
        .arg("--frontier-path")
        .arg(dir.path().join("frontier"))
        .args(["--set", "http.agent.name=squall-test", "--until-idle"])
        .args(["--resolve", &format!("plain.test:{}", addr.ip())])
        .arg(format!("http://plain.test:{}/", addr.port()))
        .env("RUST_LOG", "squall=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .status()
        .expect("run the crawl binary");
    let text = std::fs::read_to_string(&log).expect("the log");
    assert!(status.success(), "{text}");
    assert!(text.contains("DEBUG"), "no log line was written: {text}");
    assert!(
        !text.contains('\u{1b}'),
        "colour escapes in a file:\n{text:?}"
    );
}

#[test]
fn an_error_names_each_cause_once() {
    // A WARC directory that cannot be created: the library's error quotes its cause, which the
    // binary printed again after it (twice more, through the build error that wraps it).
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    let warc = file.join("warc");
    let output = Command::new(crawl_binary())
        .arg("--frontier-path")
        .arg(dir.path().join("frontier"))
        .args(["--set", "http.agent.name=squall-test", "--until-idle"])
        .arg("--warc-dir")
        .arg(&warc)
        .arg("http://plain.test/")
        .stdin(Stdio::null())
        .output()
        .expect("run the crawl binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let line = stderr
        .lines()
        .find(|line| line.starts_with("error: "))
        .expect("an error line");
    assert!(line.contains(&*warc.to_string_lossy()), "{line}");
    assert_eq!(line.matches("Not a directory").count(), 1, "{line}");
    assert_eq!(line.matches("cannot create").count(), 1, "{line}");
}
