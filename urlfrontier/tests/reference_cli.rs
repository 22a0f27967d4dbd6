//! Every command of crawler-commons' reference URLFrontier client CLI, run against squall's
//! `squall-frontier` (embedded frontier) and against the reference service (RocksDB) with the same
//! data, step by step, their outputs compared. Both are built and run as processes on loopback
//! (`support/reference.rs`); the reference runs from the jars `URLFRONTIER_REFERENCE_SERVICE_JAR`
//! and `URLFRONTIER_REFERENCE_CLIENT_JAR` name (built by hand, never by squall), and the test is
//! skipped, saying why, when they are not set.
//!
//! What is compared is each command's standard output, with what no two runs share taken out: the
//! timings PutURLs and GetURLs print, the port in ListNodes, and dates within five minutes of now
//! (a URL put is due from the second it was put: both servers print that second, which may differ
//! by one). Where the API leaves the order of a listing open (queues, URLs, crawls, URLs handed
//! out) the lines are compared as sets: the reference lists in the order of its hash tables, which
//! no other implementation could or should reproduce.
//!
//! The steps where squall still answers otherwise are listed in [`KNOWN_DIFFERENCES`] with the
//! reason; the test fails on any other difference, and on a listed one that went away.

use crate::support::reference;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// Steps whose outputs differ today, and why (none since squall serves API 2.6).
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// What the reference client prints on its standard error when a server does not take
/// PutDiscovered (API 2.6) and it falls back to PutURLs.
const NO_PUT_DISCOVERED: &str = "does not support PutDiscovered";

/// How a step's output is compared.
#[derive(Clone, Copy, PartialEq)]
enum Order {
    /// Line by line, as printed.
    Exact,
    /// As a set of lines (a listing in an order the API leaves open).
    Lines,
    /// As a set of blocks separated by empty lines (GetURLs' items).
    Blocks,
}

struct Step {
    name: &'static str,
    args: Vec<String>,
    order: Order,
}

fn step(name: &'static str, args: &[&str], order: Order) -> Step {
    Step {
        name,
        args: args.iter().map(|a| a.to_string()).collect(),
        order,
    }
}

const CRAWL: &str = "cli";

fn seeds_file(dir: &std::path::Path) -> String {
    let urls = [
        "https://host1.example/page1",
        "https://host1.example/page2",
        "https://host1.example/page3",
        "https://host2.example/a",
        "https://host2.example/b",
        "https://host3.example/x?y=1",
    ];
    let path = dir.join("seeds.txt");
    std::fs::write(&path, urls.join("\n") + "\n").expect("write the seeds");
    path.display().to_string()
}

/// URLs sent in batches of discovered URLs (PutDiscovered): two known, one new, one twice.
fn discovered_file(dir: &std::path::Path) -> String {
    let urls = [
        "https://host1.example/page1",
        "https://host4.example/new",
        "https://host2.example/b",
        "https://host4.example/new",
    ];
    let path = dir.join("discovered.txt");
    std::fs::write(&path, urls.join("\n") + "\n").expect("write the discovered URLs");
    path.display().to_string()
}

