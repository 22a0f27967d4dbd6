//! The queue spout at two urls-index sizes ten times apart: the latency of one `next_batch` (list
//! due queues, claim them, read their URLs), and how soon a brand-new host's first URL is emitted.
//!
//! The new-host delay is measured in a frontier that keeps up (no due backlog).
//!
//! `cargo bench --bench queue_spout` prints JSON. Needs a node: `SQUALL_BENCH_ES` (default
//! http://127.0.0.1:9200). Sizes: `SQUALL_BENCH_SIZES` (default `50000,500000`; quick: `5000,50000`).

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use common::{Spread, quick};
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::model::{CrawlUrl, Status};
use squall::spout::{BusyUrls, Spout};
use squall::status::{StatusStore, StatusWrite};
use squall_spouts::client::{ConnectionSettings, EsClient, RequestBody};
use squall_spouts::queue::schema::{queue_id, queues_index_body};
use squall_spouts::queue::{QueueSpout, QueueSpoutSettings, QueueStatusStore};
use squall_spouts::schema::{KeyField, document_id, format_date, status_index_body};

async fn call(
    client: &EsClient,
    method: Method,
    path: &str,
    query: &[(&str, &str)],
    body: Option<RequestBody>,
) -> Value {
    match client.request(method, path, query, body).await {
        Ok(answer) => answer,
        Err(e) => panic!("{path}: {e}"),
    }
}

/// Loads `docs` URLs over skewed hosts into the urls index, and their queues.
async fn load(client: &EsClient, urls: &str, queues: &str, docs: u64) {
    call(
        client,
        Method::Put,
        &format!("/{urls}"),
        &[],
        Some(RequestBody::Json(status_index_body(4, 0, "-1"))),
    )
    .await;
    call(
        client,
        Method::Put,
        &format!("/{queues}"),
        &[],
        Some(RequestBody::Json(queues_index_body(1, 0, "1s"))),
    )
    .await;
    let hosts = (docs / 50).max(10);
    let now = Utc::now();
    let mut earliest: BTreeMap<String, String> = BTreeMap::new();
    let batch = 5000;
    let mut i = 0;
    while i < docs {
        let mut lines = Vec::new();
        for n in i..(i + batch).min(docs) {
            let x = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
            let host = format!(
                "h{}.test",
                ((hosts as f64).powf(x) - 1.0).floor() as u64 % hosts
            );
            let url = format!("https://{host}/p/{n}");
            // Most URLs are not due (fetched, due again later); a tenth are due now.
            let due = if n % 10 == 0 {
                now - TimeDelta::minutes(5)
            } else {
                now + TimeDelta::hours(1 + (n % 48) as i64)
            };
            let date = format_date(due);
            earliest
                .entry(host.clone())
                .and_modify(|d| {
                    if date < *d {
                        d.clone_from(&date)
                    }
                })
                .or_insert_with(|| date.clone());
            lines.push(json!({ "index": { "_id": document_id(&url) } }));
            lines.push(
                json!({ "url": url, "status": if n % 10 == 0 { "DISCOVERED" } else { "FETCHED" },
                "key": host, "nextFetchDate": date, "metadata": { "depth": ["1"] } }),
            );
        }
        call(
            client,
            Method::Post,
            &format!("/{urls}/_bulk"),
            &[],
            Some(RequestBody::NdJson(lines)),
        )
        .await;
        i += batch;
    }
    let mut lines = Vec::new();
    for (key, date) in &earliest {
        lines.push(json!({ "index": { "_id": queue_id(key) } }));
        lines.push(json!({ "key": key, "nextDue": date, "firstSeen": format_date(now), "lastUpdated": format_date(now) }));
    }
    for chunk in lines.chunks(10_000) {
        call(
            client,
            Method::Post,
            &format!("/{queues}/_bulk"),
            &[],
            Some(RequestBody::NdJson(chunk.to_vec())),
        )
        .await;
    }
    call(
        client,
        Method::Put,
        &format!("/{urls}/_settings"),
        &[],
        Some(RequestBody::Json(
            json!({ "index": { "refresh_interval": "1s" } }),
        )),
    )
    .await;
    call(
        client,
        Method::Post,
        &format!("/{urls},{queues}/_refresh"),
        &[],
        None,
    )
    .await;
}

