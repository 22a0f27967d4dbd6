//! crawler-commons' reference URLFrontier service and client CLI, built from their source by
//! `scripts/urlfrontier-reference`, run as processes on loopback for the interop tests (of this
//! crate, and of the main crate's crawl binary).
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The workspace root: the nearest directory above this crate's that holds the script (the
/// module is shared by the tests of two crates).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("scripts/urlfrontier-reference").is_file())
        .expect("scripts/urlfrontier-reference above the crate")
        .to_path_buf()
}

fn script() -> Command {
    let mut command = Command::new(workspace_root().join("scripts/urlfrontier-reference"));
    command.current_dir(workspace_root());
    command
}

/// Builds the reference once (it is cached); `Err` with the script's reason when it cannot be
/// built here (no source tarball, no Java 17 or no Maven): the caller skips, saying so.
pub fn build() -> Result<(), String> {
    let check = script().arg("check").output().map_err(|e| e.to_string())?;
    if !check.status.success() {
        return Err(String::from_utf8_lossy(&check.stderr).trim().to_string());
    }
    let built = script()
        .arg("build")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| e.to_string())?;
    assert!(built.success(), "the reference URLFrontier did not build");
    Ok(())
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
    let child = script()
        .arg("service")
        .arg(port.to_string())
        .arg(dir)
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
    script()
        .arg("client")
        .arg(port.to_string())
        .args(args)
        .output()
        .expect("run the reference client")
}
