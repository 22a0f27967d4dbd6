//! The four spouts side by side on the same generated frontier, at several sizes.
//!
//! Each spout runs inside the real [`SpoutRunner`], and the fetcher is replaced by an immediate ack:
//! every URL emitted is written back at once as FETCHED (due in 30 days) through that frontier's own
//! status writer, then acked. So the frontier (queries and writes) is the only thing measured. For
//! each spout, interleaved and repeated: URLs emitted per second over a fixed window, query latency
//! p50 and p99, time to the first URL, and distinct hosts per 1,000 URLs. Then, in a frontier that
//! keeps up (nothing due), the delay before a brand-new host's first URL. And the shard size skew of
//! the host-routed status index against the urls index.
//!
//! `cargo bench --bench spouts` prints JSON. Needs a node: `SQUALL_BENCH_ES` (default
//! http://127.0.0.1:9200), with 3–4 GB of heap for the default sizes. Settings (env, `SQUALL_BENCH_`
//! prefix): `SIZES` (default `1000000,5000000`; quick `5000,20000`), `WINDOW` seconds (20; quick 3),
//! `RUNS` (3; quick 1), `SHARDS` (8), `HOSTS` (largest size / 50), `MIN_DELAY_MS` (0), `SPOUTS`
//! (names, default all four), `QUEUES_HELD` (1000).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{TimeDelta, Utc};
use common::frontier_data::{
    EarliestDue, Generator, Targets, call, create, delete, due_count, finish_load, load,
    shard_docs, skew, update_by_query,
};
use common::{Spread, engine_client, env_or, quick};
use elasticsearch::http::Method;
use serde_json::{Value, json};
use squall::model::{CrawlUrl, Status};
use squall::spout::{
    BusyUrls, DueUrl, RunnerSettings, RunnerState, Spout, SpoutError, SpoutRunner,
};
use squall::status::{StatusStore, StatusWrite};
use squall::topology::Tuple;
use squall_spouts::client::{EsClient, RequestBody};
use squall_spouts::queue::{QueueSpout, QueueSpoutSettings, QueueStatusStore};
use squall_spouts::schema::{KeyField, format_date};
use squall_spouts::spouts::{AggregationSpout, CollapsingSpout, HybridSpout, SpoutSettings};
use squall_spouts::{EsStatusStore, WriterSettings};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Hosts per query and URLs per host per query: the same budget for every spout.
const HOSTS_PER_QUERY: usize = 100;
const URLS_PER_HOST: usize = 10;
/// Queues the queue spout holds at once (it claims up to this many per query, and reads
/// `URLS_PER_HOST` URLs of each). With politeness on, a crawler fetches at most this many hosts at
/// once, so a real one holds hundreds to thousands.
const QUEUES_HELD: usize = 1000;
/// Refresh interval of both frontiers during the benchmark.
const REFRESH: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Aggregation,
    Collapsing,
    Hybrid,
    Queue,
}

impl Kind {
    const ALL: [Kind; 4] = [
        Kind::Aggregation,
        Kind::Collapsing,
        Kind::Hybrid,
        Kind::Queue,
    ];

    /// The spouts to run: `SQUALL_BENCH_SPOUTS` (comma-separated names), default all four.
    fn selected() -> Vec<Kind> {
        let wanted = std::env::var("SQUALL_BENCH_SPOUTS").unwrap_or_default();
        Kind::ALL
            .into_iter()
            .filter(|k| wanted.is_empty() || wanted.split(',').any(|w| w.trim() == k.name()))
            .collect()
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Aggregation => "aggregation",
            Kind::Collapsing => "collapsing",
            Kind::Hybrid => "hybrid",
            Kind::Queue => "queue",
        }
    }
}

/// The indices of the benchmark's frontier.
struct Indices {
    status: String,
    urls: String,
    queues: String,
}

