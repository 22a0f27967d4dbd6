//! Migration of a status index into the urls and queues indices, against the engine's own
//! `_reindex` of the same index, on a generated StormCrawler-format index.
//!
//! `cargo bench --bench migration` prints JSON: documents per second of the migration and of
//! `_reindex` (the engine copying the index server-side, the physical limit), their ratio, and the
//! verification of a full run and of a run interrupted half-way and resumed. Needs a node:
//! `SQUALL_BENCH_ES` (default http://127.0.0.1:9200); `SQUALL_BENCH_DOCS` documents (default
//! 1,000,000; `SQUALL_BENCH_QUICK=1`: 20,000).

mod common;

use std::time::{Duration, Instant};

use common::frontier_data::{
    EarliestDue, Generator, Targets, call, call_json, create, delete, finish_load, load,
};
use common::{engine_client, print_result, quick};
use serde_json::json;
use squall_bench_schema::Run;
use squall_bench_schema::stages::Migration;
use squall_engine::client::Method;
use squall_engine::client::{EsClient, RequestBody};
use squall_engine::migrate::{MigrationOptions, migrate};
use squall_engine::status_index::schema::status_index_body;

async fn load_source(client: &EsClient, index: &str, docs: u64) {
    let targets = Targets {
        status: Some(index.to_string()),
        queue_frontier: None,
    };
    create(client, &targets, 4).await;
    let generator = Generator::new((docs / 100).max(10), chrono::Utc::now());
    load(
        client,
        &generator,
        &targets,
        0..docs,
        &mut EarliestDue::new(),
    )
    .await;
    finish_load(client, &targets, "1s").await;
}

/// Seconds the engine takes to `_reindex` `source` into a new index of `shards` shards.
async fn reindex(client: &EsClient, source: &str, target: &str, shards: u32) -> f64 {
    call_json(
        client,
        Method::Put,
        &format!("/{target}"),
        status_index_body(shards, 0, "-1"),
    )
    .await;
    let started = Instant::now();
    let task = call(
        client,
        Method::Post,
        "/_reindex",
        &[("wait_for_completion", "false")],
        Some(RequestBody::Json(
            json!({ "source": { "index": source, "size": 1000 }, "dest": { "index": target } }),
        )),
    )
    .await;
    let task = task["task"].as_str().unwrap_or_default().to_string();
    loop {
        let status = call(client, Method::Get, &format!("/_tasks/{task}"), &[], None).await;
        if status["completed"].as_bool() == Some(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let docs: u64 = common::env_or("DOCS", if quick() { 20_000 } else { 1_000_000 });
    let client = engine_client();
    let run = std::process::id();
    let source = format!("bench-source-{run}");
    let started = Instant::now();
    load_source(&client, &source, docs).await;
    let load_seconds = started.elapsed().as_secs_f64();

    // The same number of shards as the migration's urls index.
    let shards = MigrationOptions::new(&source, "urls", "queues").urls_shards;
    let reindex_seconds = reindex(&client, &source, &format!("bench-reindex-{run}"), shards).await;

    let dir = std::env::temp_dir();
    let mut full = MigrationOptions::new(
        &source,
        &format!("bench-urls-{run}"),
        &format!("bench-queues-{run}"),
    );
    full.batch_size = 5000;
    full.replicas = 0;
    full.checkpoint = dir.join(format!("bench-full-{run}.json"));
    let report = match migrate(&client, &full).await {
        Ok(report) => report,
        Err(e) => panic!("migration: {e}"),
    };

    // Interrupted half-way, then run again: it must continue and verify.
    let mut half = MigrationOptions::new(
        &source,
        &format!("bench-urls2-{run}"),
        &format!("bench-queues2-{run}"),
    );
    half.batch_size = 5000;
    half.replicas = 0;
    half.checkpoint = dir.join(format!("bench-half-{run}.json"));
    half.stop_after_batches = Some((docs / 5000 / 2).max(1) as usize);
    let first = match migrate(&client, &half).await {
        Ok(report) => report,
        Err(e) => panic!("interrupted migration: {e}"),
    };
    half.stop_after_batches = None;
    let resumed = match migrate(&client, &half).await {
        Ok(report) => report,
        Err(e) => panic!("resumed migration: {e}"),
    };

    let migration_rate = report.documents as f64 / report.seconds;
    let reindex_rate = docs as f64 / reindex_seconds;
    print_result(&Migration {
        run: Run::named("migration"),
        documents: Some(docs),
        load_seconds: Some(load_seconds),
        reindex_seconds: Some(reindex_seconds),
        reindex_docs_per_second: Some(reindex_rate),
        migration_seconds: Some(report.seconds),
        migration_docs_per_second: Some(migration_rate),
        ratio_migration_to_reindex: Some(migration_rate / reindex_rate),
        distinct_keys: Some(report.verification.distinct_keys),
        queue_docs: Some(report.verification.queue_docs),
        full_run_verified: Some(report.verification.ok),
        interrupted_after_documents: Some(first.documents),
        interrupted_run_completed: Some(first.completed),
        resumed_run_documents_this_run: Some(resumed.documents_this_run),
        resumed_run_verified: Some(resumed.verification.ok),
    });
    delete(
        &client,
        &[
            &source,
            &format!("bench-reindex-{run}"),
            &full.urls,
            &full.queues,
            &half.urls,
            &half.queues,
        ],
    )
    .await;
}
