//! crawler-commons' reference URLFrontier service and client CLI, run as processes on loopback for
//! the interop tests (of this crate, and of the main crate's crawl binary) and the
//! `urlfrontier_servers` benchmark.
//!
//! squall neither holds nor builds the reference: its jars, built by hand from crawler-commons'
//! url-frontier repository, are named by two environment variables ([`SERVICE_JAR`] and
//! [`CLIENT_JAR`]). Where they are not set, [`locate`] says so and the caller skips, saying why.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming the reference service's jar (its shaded
/// `urlfrontier-service-*.jar`).
pub const SERVICE_JAR: &str = "URLFRONTIER_REFERENCE_SERVICE_JAR";

/// The environment variable naming the reference client CLI's jar (its shaded
/// `urlfrontier-client-*.jar`).
pub const CLIENT_JAR: &str = "URLFRONTIER_REFERENCE_CLIENT_JAR";

/// The class the service jar runs.
const SERVICE_MAIN: &str = "crawlercommons.urlfrontier.service.URLFrontierServer";

/// The jar the variable `name` names: `Err` saying why when it is unset or not a file.
fn jar(name: &str) -> Result<PathBuf, String> {
    let value = std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| {
            format!(
                "{name} is not set (set {SERVICE_JAR} and {CLIENT_JAR} to the reference's jars, \
             built by hand from crawler-commons/url-frontier)"
            )
        })?;
    let path = PathBuf::from(value);
    if !path.is_file() {
        return Err(format!(
            "{name} names {}, which is not a file",
            path.display()
        ));
    }
    Ok(path)
}

/// Checks that both jars are named and that `java` runs; `Err` with the reason otherwise (the
/// caller skips, saying so).
pub fn locate() -> Result<(), String> {
    jar(SERVICE_JAR)?;
    jar(CLIENT_JAR)?;
    let java = Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match java {
        Ok(status) if status.success() => Ok(()),
        _ => Err("java (Java 17 or newer) does not run here".to_string()),
    }
}

/// The path `name` names; only called once [`locate`] has said both are there.
fn located(name: &str) -> PathBuf {
    jar(name).unwrap_or_else(|why| panic!("{why}: call reference::locate() first"))
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A server process, killed when dropped.
pub struct ServerProcess {
    /// The process.
    pub child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reference service (RocksDB backend, store in `dir`), once it accepts connections.
pub fn start_reference(dir: &Path) -> ServerProcess {
    let port = free_port();
    let child = Command::new("java")
        .arg("-Xmx1G")
        .arg("-cp")
        .arg(located(SERVICE_JAR))
        .arg(SERVICE_MAIN)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .arg(format!("rocksdb.path={}", dir.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the reference service");
    let server = ServerProcess { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the reference service did not listen on {port} within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// Runs the reference client CLI against 127.0.0.1:`port` with `args`.
pub fn cli(port: u16, args: &[&str]) -> Output {
    Command::new("java")
        .arg("-jar")
        .arg(located(CLIENT_JAR))
        .args(["-t", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .expect("run the reference client")
}

/// squall's server on an embedded frontier in `dir`, answering GetStats with the reference's
/// counts only (`ServerOptions::reference_stats`), with `settings` (`key=value`) set: a server
/// such as workers of other URLFrontier servers meet, always at hand.
pub async fn start_without_squall_counts(
    dir: &Path,
    settings: &[&str],
) -> squall_urlfrontier::server::RunningServer {
    let frontier = dir.join("frontier").display().to_string();
    let mut builder = squall::config::ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.path", &frontier))
        .expect("server config");
    for setting in settings {
        builder = builder.set(setting).expect("a server setting");
    }
    let config = builder.build().expect("server config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let options = squall_urlfrontier::server::ServerOptions {
        reference_stats: true,
        ..Default::default()
    };
    squall_urlfrontier::server::start_with(config, listener, options)
        .await
        .expect("the server starts")
}
