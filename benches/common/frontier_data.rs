//! Generated frontier data for the engine benchmarks, and its bulk loader.
//!
//! URL number `n` always becomes the same document: a host drawn from a Zipf-like distribution over
//! `hosts` hosts (host `h` gets about `1/(h+1)` of the URLs), a status and a due date (a third of the
//! URLs are due, spread over the last 30 days, as in a crawl that cannot keep up; the rest are due
//! over the next 30 days, or never),
//! and the metadata a crawl leaves behind (depth, the linking page, the HTTP status code). Sizes grow
//! by loading further ranges of `n`.
//!
//! The loader writes the same documents into a status index routed by host (StormCrawler's shape)
//! and into the urls index of the queue frontier, plus one queue document per host holding its
//! earliest due date: bulk requests, refresh off while loading, no replicas.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use futures::StreamExt;
use serde_json::{Value, json};
use squall::frontier::StatusWrite;
use squall::model::{CrawlUrl, Status, keys};
use squall_engine::client::Method;
use squall_engine::client::{EsClient, RequestBody};
use squall_engine::queue::schema::{queue_id, queues_index_body};
use squall_engine::status_index::schema::{
    KeyField, document_id, format_date, status_document, status_index_body, urls_index_body,
};

/// Documents per bulk request while loading.
const LOAD_BATCH: u64 = 5_000;

/// Sends a request that must succeed; a benchmark cannot go on without it.
pub async fn call(
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

/// Sends `body` as JSON to `path` (no query parameters); the request must succeed, as [`call`]'s.
pub async fn call_json(client: &EsClient, method: Method, path: &str, body: Value) -> Value {
    call(client, method, path, &[], Some(RequestBody::Json(body))).await
}

/// Sends a bulk request and stops the benchmark on any item that failed.
pub async fn bulk(client: &EsClient, index: &str, lines: Vec<Value>) {
    let answer = call(
        client,
        Method::Post,
        &format!("/{index}/_bulk"),
        &[],
        Some(RequestBody::NdJson(lines)),
    )
    .await;
    if answer["errors"].as_bool() == Some(true) {
        let first = answer["items"]
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_object().and_then(|o| o.values().next()))
                    .find(|r| r.get("error").is_some())
            })
            .cloned()
            .unwrap_or(Value::Null);
        panic!("bulk into {index} failed: {first}");
    }
}

/// The documents of a generated frontier.
#[derive(Debug, Clone)]
pub struct Generator {
    hosts: u64,
    epoch: DateTime<Utc>,
    all_due: bool,
}

/// A well-mixed 64-bit hash of `n` (SplitMix64's finalizer).
fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Generator {
    /// URLs over `hosts` hosts, due dates relative to `epoch`.
    pub fn new(hosts: u64, epoch: DateTime<Utc>) -> Self {
        Generator {
            hosts: hosts.max(2),
            epoch,
            all_due: false,
        }
    }

    /// The same URLs, every one of them due at `epoch` (over the 30 days before it): a frontier
    /// just seeded or just migrated.
    pub fn all_due(hosts: u64, epoch: DateTime<Utc>) -> Self {
        Generator {
            all_due: true,
            ..Generator::new(hosts, epoch)
        }
    }

    /// The host of URL `n`: `hosts^x - 1` for a uniform `x`, so host `h` has weight ~`1/(h+1)`.
    pub fn host(&self, n: u64) -> String {
        let x = (mix(n) >> 11) as f64 / (1u64 << 53) as f64;
        let h = ((self.hosts as f64).powf(x) - 1.0).floor() as u64 % self.hosts;
        format!("www.site-{h}.test")
    }

    /// Whether URL `n` is due at the epoch.
    pub fn is_due(n: u64) -> bool {
        n.is_multiple_of(3)
    }

    /// URL `n` as the status updater would write it.
    pub fn write(&self, n: u64) -> StatusWrite {
        let host = self.host(n);
        let r = mix(n ^ 0x5EED);
        let url = format!("https://{host}/section-{}/page-{n}.html", r % 37);
        let parsed = match url::Url::parse(&url) {
            Ok(parsed) => parsed,
            Err(e) => panic!("generated URL {url}: {e}"),
        };
        let mut crawl_url = CrawlUrl::new(parsed);
        crawl_url
            .metadata
            .set(keys::DEPTH, ((r >> 8) % 6).to_string());
        crawl_url.metadata.set(
            keys::URL_PATH,
            format!("https://{host}/section-{}/", (r >> 16) % 37),
        );
        let minutes = ((r >> 24) % (30 * 24 * 60)) as i64;
        let (status, next_fetch) = if self.all_due || Self::is_due(n) {
            let status = match (r >> 40) % 10 {
                0..=5 => Status::Discovered,
                6..=8 => Status::Fetched,
                _ => Status::FetchError,
            };
            (status, Some(self.epoch - TimeDelta::minutes(minutes)))
        } else if n % 50 == 1 || n % 50 == 2 {
            (Status::Error, None)
        } else if n % 20 == 3 {
            (
                Status::Redirection,
                Some(self.epoch + TimeDelta::hours(1) + TimeDelta::minutes(minutes)),
            )
        } else {
            (
                Status::Fetched,
                Some(self.epoch + TimeDelta::hours(1) + TimeDelta::minutes(minutes)),
            )
        };
        match status {
            Status::Fetched => crawl_url.metadata.set(keys::FETCH_STATUS_CODE, "200"),
            Status::FetchError => {
                crawl_url.metadata.set(keys::FETCH_STATUS_CODE, "503");
                crawl_url.metadata.set(keys::FETCH_ERROR_COUNT, "1");
            }
            Status::Redirection => crawl_url.metadata.set(keys::FETCH_STATUS_CODE, "301"),
            _ => {}
        }
        StatusWrite {
            url: crawl_url,
            key: host,
            status,
            next_fetch,
            queue: Default::default(),
        }
    }
}

