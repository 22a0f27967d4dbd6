//! The fetch logs of crawl processes (`--fetch-log`, one JSON object per completed fetch), read
//! back for the checks of the multi-process tests and of the shared-crawl benchmark.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// One line of a fetch log.
#[derive(Debug, Clone)]
pub struct Fetch {
    /// The process whose log holds the line.
    pub process: usize,
    /// The URL fetched.
    pub url: String,
    /// Its queue key (the host).
    pub key: String,
    /// When the fetch began.
    pub started: DateTime<Utc>,
    /// When it completed.
    pub finished: DateTime<Utc>,
    /// The line as logged, for messages.
    pub line: String,
}

/// The entries of a fetch log, and what is wrong with its lines (each must be a complete JSON
/// object with the fields the checks read).
pub fn read_log(process: usize, path: &Path) -> (Vec<Fetch>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut problems = Vec::new();
    if !text.is_empty() && !text.ends_with('\n') {
        problems.push(format!(
            "process {process}: the fetch log ends in a partial line: {:?}",
            text.lines().last().unwrap_or_default()
        ));
    }
    let mut fetches = Vec::new();
    for (n, line) in text.lines().enumerate() {
        match parse_line(process, line) {
            Some(fetch) => fetches.push(fetch),
            None => problems.push(format!(
                "process {process}: fetch-log line {} is not a complete entry: {line:?}",
                n + 1
            )),
        }
    }
    (fetches, problems)
}

/// The entries of a fetch log read leniently (a benchmark's way): blank lines skipped, and the
/// number of the other lines that are not complete entries.
pub fn read_log_lenient(process: usize, path: &Path) -> (Vec<Fetch>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut fetches = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse_line(process, line) {
            Some(fetch) => fetches.push(fetch),
            None => bad += 1,
        }
    }
    (fetches, bad)
}

/// One line of process `process`'s fetch log as a [`Fetch`]; `None` when it is not a JSON object
/// with the fields the checks read.
pub fn parse_line(process: usize, line: &str) -> Option<Fetch> {
    let entry = serde_json::from_str::<Value>(line).ok()?;
    let field = |name: &str| entry[name].as_str().map(str::to_string);
    let time = |name: &str| {
        field(name)
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    Some(Fetch {
        process,
        url: field("url")?,
        key: field("key")?,
        started: time("started")?,
        finished: time("finished")?,
        line: line.to_string(),
    })
}

/// The problem of fetches `a` and `b` of `host`, by two processes, made at once (`at_once`) or
/// closer than the politeness delay.
pub fn politeness_problem(host: &str, at_once: bool, a: &Fetch, b: &Fetch) -> String {
    let what = if at_once {
        "fetched by two processes at once"
    } else {
        "fetched by two processes closer than the delay"
    };
    format!(
        "{host} {what}:\n  process {}: {}\n  process {}: {}",
        a.process, a.line, b.process, b.line
    )
}

/// `fetches` by host (queue key), each host's in order of start.
pub fn by_host(fetches: &[Fetch]) -> BTreeMap<&str, Vec<&Fetch>> {
    let mut by_host: BTreeMap<&str, Vec<&Fetch>> = BTreeMap::new();
    for fetch in fetches {
        by_host.entry(&fetch.key).or_default().push(fetch);
    }
    for list in by_host.values_mut() {
        list.sort_by_key(|f| f.started);
    }
    by_host
}
