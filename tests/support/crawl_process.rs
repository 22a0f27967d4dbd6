//! One process of the crawl binary started by a multi-process test, with the files it writes
//! (`fetch.jsonl-I`, `summary.json-I`, `stdout.txt-I`, `stderr.txt-I` in a directory of the test).
//! Dropping it kills the process if it still runs, so a failed test leaves no crawler behind.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::binary::{crawl_binary, lines};

/// A running (or ended) crawl process.
pub struct CrawlProcess {
    /// Its number in the test.
    pub index: usize,
    /// The OS process.
    pub child: Child,
    /// Its fetch log (`--fetch-log`).
    pub log: PathBuf,
    /// Its summary (`--summary-json`), written when it stops.
    pub summary: PathBuf,
    /// Its standard output.
    pub stdout: PathBuf,
    /// Its standard error (the log lines).
    pub stderr: PathBuf,
}

impl CrawlProcess {
    /// Starts the crawl binary with `args`, its fetch log and summary in `dir`, and `env` set.
    pub fn start(index: usize, dir: &Path, args: &[String], env: &[(&str, &str)]) -> Self {
        let file = |name: &str| dir.join(format!("{name}-{index}"));
        let (log, summary, stdout, stderr) = (
            file("fetch.jsonl"),
            file("summary.json"),
            file("stdout.txt"),
            file("stderr.txt"),
        );
        let output = |path: &Path| std::fs::File::create(path).expect("output file");
        let child = Command::new(crawl_binary())
            .args(args)
            .arg("--fetch-log")
            .arg(&log)
            .arg("--summary-json")
            .arg(&summary)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(output(&stdout))
            .stderr(output(&stderr))
            .spawn()
            .expect("start a crawl process");
        CrawlProcess {
            index,
            child,
            log,
            summary,
            stdout,
            stderr,
        }
    }

    /// Whether the process still runs (stopped with SIGSTOP counts as running).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `signal` (STOP, CONT) to the process, which must still be running (so its PID is
    /// still its own).
    pub fn signal(&mut self, signal: &str) {
        assert!(
            self.running(),
            "process {} ended before SIG{signal}:\n{}",
            self.index,
            self.tail()
        );
        let status = Command::new("kill")
            .args(["-s", signal, &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -s {signal} failed");
    }

    /// Kills the process with SIGKILL; it must still be running.
    pub fn kill(&mut self) {
        assert!(
            self.running(),
            "process {} ended before SIGKILL:\n{}",
            self.index,
            self.tail()
        );
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }

    /// Fetches in its log so far.
    pub fn fetched(&self) -> usize {
        lines(&self.log)
    }

    /// Its standard output and standard error so far.
    pub fn output(&self) -> (String, String) {
        (
            std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default(),
        )
    }

    /// The end of its output, for failure messages.
    pub fn tail(&self) -> String {
        let (stdout, stderr) = self.output();
        let last = |text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(15)..].join("\n")
        };
        format!(
            "--- process {} stdout:\n{}\n--- stderr:\n{}",
            self.index,
            last(&stdout),
            last(&stderr)
        )
    }
}

impl Drop for CrawlProcess {
    fn drop(&mut self) {
        if self.running() {
            // SIGKILL also ends a stopped process.
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