impl Indices {
    fn spout(&self, kind: Kind, client: &EsClient, owner: &str) -> Box<dyn Spout> {
        let settings = SpoutSettings {
            index: self.status.clone(),
            max_buckets: HOSTS_PER_QUERY,
            max_urls_per_bucket: URLS_PER_HOST,
            max_urls_per_reload: URLS_PER_HOST,
            refresh_interval: REFRESH,
            ..SpoutSettings::default()
        };
        match kind {
            Kind::Aggregation => Box::new(AggregationSpout::new(client.clone(), settings)),
            Kind::Collapsing => Box::new(CollapsingSpout::new(client.clone(), settings)),
            Kind::Hybrid => Box::new(HybridSpout::new(client.clone(), settings)),
            Kind::Queue => Box::new(QueueSpout::new(
                client.clone(),
                QueueSpoutSettings {
                    owner: owner.to_string(),
                    max_queues: env_or("QUEUES_HELD", QUEUES_HELD),
                    max_urls_per_queue: URLS_PER_HOST,
                    refresh_interval: REFRESH,
                    ..QueueSpoutSettings::new(&self.urls, &self.queues)
                },
            )),
        }
    }

    fn store(&self, kind: Kind, client: &EsClient) -> Arc<dyn StatusStore> {
        match kind {
            Kind::Queue => Arc::new(QueueStatusStore::new(
                client.clone(),
                &self.urls,
                &self.queues,
                KeyField::default(),
            )),
            _ => Arc::new(EsStatusStore::new(
                client.clone(),
                WriterSettings {
                    index: self.status.clone(),
                    key_field: KeyField::default(),
                    routing: true,
                },
            )),
        }
    }
}

/// A spout that records how long each of its queries took.
struct Timed {
    inner: Box<dyn Spout>,
    latencies_ms: Arc<Mutex<Vec<f64>>>,
}

#[async_trait]
impl Spout for Timed {
    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let started = Instant::now();
        let batch = self.inner.next_batch(busy).await;
        if let Ok(mut latencies) = self.latencies_ms.lock() {
            latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        batch
    }

    async fn ack(&mut self, url: &CrawlUrl) {
        self.inner.ack(url).await;
    }

    async fn fail(&mut self, url: &CrawlUrl) {
        self.inner.fail(url).await;
    }

    fn visibility_delay(&self) -> Duration {
        self.inner.visibility_delay()
    }
}

/// What one run of one spout saw.
struct Trial {
    /// Keys of the URLs emitted within the window, in order.
    keys: Vec<String>,
    first_url: Option<Duration>,
    latencies_ms: Vec<f64>,
    new_host: Option<Duration>,
}

/// How a trial ends.
enum Until {
    /// After the window.
    Window(Duration),
    /// When this host's first URL is emitted (or after the limit); the URL is written after `settle`.
    NewHost {
        host: String,
        settle: Duration,
        limit: Duration,
    },
}

/// The immediate-ack fetcher: writes each batch as FETCHED through the store, then acks it.
fn write_and_ack(store: Arc<dyn StatusStore>, tuples: Vec<Tuple>, permits: Arc<Semaphore>) {
    tokio::spawn(async move {
        let _permit = permits.acquire_owned().await;
        let due = Utc::now() + TimeDelta::days(30);
        let writes = tuples
            .iter()
            .map(|t| StatusWrite {
                url: t.url.clone(),
                key: t.key.clone(),
                status: Status::Fetched,
                next_fetch: Some(due),
                queue: Default::default(),
            })
            .collect();
        let outcomes = store.store(writes).await;
        for (tuple, outcome) in tuples.into_iter().zip(outcomes) {
            match outcome {
                Ok(()) => tuple.ack.ack(),
                Err(e) => tuple.ack.fail(e.0),
            }
        }
    });
}