/// URLs put back as known: page1 done for good, `a` to be fetched again at a fixed date.
fn known_file(dir: &std::path::Path) -> String {
    let item = |url: &str, key: &str, date: &str| {
        format!(
            r#"{{"known":{{"info":{{"url":"{url}","key":"{key}","crawlID":"{CRAWL}"}},"refetchableFromDate":"{date}"}}}}"#
        )
    };
    let lines = [
        item("https://host1.example/page1", "host1.example", "0"),
        item("https://host2.example/a", "host2.example", "1900000000"),
    ];
    let path = dir.join("known.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("write the known items");
    path.display().to_string()
}

/// A step of `command` in the test's crawl (`-c cli`), with `extra` arguments.
fn in_crawl(name: &'static str, command: &str, extra: &[&str], order: Order) -> Step {
    let args: Vec<&str> = [command, "-c", CRAWL]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    step(name, &args, order)
}

fn steps(seeds: &str, discovered: &str, known: &str) -> Vec<Step> {
    use Order::*;
    let all = ["-q", "0", "-m", "0"];
    vec![
        step("ListNodes", &["ListNodes"], Exact),
        step("GetActive", &["GetActive"], Exact),
        in_crawl("PutURLs", "PutURLs", &["-f", seeds], Exact),
        in_crawl(
            "PutURLs (again: known URLs)",
            "PutURLs",
            &["-f", seeds],
            Exact,
        ),
        in_crawl(
            "PutURLs -b (PutDiscovered: known and new URLs)",
            "PutURLs",
            &["-f", discovered, "-b", "2"],
            Exact,
        ),
        in_crawl("GetStats", "GetStats", &[], Exact),
        in_crawl(
            "GetStats (one queue)",
            "GetStats",
            &["-k", "host1.example"],
            Exact,
        ),
        in_crawl("ListQueues", "ListQueues", &[], Lines),
        step("ListCrawls", &["ListCrawls"], Lines),
        in_crawl("CountURLs", "CountURLs", &[], Exact),
        in_crawl(
            "CountURLs (one queue)",
            "CountURLs",
            &["-k", "host2.example"],
            Exact,
        ),
        in_crawl(
            "CountURLs (filter, ignoring case)",
            "CountURLs",
            &["-f", "PAGE", "-i"],
            Exact,
        ),
        in_crawl("ListURLs", "ListURLs", &[], Lines),
        in_crawl(
            "ListURLs (one queue)",
            "ListURLs",
            &["-k", "host1.example"],
            Lines,
        ),
        in_crawl(
            "GetURLStatus",
            "GetURLStatus",
            &["-u", "https://host1.example/page2"],
            Exact,
        ),
        in_crawl(
            "GetURLStatus (unknown URL)",
            "GetURLStatus",
            &["-u", "https://host9.example/"],
            Exact,
        ),
        in_crawl(
            "GetURLs (all due, held 60 s)",
            "GetURLs",
            &[&all[..], &["-d", "60"]].concat(),
            Blocks,
        ),
        in_crawl("GetURLs (again: all held)", "GetURLs", &all, Blocks),
        in_crawl("GetStats (in process)", "GetStats", &[], Exact),
        in_crawl(
            "PutURLs (known: done, rescheduled)",
            "PutURLs",
            &["-f", known],
            Exact,
        ),
        in_crawl("GetStats (after known)", "GetStats", &[], Exact),
        in_crawl(
            "GetURLStatus (done)",
            "GetURLStatus",
            &["-u", "https://host1.example/page1"],
            Exact,
        ),
        in_crawl(
            "GetURLStatus (rescheduled)",
            "GetURLStatus",
            &["-u", "https://host2.example/a"],
            Exact,
        ),
        in_crawl("ListURLs (after known)", "ListURLs", &[], Lines),
        in_crawl("DumpURLs", "DumpURLs", &[], Lines),
        in_crawl(
            "SetCrawlLimit",
            "SetCrawlLimit",
            &["-k", "host3.example", "-l", "5"],
            Exact,
        ),
        step(
            "SetLogLevel",
            &["SetLogLevel", "-p", "squall_urlfrontier", "-l", "INFO"],
            Exact,
        ),
        step("SetActive false", &["SetActive", "false"], Exact),
        step("GetActive (paused)", &["GetActive"], Exact),
        step("SetActive true", &["SetActive", "true"], Exact),
        in_crawl(
            "DeleteQueue",
            "DeleteQueue",
            &["-k", "host3.example"],
            Exact,
        ),
        in_crawl("ListQueues (after delete)", "ListQueues", &["-i"], Lines),
        in_crawl("PurgeURLs", "PurgeURLs", &["-d", "1"], Exact),
        in_crawl("DeleteCrawl", "DeleteCrawl", &[], Exact),
        step("ListCrawls (after delete)", &["ListCrawls"], Lines),
    ]
}

/// A step's standard output with what differs between any two runs taken out (see the module
/// doc), in the step's order.
fn normalize(text: &str, port: u16, order: Order) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with("Total time: ") && !l.starts_with("Average OPS: "))
        .filter(|l| !l.starts_with("squall."))
        .map(|l| l.replace(&format!(":{port}"), ":<port>"))
        .map(|l| recent_dates(&l, now))
        .collect();
    match order {
        Order::Exact => lines.join("\n"),
        Order::Lines => {
            let mut lines = lines;
            lines.sort();
            lines.join("\n")
        }
        Order::Blocks => {
            let joined = lines.join("\n");
            let mut blocks: Vec<&str> = joined.split("\n\n").map(str::trim).collect();
            blocks.retain(|b| !b.is_empty());
            blocks.sort();
            blocks.join("\n\n")
        }
    }
}

