//! `squall-frontier` exposed safely, as a process: TLS with a certificate from a CA made by the
//! test, a bearer token checked on every call, and the refusal to listen off loopback with
//! neither. Driven by squall's own client and by `InteropCheck`, the Java client on grpc-java
//! (TLS trusting the test's CA, the token in its call metadata).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use chrono::Utc;
use squall::config::{ConfigBuilder, CrawlConfig};
use squall::frontier::{BusyUrls, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_testsite::tls::TestCa;

use crate::support::java;
use crate::support::process;

use process::{listening_address, server_binary};

const TOKEN: &str = "frontier-token-5d1e0b";

/// A server process behind TLS and a token, with the files a client needs.
struct Secured {
    child: Child,
    addr: String,
    ca_file: PathBuf,
    token_file: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Secured {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `squall-frontier` on 127.0.0.1 with TLS (a certificate for 127.0.0.1 and localhost from
/// a CA made here) and the token, on an embedded frontier of its own.
fn start_secured() -> Secured {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = TestCa::new("squall frontier test CA");
    let ca_file = ca.write_pem(dir.path(), "ca.pem");
    let (cert, key) = ca
        .server_identity(&["127.0.0.1", "localhost"])
        .write(dir.path(), "server");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).expect("token file");
    let mut child = Command::new(server_binary())
        .args(["--listen", "127.0.0.1:0", "--frontier-path"])
        .arg(dir.path().join("frontier"))
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .arg("--token-file")
        .arg(&token_file)
        .args(["--set", "fetcher.server.delay=0"])
        .stdout(Stdio::piped())
        .env("RUST_LOG", "warn")
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start squall-frontier");
    let addr = listening_address(&mut child);
    Secured {
        child,
        addr,
        ca_file,
        token_file,
        _dir: dir,
    }
}

/// A client configuration for the server at `addr` with `keys` (`key=value`).
fn client_config(addr: &str, keys: &[String]) -> CrawlConfig {
    let mut builder = ConfigBuilder::new()
        .set("http.agent.name=test")
        .and_then(|b| b.set(&format!("urlfrontier.address=https://{addr}")))
        .expect("keys");
    for key in keys {
        builder = builder.set(key).expect("key");
    }
    builder.build().expect("config")
}

fn discovered(url: &str) -> StatusWrite {
    let url = url::Url::parse(url).expect("url");
    StatusWrite {
        key: url.host_str().unwrap_or_default().to_string(),
        url: CrawlUrl::seed(url),
        status: Status::Discovered,
        next_fetch: Some(Utc::now()),
        queue: Default::default(),
    }
}

fn path_key(key: &str, path: &Path) -> String {
    format!("{key}={}", path.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn squalls_client_with_the_token_and_the_ca_writes_and_reads() {
    let server = start_secured();
    let config = client_config(
        &server.addr,
        &[
            path_key("urlfrontier.token.file", &server.token_file),
            path_key("urlfrontier.tls.ca.file", &server.ca_file),
        ],
    );
    let (mut spout, store, _) = squall_urlfrontier::client::open(&config)
        .await
        .expect("connects over TLS");
    let written = store.store(vec![discovered("http://a.test/1")]).await;
    assert!(written.iter().all(Result::is_ok), "{written:?}");
    let mut handed_out = Vec::new();
    for _ in 0..50 {
        handed_out = spout.next_batch(&BusyUrls::none()).await.expect("GetURLs");
        if !handed_out.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let urls: Vec<&str> = handed_out.iter().map(|due| due.url.url.as_str()).collect();
    assert_eq!(urls, ["http://a.test/1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_without_the_right_token_is_refused_and_changes_nothing() {
    let server = start_secured();
    let ca = path_key("urlfrontier.tls.ca.file", &server.ca_file);
    for token in [None, Some("urlfrontier.token=not-the-token")] {
        let mut keys = vec![ca.clone()];
        keys.extend(token.map(str::to_string));
        let (mut spout, store, _) =
            squall_urlfrontier::client::open(&client_config(&server.addr, &keys))
                .await
                .expect("TLS itself is fine");
        let written = store.store(vec![discovered("http://b.test/1")]).await;
        let error = written[0].as_ref().expect_err("refused").to_string();
        assert!(error.contains("bearer token"), "{error}");
        assert!(!error.contains(TOKEN), "{error}");
        let read = spout.next_batch(&BusyUrls::none()).await;
        assert!(read.is_err(), "{read:?}");
    }
    // Nothing of the refused writes is there.
    let right = client_config(
        &server.addr,
        &[ca, path_key("urlfrontier.token.file", &server.token_file)],
    );
    let (mut spout, _, _) = squall_urlfrontier::client::open(&right)
        .await
        .expect("open");
    let batch = spout.next_batch(&BusyUrls::none()).await.expect("GetURLs");
    assert!(batch.is_empty(), "{batch:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_trusting_another_ca_cannot_connect_and_is_told_why() {
    let server = start_secured();
    let dir = tempfile::tempdir().expect("temp dir");
    let other = TestCa::new("another CA").write_pem(dir.path(), "other.pem");
    let config = client_config(
        &server.addr,
        &[
            path_key("urlfrontier.tls.ca.file", &other),
            path_key("urlfrontier.token.file", &server.token_file),
        ],
    );
    let error = match squall_urlfrontier::client::open(&config).await {
        Ok(_) => panic!("connected to a server whose certificate it should not trust"),
        Err(error) => error.to_string(),
    };
    assert!(error.contains("certificate"), "{error}");
    assert!(error.contains("urlfrontier.address"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_java_client_drives_the_secured_server_with_tls_and_the_token() {
    let server = start_secured();
    let addr = server.addr.clone();
    let options = vec![
        "--ca-file".to_string(),
        server.ca_file.display().to_string(),
        "--token-file".to_string(),
        server.token_file.display().to_string(),
    ];
    let crawl = format!("secured-{}", std::process::id());
    let outcome =
        tokio::task::spawn_blocking(move || java::run_interop_check_with(&addr, &crawl, &options))
            .await
            .expect("joined")
            .expect("the check ran");
    let stdout = String::from_utf8_lossy(&outcome.stdout);
    assert!(
        outcome.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&outcome.stderr)
    );

    // Without the token, every call is refused.
    let addr = server.addr.clone();
    let ca = vec![
        "--ca-file".to_string(),
        server.ca_file.display().to_string(),
    ];
    let refused =
        tokio::task::spawn_blocking(move || java::run_interop_check_with(&addr, "refused", &ca))
            .await
            .expect("joined")
            .expect("the check ran");
    let stdout = String::from_utf8_lossy(&refused.stdout);
    assert!(!refused.status.success(), "{stdout}");
    assert!(stdout.contains("UNAUTHENTICATED"), "{stdout}");
}

#[test]
fn the_server_refuses_to_listen_off_loopback_with_neither_tls_nor_a_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(server_binary())
        .args(["--listen", "0.0.0.0:0", "--frontier-path"])
        .arg(dir.path())
        .output()
        .expect("run squall-frontier");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-open"), "{stderr}");
    assert!(output.stdout.is_empty(), "it listened");
}

/// TLS proves the server to its clients, not the clients to the server: off loopback a token is
/// still needed.
#[test]
fn the_server_refuses_to_listen_off_loopback_with_tls_but_no_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = TestCa::new("squall frontier test CA");
    let (cert, key) = ca
        .server_identity(&["127.0.0.1", "localhost"])
        .write(dir.path(), "server");
    let child = Command::new(server_binary())
        .args(["--listen", "0.0.0.0:0", "--frontier-path"])
        .arg(dir.path().join("frontier"))
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .env_remove("SQUALL_FRONTIER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run squall-frontier");
    let output = exit_within(child, std::time::Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without a token"),
        "{stderr}"
    );
    assert!(stderr.contains("not clients to the server"), "{stderr}");
    assert!(output.stdout.is_empty(), "it listened");
}

/// The process's output once it ends, or a failure naming what it printed if it still runs after
/// `limit` (then it is killed): a server that starts instead of refusing fails the test.
fn exit_within(mut child: Child, limit: std::time::Duration) -> std::process::Output {
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let output = child.wait_with_output().expect("output");
            panic!(
                "it started instead of refusing: {}",
                String::from_utf8_lossy(&output.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}