/// The indices one generated frontier is loaded into. `None` skips that form.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// The status index, routed by host.
    pub status: Option<String>,
    /// The urls index and the queues index.
    pub queue_frontier: Option<(String, String)>,
}

/// Creates the target indices: `shards` primaries, no replicas, refresh off until [`finish_load`].
pub async fn create(client: &EsClient, targets: &Targets, shards: u32) {
    if let Some(status) = &targets.status {
        let body = status_index_body(shards, 0, "-1");
        call_json(client, Method::Put, &format!("/{status}"), body).await;
    }
    if let Some((urls, queues)) = &targets.queue_frontier {
        let body = urls_index_body(shards, 0, "-1");
        call_json(client, Method::Put, &format!("/{urls}"), body).await;
        let body = queues_index_body(1, 0, "1s");
        call_json(client, Method::Put, &format!("/{queues}"), body).await;
    }
}

/// The earliest due date of each host loaded so far (what its queue document holds).
pub type EarliestDue = BTreeMap<String, String>;

/// Loads URLs `range` into the targets, two bulk requests in flight, and updates `earliest`.
pub async fn load(
    client: &EsClient,
    generator: &Generator,
    targets: &Targets,
    range: Range<u64>,
    earliest: &mut EarliestDue,
) {
    let batches = (range.start..range.end)
        .step_by(LOAD_BATCH as usize)
        .map(|start| start..(start + LOAD_BATCH).min(range.end));
    let mut requests = futures::stream::iter(batches.map(|batch| {
        let writes: Vec<StatusWrite> = batch.map(|n| generator.write(n)).collect();
        let mut routed = Vec::with_capacity(writes.len() * 2);
        let mut plain = Vec::with_capacity(writes.len() * 2);
        let mut dates = Vec::new();
        for write in &writes {
            let id = document_id(write.url.url.as_str());
            let doc = status_document(write, &KeyField::default());
            if targets.status.is_some() {
                routed.push(json!({ "index": { "_id": id, "routing": write.key } }));
                routed.push(doc.clone());
            }
            if targets.queue_frontier.is_some() {
                plain.push(json!({ "index": { "_id": id } }));
                plain.push(doc);
            }
            if let Some(date) = write.next_fetch {
                dates.push((write.key.clone(), format_date(date)));
            }
        }
        async move {
            if let Some(status) = &targets.status {
                bulk(client, status, routed).await;
            }
            if let Some((urls, _)) = &targets.queue_frontier {
                bulk(client, urls, plain).await;
            }
            dates
        }
    }))
    .buffer_unordered(2);
    while let Some(dates) = requests.next().await {
        for (key, date) in dates {
            earliest
                .entry(key)
                .and_modify(|d| {
                    if date < *d {
                        d.clone_from(&date)
                    }
                })
                .or_insert(date);
        }
    }
    if let Some((_, queues)) = &targets.queue_frontier {
        let now = format_date(Utc::now());
        let mut lines = Vec::new();
        for (key, date) in earliest.iter() {
            lines.push(json!({ "index": { "_id": queue_id(key) } }));
            lines
                .push(json!({ "key": key, "nextDue": date, "firstSeen": now, "lastUpdated": now }));
        }
        for chunk in lines.chunks(10_000) {
            bulk(client, queues, chunk.to_vec()).await;
        }
    }
}

/// Ends a load: refresh interval `refresh` (e.g. "1s"), a refresh, and a merge-free warm-up query.
pub async fn finish_load(client: &EsClient, targets: &Targets, refresh: &str) {
    let mut indices = Vec::new();
    if let Some(status) = &targets.status {
        indices.push(status.clone());
    }
    if let Some((urls, queues)) = &targets.queue_frontier {
        indices.push(urls.clone());
        indices.push(queues.clone());
    }
    let all = indices.join(",");
    let settings = json!({ "index": { "refresh_interval": refresh } });
    call_json(client, Method::Put, &format!("/{all}/_settings"), settings).await;
    call(client, Method::Post, &format!("/{all}/_refresh"), &[], None).await;
    let warm = json!({ "size": 10, "query": { "range": { "nextFetchDate": { "lte": "now" } } },
        "sort": [ { "nextFetchDate": "asc" } ] });
    for index in &indices {
        if index.contains("queue") {
            continue;
        }
        call_json(
            client,
            Method::Post,
            &format!("/{index}/_search"),
            warm.clone(),
        )
        .await;
    }
}

