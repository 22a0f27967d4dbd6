//! Where the test engine is and what it is, for every crate's integration tests (the engine
//! crate's include this file): `OPENSEARCH_URL` (default [`DEFAULT_URL`]) and `SQUALL_ENGINE`
//! (`opensearch`, the default, or `elasticsearch` in `scripts/test`'s second pass), index names no
//! other test uses, and the message of a test that finds no node.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the engine is expected when `OPENSEARCH_URL` is not set.
pub const DEFAULT_URL: &str = "http://127.0.0.1:9200";

/// The engine's base URL: `OPENSEARCH_URL`, or [`DEFAULT_URL`].
pub fn base_url() -> String {
    std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| DEFAULT_URL.to_string())
}

/// Which engine the tests run on, and so which script starts a node of their own:
/// `SQUALL_ENGINE` (`opensearch`, the default, or `elasticsearch`).
pub fn engine_name() -> &'static str {
    match std::env::var("SQUALL_ENGINE").as_deref() {
        Ok("elasticsearch") => "elasticsearch",
        Ok("opensearch") | Err(_) => "opensearch",
        Ok(other) => panic!("SQUALL_ENGINE={other}: expected opensearch or elasticsearch"),
    }
}

/// Stops a test that finds no engine, saying how to start one: an engine test never passes
/// without an engine.
pub fn no_node(url: &str, why: &str) -> ! {
    panic!(
        "no OpenSearch node answers at {url} ({why}). Start one with `scripts/opensearch start` \
         (or point OPENSEARCH_URL at a running OpenSearch, default {DEFAULT_URL}, or at an \
         Elasticsearch with SQUALL_ENGINE=elasticsearch)."
    )
}

/// An index name that no other test, and no earlier run, uses.
pub fn unique_index(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{nanos}-{n}", std::process::id())
}