async fn run_trial(
    kind: Kind,
    client: &EsClient,
    indices: &Indices,
    owner: &str,
    until: Until,
) -> Trial {
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let spout = Timed {
        inner: indices.spout(kind, client, owner),
        latencies_ms: Arc::clone(&latencies),
    };
    let runner = SpoutRunner::new(
        Box::new(spout),
        RunnerSettings {
            min_delay: Duration::from_millis(env_or("MIN_DELAY_MS", 0)),
            max_delay: Duration::from_secs(20),
            purgatory_ttl: Duration::from_secs(30),
            max_pending: 2000,
            idle_after_empty_queries: 2,
        },
    );
    let store = indices.store(kind, client);
    let (out, mut tuples) = mpsc::channel(256);
    let (ack_sender, acks) = mpsc::unbounded_channel();
    let (state, _state) = watch::channel(RunnerState::default());
    let stop = CancellationToken::new();
    let running = tokio::spawn(runner.run(out, ack_sender, acks, state, stop.clone()));
    let permits = Arc::new(Semaphore::new(2));

    let started = Instant::now();
    let (deadline, new_host, settle) = match &until {
        Until::Window(window) => (started + *window, None, Duration::ZERO),
        Until::NewHost {
            host,
            settle,
            limit,
        } => (started + *settle + *limit, Some(host.clone()), *settle),
    };
    let mut trial = Trial {
        keys: Vec::new(),
        first_url: None,
        latencies_ms: Vec::new(),
        new_host: None,
    };
    let mut written: Option<Instant> = None;
    let mut pending = Vec::new();
    let mut flush = tokio::time::interval(Duration::from_millis(20));
    loop {
        if let Some(host) = &new_host
            && written.is_none()
            && started.elapsed() >= settle
        {
            let url = format!("https://{host}/");
            let write = StatusWrite {
                url: CrawlUrl::seed(match url::Url::parse(&url) {
                    Ok(u) => u,
                    Err(e) => panic!("{url}: {e}"),
                }),
                key: host.clone(),
                status: Status::Discovered,
                next_fetch: Some(Utc::now()),
                queue: Default::default(),
            };
            written = Some(Instant::now());
            if let Some(Err(e)) = store.store(vec![write]).await.into_iter().next() {
                panic!("writing the new host: {e}");
            }
        }
        tokio::select! {
            tuple = tuples.recv() => {
                let Some(tuple) = tuple else { break };
                trial.first_url.get_or_insert_with(|| started.elapsed());
                if let (Some(host), Some(at)) = (&new_host, written)
                    && tuple.key == *host
                {
                    trial.new_host = Some(at.elapsed());
                }
                trial.keys.push(tuple.key.clone());
                pending.push(tuple);
                if pending.len() >= 500 {
                    write_and_ack(Arc::clone(&store), std::mem::take(&mut pending), Arc::clone(&permits));
                }
            }
            _ = flush.tick() => {
                if !pending.is_empty() {
                    write_and_ack(Arc::clone(&store), std::mem::take(&mut pending), Arc::clone(&permits));
                }
            }
        }
        if Instant::now() >= deadline || trial.new_host.is_some() {
            break;
        }
    }
    // Stop: whatever is still emitted is written and acked, but no longer counted.
    stop.cancel();
    if !pending.is_empty() {
        write_and_ack(
            Arc::clone(&store),
            std::mem::take(&mut pending),
            Arc::clone(&permits),
        );
    }
    let drain = async {
        while let Some(tuple) = tuples.recv().await {
            write_and_ack(Arc::clone(&store), vec![tuple], Arc::clone(&permits));
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(120), async {
        drain.await;
        let _ = running.await;
    })
    .await;
    trial.latencies_ms = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    trial
}

fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return None;
    }
    Some(sorted[((sorted.len() as f64 - 1.0) * q).round() as usize])
}

/// Mean number of distinct hosts in each complete run of 1,000 emitted URLs.
fn hosts_per_thousand(keys: &[String]) -> Option<f64> {
    let chunks: Vec<usize> = keys
        .chunks_exact(1000)
        .map(|chunk| chunk.iter().collect::<std::collections::HashSet<_>>().len())
        .collect();
    if chunks.is_empty() {
        return None;
    }
    Some(chunks.iter().sum::<usize>() as f64 / chunks.len() as f64)
}