/// Documents per primary shard of `index`.
pub async fn shard_docs(client: &EsClient, index: &str) -> Vec<u64> {
    let answer = call(
        client,
        Method::Get,
        &format!("/_cat/shards/{index}"),
        &[("format", "json"), ("h", "shard,prirep,docs")],
        None,
    )
    .await;
    let mut shards: Vec<(u64, u64)> = answer
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|row| row["prirep"].as_str() == Some("p"))
                .map(|row| {
                    let number = |v: &Value| v.as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
                    (number(&row["shard"]), number(&row["docs"]))
                })
                .collect()
        })
        .unwrap_or_default();
    shards.sort();
    shards.into_iter().map(|(_, docs)| docs).collect()
}

/// Largest shard over the mean shard.
pub fn skew(docs: &[u64]) -> f64 {
    let total: u64 = docs.iter().sum();
    if docs.is_empty() || total == 0 {
        return 0.0;
    }
    let mean = total as f64 / docs.len() as f64;
    docs.iter().copied().max().unwrap_or(0) as f64 / mean
}

/// Documents in `index` due now.
pub async fn due_count(client: &EsClient, index: &str) -> u64 {
    let body = json!({ "query": { "range": { "nextFetchDate": { "lte": "now" } } } });
    let answer = call_json(client, Method::Post, &format!("/{index}/_count"), body).await;
    answer["count"].as_u64().unwrap_or(0)
}

/// Runs an `_update_by_query` as a task and waits for it (large indices outlast a request timeout).
pub async fn update_by_query(client: &EsClient, index: &str, body: Value) {
    let task = call(
        client,
        Method::Post,
        &format!("/{index}/_update_by_query"),
        &[
            ("conflicts", "proceed"),
            ("wait_for_completion", "false"),
            ("slices", "auto"),
            ("refresh", "true"),
        ],
        Some(RequestBody::Json(body)),
    )
    .await;
    let Some(task) = task["task"].as_str().map(str::to_string) else {
        panic!("_update_by_query on {index} started no task: {task}");
    };
    loop {
        let status = call(client, Method::Get, &format!("/_tasks/{task}"), &[], None).await;
        if status["completed"].as_bool() == Some(true) {
            if let Some(failures) = status["response"]["failures"].as_array()
                && !failures.is_empty()
            {
                panic!("_update_by_query on {index}: {}", failures[0]);
            }
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Deletes indices, ignoring any that do not exist.
pub async fn delete(client: &EsClient, indices: &[&str]) {
    for index in indices {
        let _ = client
            .request(Method::Delete, &format!("/{index}"), &[], None)
            .await;
    }
}

/// Where the spouts benchmark leaves its largest frontier, nothing due, for the end-to-end
/// benchmark's crawls among other hosts' URLs (`SQUALL_BENCH_KEEP_BACKGROUND=1`).
pub fn background() -> Targets {
    Targets {
        status: Some("bench-background-status".to_string()),
        queue_frontier: Some((
            "bench-background-urls".to_string(),
            "bench-background-queues".to_string(),
        )),
    }
}

/// The index names of `targets`, status index first.
pub fn names(targets: &Targets) -> Vec<String> {
    let mut names: Vec<String> = targets.status.iter().cloned().collect();
    if let Some((urls, queues)) = &targets.queue_frontier {
        names.push(urls.clone());
        names.push(queues.clone());
    }
    names
}

/// Copies index `from` to `to` with the engine's `_clone` (its segments are linked, not
/// rewritten: instant at any size): `from` is made read-only first; `to` is writable when
/// `writable`.
pub async fn clone_index(client: &EsClient, from: &str, to: &str, writable: bool) {
    let block = json!({ "index": { "blocks": { "write": true } } });
    call_json(client, Method::Put, &format!("/{from}/_settings"), block).await;
    let body = json!({ "settings": { "index": { "blocks": { "write": !writable } } } });
    call(
        client,
        Method::Post,
        &format!("/{from}/_clone/{to}"),
        &[("wait_for_active_shards", "1")],
        Some(RequestBody::Json(body)),
    )
    .await;
    call(
        client,
        Method::Get,
        "/_cluster/health",
        &[
            ("index", to),
            ("wait_for_status", "yellow"),
            ("timeout", "60s"),
        ],
        None,
    )
    .await;
}

/// Documents in `index`, or `None` when it does not exist.
pub async fn doc_count(client: &EsClient, index: &str) -> Option<u64> {
    let answer = client
        .request(Method::Get, &format!("/{index}/_count"), &[], None)
        .await
        .ok()?;
    answer["count"].as_u64()
}
