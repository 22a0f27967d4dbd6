//! Connection to the real engine the integration tests run against: the OpenSearch node, or in
//! `scripts/test`'s second pass the Elasticsearch node (`SQUALL_ENGINE=elasticsearch`).
#![allow(dead_code)]
//!
//! The node is started by `scripts/opensearch start` (CI does it in `.ci/run`). Tests never skip when it
//! is missing: they fail with a message that says how to start it.

use elasticsearch::Elasticsearch;
use elasticsearch::http::transport::Transport;
use elasticsearch::indices::{IndicesDeleteParts, IndicesRefreshParts};
use serde_json::{Value, json};

use super::engine_node::no_node;
#[allow(unused_imports)] // (each test binary uses some of them)
pub use super::engine_node::{DEFAULT_URL, base_url, engine_name, unique_index};

/// Holds StormCrawler's index names (`status`, `content`, the metrics template) for a test that
/// makes them with the archetype's `OS_IndexInit.sh`: their names are fixed, and every test file of
/// the suite runs in one process, side by side, so such tests take turns.
pub async fn archetype_indices() -> tokio::sync::MutexGuard<'static, ()> {
    static IN_USE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    IN_USE.lock().await
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
        no_node(&url, "no answer to GET /")
    };
    // `scripts/test` runs the engine tests on each engine: make sure each pass has the one it means.
    let is_opensearch = info["version"]["distribution"] == "opensearch";
    let expected = engine_name();
    assert_eq!(
        is_opensearch,
        expected == "opensearch",
        "SQUALL_ENGINE={expected}, but {url} answers {}",
        info["version"]
    );
    client
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