fn spread_json(values: &[f64]) -> Value {
    if values.is_empty() {
        Value::Null
    } else {
        Spread::of(values).json()
    }
}

/// Pushes everything due into the future, so that the frontier keeps up (for the new-host delay).
async fn nothing_due(client: &EsClient, indices: &Indices) {
    let later = format_date(Utc::now() + TimeDelta::days(2));
    for index in [&indices.status, &indices.urls] {
        update_by_query(
            client,
            index,
            json!({ "query": { "range": { "nextFetchDate": { "lte": "now+10m" } } },
                "script": { "source": "ctx._source.nextFetchDate = params.later", "params": { "later": later } } }),
        )
        .await;
    }
    update_by_query(
        client,
        &indices.queues,
        json!({ "query": { "match_all": {} },
            "script": { "source": "ctx._source.nextDue = params.later; ctx._source.remove('leaseOwner'); ctx._source.remove('leaseUntil')",
                "params": { "later": later } } }),
    )
    .await;
}

/// Gives back queues that runs left leased, so that every run starts from the same state.
async fn release_leases(client: &EsClient, indices: &Indices) {
    update_by_query(
        client,
        &indices.queues,
        json!({ "query": { "exists": { "field": "leaseOwner" } },
            "script": { "source": "ctx._source.remove('leaseOwner'); ctx._source.remove('leaseUntil')" } }),
    )
    .await;
}

