//! StormCrawler's own index files, kept as published in `tests/fixtures/stormcrawler/`, so that
//! the tests check compatibility with StormCrawler's indices and not with squall's copy of them.
#![allow(dead_code)]

use serde_json::{Value, json};

/// StormCrawler's `status.mapping` (its archetypes' `ES_IndexInit.sh` and the OpenSearch module's
/// resource), exactly as published.
pub const STATUS_MAPPING: &str = include_str!("../fixtures/stormcrawler/status.mapping");

/// StormCrawler's status index body with test-sized settings: `shards` shards, `replicas`
/// replicas, `refresh_interval`; the mapping untouched.
pub fn status_index(shards: u32, replicas: u32, refresh_interval: &str) -> Value {
    let mut body: Value =
        serde_json::from_str(STATUS_MAPPING).expect("the fixture is StormCrawler's JSON");
    body["settings"]["index"] = json!({
        "number_of_shards": shards,
        "number_of_replicas": replicas,
        "refresh_interval": refresh_interval,
    });
    body
}
