//! The URLFrontier interop client: `InteropCheck`, a Java program on the official
//! `urlfrontier-API` 2.5 jar's generated stubs (`urlfrontier/tests/java-client`), run through
//! `scripts/urlfrontier-java` against a server under test. It needs Java 17 and Maven; the first
//! build downloads the jar, gRPC and protobuf from Maven Central.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, Result, bail};

/// The workspace root, the parent of this crate's directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the urlfrontier crate lives inside the workspace")
        .to_path_buf()
}

/// Runs `scripts/urlfrontier-java run --address ADDRESS --crawl CRAWL` from the workspace root
/// (building the Java program first when needed) and returns what it did: it prints one line a
/// check, `ok NAME` or `FAIL NAME: DETAIL`, and exits 0 only when every check held. `address` is
/// `host:port` of a plaintext gRPC server; `crawl` should be a crawl ID the server has not seen.
/// Fails, saying what to install, when `java` or `mvn` is missing.
pub fn run_interop_check(address: &str, crawl: &str) -> Result<Output> {
    run_interop_check_with(address, crawl, &[])
}

/// [`run_interop_check`] with more of the program's options: `--ca-file PEM` (TLS trusting that
/// CA) and `--token-file FILE` (a bearer token on every call).
pub fn run_interop_check_with(address: &str, crawl: &str, options: &[String]) -> Result<Output> {
    for (program, package) in [("java", "Java 17"), ("mvn", "Maven 3.8+")] {
        if !on_path(program) {
            bail!(
                "the URLFrontier interop check needs `{program}` ({package}) on PATH: install it \
                 (Debian: openjdk-17-jdk-headless and maven, as .ci/run does)"
            );
        }
    }
    let root = workspace_root();
    let script = root.join("scripts/urlfrontier-java");
    Command::new(&script)
        .args(["run", "--address", address, "--crawl", crawl])
        .args(options)
        .current_dir(&root)
        .output()
        .with_context(|| format!("could not run {}", script.display()))
}

/// [`run_interop_check`], failing unless every check held; the error carries the program's whole
/// output. Returns its standard output (the `ok` lines) on success.
pub fn assert_interop_check(address: &str, crawl: &str) -> Result<String> {
    let output = run_interop_check(address, crawl)?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!(
            "the URLFrontier interop check against {address} (crawl {crawl}) failed ({}):\n\
             {stdout}\n--- stderr ---\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(stdout)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}