#[tokio::main]
async fn main() {
    let client = engine_client();
    let sizes: Vec<u64> = std::env::var("SQUALL_BENCH_SIZES")
        .unwrap_or_else(|_| {
            if quick() {
                "5000,20000".into()
            } else {
                "1000000,5000000".into()
            }
        })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let window = Duration::from_secs_f64(env_or("WINDOW", if quick() { 3.0 } else { 20.0 }));
    let runs: usize = env_or("RUNS", if quick() { 1 } else { 3 });
    let shards: u32 = env_or("SHARDS", 8);
    let hosts: u64 = env_or("HOSTS", (largest / 50).max(10));
    let kinds = Kind::selected();
    let run = std::process::id();
    let indices = Indices {
        status: format!("bench-status-{run}"),
        urls: format!("bench-urls-{run}"),
        queues: format!("bench-queues-{run}"),
    };
    let targets = Targets {
        status: Some(indices.status.clone()),
        queue_frontier: Some((indices.urls.clone(), indices.queues.clone())),
    };
    let generator = Generator::new(hosts, Utc::now());
    create(&client, &targets, shards).await;
    let mut earliest = EarliestDue::new();
    let mut loaded = 0;
    let mut results = Vec::new();
    for size in sizes {
        eprintln!("spouts: loading up to {size} URLs over {hosts} hosts");
        let started = Instant::now();
        call(
            &client,
            Method::Put,
            &format!("/{},{}/_settings", indices.status, indices.urls),
            &[],
            Some(RequestBody::Json(
                json!({ "index": { "refresh_interval": "-1" } }),
            )),
        )
        .await;
        load(
            &client,
            &generator,
            &targets,
            loaded..size.max(loaded),
            &mut earliest,
        )
        .await;
        loaded = size.max(loaded);
        finish_load(&client, &targets, &format!("{}s", REFRESH.as_secs())).await;
        let load_seconds = started.elapsed().as_secs_f64();
        release_leases(&client, &indices).await;
        let status_docs = shard_docs(&client, &indices.status).await;
        let urls_docs = shard_docs(&client, &indices.urls).await;
        let due_urls = due_count(&client, &indices.urls).await;

        let mut trials: Vec<(Kind, Trial)> = Vec::new();
        for r in 0..runs {
            for i in 0..kinds.len() {
                let kind = kinds[(i + r) % kinds.len()];
                eprintln!("spouts: {size} URLs, run {r}, {}", kind.name());
                let owner = format!("bench-{run}-{size}-{r}");
                let trial = run_trial(kind, &client, &indices, &owner, Until::Window(window)).await;
                eprintln!("  {} URLs in {:?}", trial.keys.len(), window);
                trials.push((kind, trial));
                release_leases(&client, &indices).await;
            }
        }
        eprintln!("spouts: {size} URLs, new hosts in a frontier that keeps up");
        nothing_due(&client, &indices).await;
        let mut new_hosts: Vec<(Kind, Option<Duration>)> = Vec::new();
        for r in 0..runs {
            for i in 0..kinds.len() {
                let kind = kinds[(i + r) % kinds.len()];
                let until = Until::NewHost {
                    host: format!("new-{}-{size}-{r}.test", kind.name()),
                    settle: Duration::from_secs(3),
                    limit: Duration::from_secs(60),
                };
                let owner = format!("bench-new-{run}-{size}-{r}");
                let trial = run_trial(kind, &client, &indices, &owner, until).await;
                eprintln!("  {}: new host after {:?}", kind.name(), trial.new_host);
                new_hosts.push((kind, trial.new_host));
                release_leases(&client, &indices).await;
            }
        }

        let mut spouts = Vec::new();
        for &kind in &kinds {
            let mine: Vec<&Trial> = trials
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, t)| t)
                .collect();
            let rates: Vec<f64> = mine
                .iter()
                .map(|t| t.keys.len() as f64 / window.as_secs_f64())
                .collect();
            let p50: Vec<f64> = mine
                .iter()
                .filter_map(|t| percentile(&t.latencies_ms, 0.5))
                .collect();
            let p99: Vec<f64> = mine
                .iter()
                .filter_map(|t| percentile(&t.latencies_ms, 0.99))
                .collect();
            let first: Vec<f64> = mine
                .iter()
                .filter_map(|t| t.first_url.map(|d| d.as_secs_f64()))
                .collect();
            let spread_hosts: Vec<f64> = mine
                .iter()
                .filter_map(|t| hosts_per_thousand(&t.keys))
                .collect();
            let queries: usize = mine.iter().map(|t| t.latencies_ms.len()).sum();
            let delays: Vec<f64> = new_hosts
                .iter()
                .filter(|(k, _)| *k == kind)
                .filter_map(|(_, d)| d.map(|d| d.as_secs_f64()))
                .collect();
            let trials_new = new_hosts.iter().filter(|(k, _)| *k == kind).count();
            spouts.push(json!({
                "spout": kind.name(),
                "urls_per_second": spread_json(&rates),
                "query_ms_p50": spread_json(&p50),
                "query_ms_p99": spread_json(&p99),
                "first_url_seconds": spread_json(&first),
                "hosts_per_1000_urls": spread_json(&spread_hosts),
                "new_host_seconds": spread_json(&delays),
                "new_host_missed": trials_new - delays.len(),
                "new_host_trials": trials_new,
                "queries": queries,
            }));
        }
        results.push(json!({
            "urls": size,
            "hosts": hosts,
            "hosts_present": earliest.len(),
            "due_urls": due_urls,
            "load_seconds": load_seconds,
            "shards": {
                "status_routed": { "docs": status_docs, "skew": skew(&status_docs) },
                "urls": { "docs": urls_docs, "skew": skew(&urls_docs) },
            },
            "spouts": spouts,
        }));
        // The next size grows this frontier; what is due again comes from the newly loaded URLs.
    }
    delete(&client, &[&indices.status, &indices.urls, &indices.queues]).await;
    println!(
        "{:#}",
        json!({
            "benchmark": "spouts",
            "window_seconds": window.as_secs_f64(),
            "runs": runs,
            "shards": shards,
            "runner": { "min_delay_ms": env_or::<u64>("MIN_DELAY_MS", 0), "max_pending": 2000, "purgatory_seconds": 30 },
            "query_budget": { "hosts_per_query": HOSTS_PER_QUERY, "urls_per_host": URLS_PER_HOST,
                "queues_held": env_or("QUEUES_HELD", QUEUES_HELD) },
            "sizes": results,
        })
    );
}