/// Replaces every run of 10 digits within 300 s of `now` by `<now>`.
fn recent_dates(line: &str, now: u64) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    let flush = |digits: &mut String, out: &mut String| {
        let recent =
            digits.len() == 10 && digits.parse::<u64>().is_ok_and(|d| d.abs_diff(now) <= 300);
        out.push_str(if recent { "<now>" } else { digits });
        digits.clear();
    };
    for ch in line.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            flush(&mut digits, &mut out);
            out.push(ch);
        }
    }
    flush(&mut digits, &mut out);
    out
}

/// `squall-frontier` on an embedded frontier in `dir`, with `settings` (`key=value`), once it
/// printed its address.
fn start_squall(dir: &Path, settings: &[&str]) -> reference::ServerProcess {
    let port = reference::free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_squall-frontier"));
    command
        .args(["--listen", &format!("127.0.0.1:{port}"), "--frontier-path"])
        .arg(dir);
    for setting in settings {
        command.args(["--set", setting]);
    }
    let mut child = command
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start squall-frontier");
    let stdout = child.stdout.take().expect("its stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("its first line");
    assert!(
        line.starts_with("listening on "),
        "squall-frontier said {line:?}"
    );
    reference::ServerProcess { child, port }
}

#[test]
fn every_reference_cli_command_reads_the_same_from_squall_as_from_the_reference() {
    if let Err(why) = reference::locate() {
        eprintln!("SKIPPED: the reference URLFrontier is not at hand: {why}");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let ours = start_squall(
        &dir.path().join("squall"),
        &["fetcher.server.delay=1", "spout.min.delay.queries=50"],
    );
    let theirs = reference::start_reference(&dir.path().join("rocksdb"));
    let (seeds, known) = (seeds_file(dir.path()), known_file(dir.path()));
    let discovered = discovered_file(dir.path());
    let mut unexpected = Vec::new();
    let mut gone = Vec::new();
    for step in steps(&seeds, &discovered, &known) {
        let args: Vec<&str> = step.args.iter().map(String::as_str).collect();
        let reference_out = reference::cli(theirs.port, &args);
        let squall_out = reference::cli(ours.port, &args);
        for (server, out) in [("reference", &reference_out), ("squall", &squall_out)] {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains(NO_PUT_DISCOVERED),
                "{}: the {server} server does not take PutDiscovered: {stderr}",
                step.name
            );
        }
        let expected = normalize(
            &String::from_utf8_lossy(&reference_out.stdout),
            theirs.port,
            step.order,
        );
        let got = normalize(
            &String::from_utf8_lossy(&squall_out.stdout),
            ours.port,
            step.order,
        );
        let known = KNOWN_DIFFERENCES
            .iter()
            .find(|(name, _)| *name == step.name);
        match (expected == got, known) {
            (true, None) => eprintln!("same      {}: {}", step.name, args.join(" ")),
            (true, Some(_)) => {
                eprintln!("same      {} (listed as a known difference)", step.name);
                gone.push(step.name);
            }
            (false, Some((_, why))) => eprintln!("differs   {} (known: {why})", step.name),
            (false, None) => {
                eprintln!(
                    "DIFFERS   {}: {}\n--- reference ---\n{expected}\n--- squall ---\n{got}\n\
                     --- squall's stderr ---\n{}",
                    step.name,
                    args.join(" "),
                    String::from_utf8_lossy(&squall_out.stderr)
                );
                unexpected.push(step.name);
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "squall answers otherwise in: {unexpected:?}"
    );
    assert!(
        gone.is_empty(),
        "no longer different, take them out of KNOWN_DIFFERENCES: {gone:?}"
    );
}