fn settings(urls: &str, queues: &str, owner: &str) -> QueueSpoutSettings {
    QueueSpoutSettings {
        owner: owner.to_string(),
        lease_ttl: Duration::from_secs(60),
        max_queues: 50,
        max_urls_per_queue: 10,
        ..QueueSpoutSettings::new(urls, queues)
    }
}

async fn measure(client: &EsClient, docs: u64, iterations: usize) -> Value {
    let run = format!("{}-{docs}", std::process::id());
    let (urls, queues) = (format!("bench-qurls-{run}"), format!("bench-queues-{run}"));
    load(client, &urls, &queues, docs).await;
    let busy = BusyUrls::none();
    let mut latencies = Vec::new();
    let mut emitted = 0;
    for i in 0..iterations {
        let mut spout = QueueSpout::new(
            client.clone(),
            settings(&urls, &queues, &format!("bench-{i}")),
        );
        let started = Instant::now();
        let batch = match spout.next_batch(&busy).await {
            Ok(batch) => batch,
            Err(e) => panic!("next_batch: {e}"),
        };
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        emitted += batch.len();
        // Give the queues back (untimed) so that every iteration starts from the same state.
        call(client, Method::Post, &format!("/{queues}/_update_by_query"), &[("refresh", "true"), ("conflicts", "proceed")],
            Some(RequestBody::Json(json!({ "query": { "exists": { "field": "leaseOwner" } },
                "script": { "source": "ctx._source.remove('leaseOwner'); ctx._source.remove('leaseUntil')" } })))).await;
    }
    latencies.sort_by(f64::total_cmp);
    let p = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];

    // A brand-new host: written through the writer while a spout polls every 100 ms, in a frontier
    // that keeps up (no backlog of due queues: with one, a new host waits its turn by due date).
    let later = format_date(Utc::now() + TimeDelta::hours(1));
    call(client, Method::Post, &format!("/{queues}/_update_by_query"), &[("refresh", "true"), ("conflicts", "proceed")],
        Some(RequestBody::Json(json!({ "query": { "match_all": {} },
            "script": { "source": "ctx._source.nextDue = params.later", "params": { "later": later } } })))).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let mut delays = Vec::new();
    for trial in 0..5 {
        let mut spout = QueueSpout::new(
            client.clone(),
            settings(&urls, &queues, &format!("new-host-{trial}")),
        );
        let host = format!("brand-new-{trial}.test");
        let url = format!("https://{host}/");
        let write = StatusWrite {
            url: CrawlUrl::seed(match url::Url::parse(&url) {
                Ok(u) => u,
                Err(e) => panic!("{e}"),
            }),
            key: host.clone(),
            status: Status::Discovered,
            next_fetch: Some(Utc::now()),
        };
        let written = Instant::now();
        if store.store(vec![write]).await.iter().any(Result::is_err) {
            panic!("write failed");
        }
        loop {
            let batch = match spout.next_batch(&busy).await {
                Ok(b) => b,
                Err(e) => panic!("{e}"),
            };
            if batch.iter().any(|d| d.key == host) {
                delays.push(written.elapsed().as_secs_f64());
                break;
            }
            assert!(
                written.elapsed() < Duration::from_secs(60),
                "the new host never came"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for index in [&urls, &queues] {
        let _ = client
            .request(Method::Delete, &format!("/{index}"), &[], None)
            .await;
    }
    json!({
        "urls": docs,
        "next_batch_ms": { "p50": p(0.5), "p99": p(0.99), "max": p(1.0) },
        "urls_emitted_per_batch": emitted as f64 / iterations as f64,
        "new_host_first_url_seconds": Spread::of(&delays).json(),
    })
}

#[tokio::main]
async fn main() {
    let url =
        std::env::var("SQUALL_BENCH_ES").unwrap_or_else(|_| "http://127.0.0.1:9200".to_string());
    let sizes: Vec<u64> = std::env::var("SQUALL_BENCH_SIZES")
        .unwrap_or_else(|_| {
            if quick() {
                "5000,50000".into()
            } else {
                "50000,500000".into()
            }
        })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let mut settings = match ConnectionSettings::new(&url) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    settings.timeout = Duration::from_secs(120);
    let client = match EsClient::new(settings) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let mut results = Vec::new();
    for size in sizes {
        results.push(measure(&client, size, if quick() { 10 } else { 40 }).await);
    }
    println!(
        "{:#}",
        json!({ "benchmark": "queue_spout", "results": results })
    );
}
