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

use common::quick;
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall_spouts::client::{ConnectionSettings, EsClient, RequestBody};
use squall_spouts::migrate::{MigrationOptions, migrate};
use squall_spouts::schema::{document_id, format_date, status_index_body};

async fn call(
    client: &EsClient,
    method: Method,
    path: &str,
    query: &[(&str, &str)],
    body: Option<Value>,
) -> Value {
    match client
        .request(method, path, query, body.map(RequestBody::Json))
        .await
    {
        Ok(answer) => answer,
        Err(e) => panic!("{path}: {e}"),
    }
}

/// A skewed host distribution: host h gets about 1/(h+1) of the URLs.
fn host_for(i: u64, hosts: u64) -> u64 {
    let x = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
    ((hosts as f64).powf(x) - 1.0).floor() as u64 % hosts
}

async fn load_source(client: &EsClient, index: &str, docs: u64) {
    call(
        client,
        Method::Put,
        &format!("/{index}"),
        &[],
        Some(status_index_body(4, 0, "-1")),
    )
    .await;
    let hosts = (docs / 100).max(10);
    let statuses = [
        "DISCOVERED",
        "FETCHED",
        "FETCHED",
        "FETCH_ERROR",
        "REDIRECTION",
        "ERROR",
    ];
    let now = chrono::Utc::now();
    let batch = 5000;
    let mut i = 0;
    while i < docs {
        let mut lines = Vec::with_capacity(batch as usize * 2);
        for n in i..(i + batch).min(docs) {
            let host = format!("host-{}.test", host_for(n, hosts));
            let url = format!("https://{host}/page/{n}");
            let status = statuses[(n % statuses.len() as u64) as usize];
            let offset = chrono::TimeDelta::minutes((n % 20_000) as i64 - 10_000);
            let mut doc = json!({
                "url": url, "status": status, "key": host,
                "metadata": { "url%2Epath": [format!("https://{host}/")], "depth": [(n % 5).to_string()] }
            });
            if status != "ERROR" {
                doc["nextFetchDate"] = json!(format_date(now + offset));
            }
            lines.push(json!({ "index": { "_id": document_id(&url), "routing": host } }));
            lines.push(doc);
        }
        if let Err(e) = client
            .request(
                Method::Post,
                &format!("/{index}/_bulk"),
                &[],
                Some(RequestBody::NdJson(lines)),
            )
            .await
        {
            panic!("loading the source: {e}");
        }
        i += batch;
    }
    call(
        client,
        Method::Post,
        &format!("/{index}/_refresh"),
        &[],
        None,
    )
    .await;
}

async fn reindex(client: &EsClient, source: &str, target: &str) -> f64 {
    call(
        client,
        Method::Put,
        &format!("/{target}"),
        &[],
        Some(status_index_body(10, 0, "-1")),
    )
    .await;
    let started = Instant::now();
    let task = call(
        client,
        Method::Post,
        "/_reindex",
        &[("wait_for_completion", "false")],
        Some(json!({ "source": { "index": source, "size": 1000 }, "dest": { "index": target } })),
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
    let url =
        std::env::var("SQUALL_BENCH_ES").unwrap_or_else(|_| "http://127.0.0.1:9200".to_string());
    let docs: u64 = std::env::var("SQUALL_BENCH_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick() { 20_000 } else { 1_000_000 });
    let mut settings = match ConnectionSettings::new(&url) {
        Ok(settings) => settings,
        Err(e) => panic!("{e}"),
    };
    settings.timeout = Duration::from_secs(120);
    let client = match EsClient::new(settings) {
        Ok(client) => client,
        Err(e) => panic!("{e}"),
    };
    let run = std::process::id();
    let source = format!("bench-source-{run}");
    let started = Instant::now();
    load_source(&client, &source, docs).await;
    let load_seconds = started.elapsed().as_secs_f64();

    let reindex_seconds = reindex(&client, &source, &format!("bench-reindex-{run}")).await;

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
    println!(
        "{:#}",
        json!({
            "benchmark": "migration",
            "documents": docs,
            "load_seconds": load_seconds,
            "reindex_seconds": reindex_seconds,
            "reindex_docs_per_second": reindex_rate,
            "migration_seconds": report.seconds,
            "migration_docs_per_second": migration_rate,
            "ratio_migration_to_reindex": migration_rate / reindex_rate,
            "distinct_keys": report.verification.distinct_keys,
            "queue_docs": report.verification.queue_docs,
            "full_run_verified": report.verification.ok,
            "interrupted_after_documents": first.documents,
            "interrupted_run_completed": first.completed,
            "resumed_run_documents_this_run": resumed.documents_this_run,
            "resumed_run_verified": resumed.verification.ok,
        })
    );
    for index in [
        source.clone(),
        format!("bench-reindex-{run}"),
        full.urls.clone(),
        full.queues.clone(),
        half.urls.clone(),
        half.queues.clone(),
    ] {
        let _ = client
            .request(Method::Delete, &format!("/{index}"), &[], None)
            .await;
    }
}
