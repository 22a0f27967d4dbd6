//! Running the crawl binary (the `squall-crawler` crate, run as the example `crawl`) against the
//! local test site. Each test crate uses the part it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use squall_testsite::Site;

/// The crawl binary beside the test executables: a whole `cargo test` builds the examples, a
/// `cargo test --test suite` does not (build it first: `cargo build -p squall --example crawl`).
pub fn crawl_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let target_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target directory");
    let binary = target_dir.join("examples").join("crawl");
    assert!(
        binary.exists(),
        "{} is missing: build it with `cargo build -p squall --example crawl` (a whole `cargo test` \
         builds it; `cargo test --test suite` alone does not)",
        binary.display()
    );
    binary
}

/// `--resolve` arguments sending every host name of the site to its loopback address.
pub fn resolve_args(site: &Site) -> Vec<String> {
    resolve_args_for(&site.host_names(), site.addr())
}

/// `--resolve` arguments sending each of `names` to the address of `addr` (a site's own).
pub fn resolve_args_for(names: &[String], addr: std::net::SocketAddr) -> Vec<String> {
    names
        .iter()
        .flat_map(|host| ["--resolve".to_string(), format!("{host}:{}", addr.ip())])
        .collect()
}

/// [`resolve_args`] followed by the site's seeds.
pub fn site_args(site: &Site) -> Vec<String> {
    let mut args = resolve_args(site);
    args.extend(site.seeds());
    args
}

/// Lines in a file (fetch-log entries); 0 when it does not exist yet.
pub fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The crawl binary's arguments for a queue frontier in the engine at `es_url`: urls index `urls`
/// and queues index `queues`, created with `(shards, replicas)`, this process being `instance`.
pub fn queue_frontier_args(
    es_url: &str,
    urls: &str,
    queues: &str,
    (shards, replicas): (u32, u32),
    instance: &str,
) -> Vec<String> {
    let (shards, replicas) = (shards.to_string(), replicas.to_string());
    [
        "--frontier",
        "opensearch",
        "--es-url",
        es_url,
        "--spout",
        "queue",
        "--es-index",
        urls,
        "--es-queues-index",
        queues,
        "--es-shards",
        &shards,
        "--es-replicas",
        &replicas,
        "--instance-id",
        instance,
    ]
    .map(str::to_string)
    .to_vec()
}

/// `--set` arguments for `settings` (`key=value` each).
pub fn set_args(settings: &[&str]) -> Vec<String> {
    settings
        .iter()
        .flat_map(|setting| ["--set".to_string(), setting.to_string()])
        .collect()
}
