//! The crawl binary given an embedded frontier path it cannot use: a symbolic link loop, a link to
//! nothing, a frontier another process has open. Each is one error that names the path and what is
//! wrong. Build the binary first when running this file alone:
//! `cargo build -p squall --example crawl`.
#![cfg(unix)]

use crate::support;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::binary::crawl_binary;

/// Runs the crawl binary on the frontier at `path` until idle, with a seed on a closed loopback
/// port.
fn crawl(path: &Path) -> Output {
    command(path)
        .arg("--until-idle")
        .output()
        .expect("run the crawl binary")
}

fn command(path: &Path) -> Command {
    let mut command = Command::new(crawl_binary());
    command.args(["--set", "http.agent.name=squall-test", "--frontier-path"]);
    command.arg(path).arg("http://127.0.0.1:9/");
    command
}

/// The binary's standard error, checked to be one error (exit 2) that holds each of `wanted`.
fn one_error(output: &Output, wanted: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let errors = stderr.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(errors, 1, "{stderr}");
    for text in wanted {
        assert_eq!(
            stderr.matches(text).count(),
            1,
            "{text:?} once in: {stderr}"
        );
    }
    stderr
}

#[test]
fn a_symlink_loop_or_a_link_to_nothing_is_named_as_such() {
    let dir = tempfile::tempdir().expect("temp dir");
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink("loop", &looped).expect("link");
    let stderr = one_error(&crawl(&looped), &["symbolic link loop"]);
    assert!(stderr.contains(&*looped.to_string_lossy()), "{stderr}");
    assert!(!stderr.contains("File exists"), "{stderr}");

    let dangling = dir.path().join("frontier");
    let target = dir.path().join("moved-away");
    std::os::unix::fs::symlink(&target, &dangling).expect("link");
    let named = format!("a link to {}, which does not exist", target.display());
    let stderr = one_error(&crawl(&dangling), &[&named]);
    assert!(stderr.contains(&*dangling.to_string_lossy()), "{stderr}");
    assert!(!target.exists(), "the link's target was created");
}

/// Kills the child crawl when the test ends, passed or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_frontier_in_use_names_its_path_and_the_process_holding_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier");
    let first = command(&frontier)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the first crawl");
    let mut first = Running(first);
    let pid_file = frontier.join("frontier.pid");
    let started = Instant::now();
    while !pid_file.exists() {
        assert!(
            first.0.try_wait().expect("wait").is_none(),
            "the first crawl ended"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "never opened");
        std::thread::sleep(Duration::from_millis(50));
    }
    let file = frontier.join("frontier.redb");
    let in_use = format!(
        "the embedded frontier {} is in use by another process (PID {})",
        file.display(),
        first.0.id()
    );
    one_error(&crawl(&frontier), &[&in_use]);
    assert!(
        first.0.try_wait().expect("wait").is_none(),
        "the first crawl was disturbed"
    );
}
