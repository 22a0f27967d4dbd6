//! Connection to the real engine the integration tests run against: the OpenSearch node, or in
//! `scripts/test`'s second pass the Elasticsearch node (`SQUALL_ENGINE=elasticsearch`).
#![allow(dead_code)]
//!
//! The node is started by `scripts/opensearch start` (CI does it in `.ci/run`). Tests never skip when it
//! is missing: they fail with a message that says how to start it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use elasticsearch::Elasticsearch;
use elasticsearch::http::transport::Transport;
use elasticsearch::indices::{IndicesDeleteParts, IndicesRefreshParts};
use serde_json::{Value, json};

/// Where the engine is expected when `OPENSEARCH_URL` is not set.
pub const DEFAULT_URL: &str = "http://127.0.0.1:9200";

/// The engine's base URL: `OPENSEARCH_URL`, or [`DEFAULT_URL`].
pub fn base_url() -> String {
    std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| DEFAULT_URL.to_string())
}

/// A client for the test engine, after checking that the engine answers.
///
/// Panics, with instructions, when it does not: an engine test must never pass without an engine.
pub async fn client() -> Elasticsearch {
    let url = base_url();
    let transport = Transport::single_node(&url)
        .unwrap_or_else(|e| panic!("OPENSEARCH_URL={url} is not a usable address: {e}"));
    let client = Elasticsearch::new(transport);
    let info: Option<Value> = match client.info().send().await {
        Ok(response) if response.status_code().is_success() => response.json().await.ok(),
        _ => None,
    };
    let Some(info) = info else {
        panic!(
            "no OpenSearch node answers at {url}. Start one with `scripts/opensearch start` \
             (or point OPENSEARCH_URL at a running OpenSearch, default {DEFAULT_URL}, or at an Elasticsearch with SQUALL_ENGINE=elasticsearch)."
        );
    };
    // `scripts/test` runs the engine tests on each engine: make sure each pass has the one it means.
    let is_opensearch = info["version"]["distribution"] == "opensearch";
    let expected = std::env::var("SQUALL_ENGINE").unwrap_or_else(|_| "opensearch".into());
    assert_eq!(
        is_opensearch,
        expected == "opensearch",
        "SQUALL_ENGINE={expected}, but {url} answers {}",
        info["version"]
    );
    client
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

/// Deletes a test index; errors are ignored because this is only cleanup.
pub async fn delete_index(client: &Elasticsearch, index: &str) {
    // A queues index comes with the workers index its spouts announce themselves in.
    let workers = format!("{index}-workers");
    for name in [index, workers.as_str()] {
        let _ = client
            .indices()
            .delete(IndicesDeleteParts::Index(&[name]))
            .send()
            .await;
    }
}

/// Every hit of `index` (up to 10,000), after a refresh: `_id`, `_source` and the rest as the
/// engine answers them.
pub async fn all_hits(client: &Elasticsearch, index: &str) -> Vec<Value> {
    client
        .indices()
        .refresh(IndicesRefreshParts::Index(&[index]))
        .send()
        .await
        .expect("refresh");
    let answer: Value = client
        .search(elasticsearch::SearchParts::Index(&[index]))
        .body(json!({ "size": 10000, "query": { "match_all": {} } }))
        .send()
        .await
        .expect("search")
        .json()
        .await
        .expect("search answer");
    answer["hits"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}
