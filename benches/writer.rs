//! The status writer against a raw `_bulk` of the same documents (the engine's own ingest limit).
//!
//! Both write the same generated statuses into a fresh status index routed by host, in requests of
//! the same size, one request in flight. The writer builds its requests from `StatusWrite`s and reads
//! every item's outcome; the raw `_bulk` sends request bodies serialized before the clock starts,
//! over a bare HTTP client, and only checks the `errors` flag. Interleaved and repeated.
//!
//! `cargo bench --bench writer` prints JSON. Needs a node: `SQUALL_BENCH_ES` (default
//! http://127.0.0.1:9200). `SQUALL_BENCH_DOCS` documents per run (default 200,000; quick 10,000),
//! `SQUALL_BENCH_BATCH` per request (default 1,000), `SQUALL_BENCH_RUNS` (default 5; quick 1).

mod common;

use std::time::Instant;

use chrono::Utc;
use common::frontier_data::{Generator, call_json, delete};
use common::raw_bulk::send_bodies;
use common::{Spread, engine_client, env_or, print_result, quick, runs};
use serde_json::json;
use squall::frontier::{StatusStore, StatusWrite};
use squall_bench_schema::Run;
use squall_bench_schema::stages::Writer;
use squall_engine::client::EsClient;
use squall_engine::client::Method;
use squall_engine::status_index::schema::{
    KeyField, document_id, status_document, status_index_body,
};
use squall_engine::{EsStatusStore, WriterConfig};

async fn fresh_index(client: &EsClient, index: &str) {
    delete(client, &[index]).await;
    call_json(
        client,
        Method::Put,
        &format!("/{index}"),
        status_index_body(4, 0, "1s"),
    )
    .await;
}

/// Documents per second through the status writer.
async fn through_writer(client: &EsClient, index: &str, batches: &[Vec<StatusWrite>]) -> f64 {
    fresh_index(client, index).await;
    let store = EsStatusStore::new(
        client.clone(),
        WriterConfig {
            index: index.to_string(),
            key_field: KeyField::default(),
            routing: true,
        },
    );
    let documents: usize = batches.iter().map(Vec::len).sum();
    // The status updater hands over batches it owns: copies made before the clock starts.
    let owned: Vec<Vec<StatusWrite>> = batches.to_vec();
    let started = Instant::now();
    for batch in owned {
        let outcomes = store.store(batch).await;
        if let Some(Err(e)) = outcomes.into_iter().find(Result::is_err) {
            panic!("writer: {e}");
        }
    }
    documents as f64 / started.elapsed().as_secs_f64()
}

/// Documents per second of a raw `_bulk` with bodies serialized beforehand.
async fn raw_bulk(client: &EsClient, index: &str, batches: &[Vec<StatusWrite>]) -> f64 {
    fresh_index(client, index).await;
    let mut bodies = Vec::with_capacity(batches.len());
    for batch in batches {
        let mut body = String::new();
        for write in batch {
            let action = json!({ "index": { "_id": document_id(write.url.url.as_str()), "routing": write.key } });
            body.push_str(&action.to_string());
            body.push('\n');
            body.push_str(&status_document(write, &KeyField::default()).to_string());
            body.push('\n');
        }
        bodies.push(body);
    }
    let documents: usize = batches.iter().map(Vec::len).sum();
    send_bodies(index, bodies, documents, 1).await
}

#[tokio::main]
async fn main() {
    let client = engine_client();
    let documents: u64 = env_or("DOCS", if quick() { 10_000 } else { 200_000 });
    let batch: usize = env_or("BATCH", 1000);
    let generator = Generator::new((documents / 50).max(10), Utc::now());
    let writes: Vec<StatusWrite> = (0..documents).map(|n| generator.write(n)).collect();
    let batches: Vec<Vec<StatusWrite>> = writes.chunks(batch).map(<[_]>::to_vec).collect();
    let index = format!("bench-writer-{}", std::process::id());
    let (mut writer, mut bulk) = (Vec::new(), Vec::new());
    for run in 0..runs() {
        // Alternate which goes first, so that neither always meets a warmer engine.
        if run % 2 == 0 {
            writer.push(through_writer(&client, &index, &batches).await);
            bulk.push(raw_bulk(&client, &index, &batches).await);
        } else {
            bulk.push(raw_bulk(&client, &index, &batches).await);
            writer.push(through_writer(&client, &index, &batches).await);
        }
    }
    delete(&client, &[&index]).await;
    let (writer, bulk) = (Spread::of(&writer), Spread::of(&bulk));
    print_result(&Writer {
        run: Run::named("writer"),
        documents: Some(documents),
        batch: Some(batch as u64),
        writer_docs_per_second: Some(writer),
        bulk_docs_per_second: Some(bulk),
        ratio_writer_to_bulk: Some(writer.median / bulk.median),
    });
}
