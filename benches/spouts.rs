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
//! **Budgets.** Every spout of the headline gets the same budget: 100 hosts per query and 10 URLs
//! per host (status-index spouts: `es.status.max.buckets` 100, `max.urls.per.bucket` 10, hybrid
//! reload 10; queue spout: holds at most 100 queues, claims at most 100 per query, reads at most 10
//! URLs per queue). One extra row, `queue-1000` ("queue (1000 held)"), is the queue spout at its best
//! setting: it holds up to `QUEUES_HELD` queues (1,000), still claiming at most 100 per query and
//! handing out at most 10 URLs of a queue at once, but reading a queue as the spout does by default
//! (60 URLs a read, `HELD_READ`: one read serves a long hold). It runs by default but is not part
//! of the equal-budget comparison.
//!
//! **Order.** The spouts take turns within each run, and the order is balanced over runs (ABBA):
//! runs come in pairs; pair `p` uses the spouts rotated by `p` places, its first run in that order
//! and its second in reverse. Over each pair every spout's mean position is the middle one, so a
//! drift during the run (segment merges, caches warming) weighs the same on every spout, and no
//! spout is always first or last; the rotation changes who opens and closes each pair. An odd
//! `RUNS` leaves the last pair half done (unbalanced; the JSON says so). Every window starts from a
//! fresh copy of the kept frontier, so that no spout meets the due URLs an earlier one used up.
//!
//! **Where the time goes.** For every window: the engine's work from its node statistics (CPU,
//! and the time and shard-level operations of search, indexing, refresh, get and merge), the
//! spout's queries as the runner waited on them, the queue spout's own stages (listing, claiming,
//! reading, handing out, releasing) and the write-back alongside, each per URL emitted. And the
//! ceiling: a raw `_bulk` of the same node into the same urls index (documents rewritten as they
//! are, so the frontier does not change), before and after the windows.
//!
//! **Kept frontiers.** Each size is loaded once and kept in the node (`bench-kept-…`, see
//! `common/kept_frontier.rs`); every run works on a copy (`_clone`, seconds at any size), so that
//! publishing this section does not wait for a 10 M load. A kept frontier older than `KEPT_DAYS`
//! (3) is loaded again: its URLs not due at load come due from an hour after it on. Kept frontiers
//! are merged to one segment a shard before their first use, so that every size starts settled.
//!
//! `cargo bench --bench spouts` prints JSON. Needs a node: `SQUALL_BENCH_ES` (default
//! http://127.0.0.1:9200), with a 4 GB heap for the default sizes (scripts/bench starts one). Settings
//! (env, `SQUALL_BENCH_` prefix): `SIZES` (default `1000000,10000000`; quick `20000`),
//! `WINDOW` seconds (20; quick 3), `RUNS` (2, one ABBA pair; quick 1), `SHARDS` (2, primaries of
//! every index of both frontiers), `HOSTS` (largest size / 50: 200,000 at 10 M), `MIN_DELAY_MS`
//! (0), `SPOUTS` (names, default all five: aggregation, collapsing, hybrid, queue, queue-1000),
//! `QUEUES_HELD` (1000, the extra row),
//! `ALL_DUE` (the size of the "all due" case, default the largest size; 0 leaves it out),
//! `KEEP_BACKGROUND` (1: keep the largest frontier, nothing due, for the end-to-end benchmark,
//! whose crawls want 8 primaries: run it with `SHARDS=8`, or the end-to-end benchmark loads its own),
//! `NEW_HOSTS` (0 leaves the new-host trials out), `CEILING_DOCS` (documents of each raw `_bulk`,
//! 100,000; quick 5,000), `KEPT_DAYS` (3).
//!
//! **All due.** After the sizes, a frontier of `ALL_DUE` URLs over the same hosts with every URL
//! due (a frontier just seeded or just migrated: StormCrawler's issue 262 is this case for the
//! aggregation spout) is loaded into indices of its own, and every spout gets the same windows on
//! it, in the same orders.

mod common;

use common::kept_frontier::{Kept, KeptFrontiers};
use common::raw_bulk::raw_bulk_rate;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{TimeDelta, Utc};
use common::engine_stats::EngineStats;
use common::frontier_data::{
    Generator, Targets, background, clone_index, delete, doc_count, due_count, names, shard_docs,
    skew, update_by_query,
};
use common::{Spread, engine_client, engine_url, env_or, print_result, quick};
use serde_json::json;
use squall::frontier::{BusyUrls, DueUrl, Spout, SpoutError};
use squall::frontier::{StatusStore, StatusWrite};
use squall::message::Tuple;
use squall::model::{CrawlUrl, Status};
use squall::spout::{RunnerState, SpoutRunner};
use squall_bench_schema::Run;
use squall_bench_schema::end_to_end::EngineWork;
use squall_bench_schema::spouts::{
    QueryBudget, RunOrder, Runner, ShardCounts, ShardSkew, SpoutResult, SpoutSize, Spouts,
    StageTime,
};
use squall_engine::client::Method;
use squall_engine::client::{EsClient, RequestBody};
use squall_engine::queue::timings::StageTimes;
use squall_engine::queue::{QueueSpout, QueueSpoutSettings};
use squall_engine::status_index::schema::{KeyField, format_date};
use squall_engine::status_index::spouts::{
    AggregationSpout, CollapsingSpout, HybridSpout, StatusSpoutConfig,
};
use squall_engine::{EsStatusStore, WriterConfig};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Hosts per query and URLs per host per query: the same budget for every spout of the headline (the
/// queue spout holds `HOSTS_PER_QUERY` queues and claims up to as many per query).
const HOSTS_PER_QUERY: usize = 100;
const URLS_PER_HOST: usize = 10;
/// Queues the extra `queue-1000` row holds at once (claiming up to `HOSTS_PER_QUERY` per query and
/// reading `URLS_PER_HOST` URLs of each): the queue spout's best setting. With politeness on, a
/// crawler fetches at most as many hosts at once as it holds queues, so a real one holds hundreds
/// to thousands.
const QUEUES_HELD: usize = 1000;
/// URLs of one write-back request of the immediate-ack fetcher at most, and its requests in
/// flight at once (the raw `_bulk` ceiling sends the same).
const WRITE_BATCH: usize = 500;
const WRITES_AT_ONCE: usize = 2;
/// Refresh interval of both frontiers during the benchmark.
const REFRESH: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Aggregation,
    Collapsing,
    Hybrid,
    /// The queue spout at the headline's budget: 100 queues held.
    Queue,
    /// The queue spout holding `QUEUES_HELD` queues: an extra row, outside the equal-budget
    /// comparison.
    QueueHeld,
}

/// Queues held by the `queue-1000` row: `SQUALL_BENCH_QUEUES_HELD`, default 1,000.
fn queues_held() -> usize {
    env_or("QUEUES_HELD", QUEUES_HELD)
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Aggregation,
        Kind::Collapsing,
        Kind::Hybrid,
        Kind::Queue,
        Kind::QueueHeld,
    ];

    /// URLs one read of a queue asks for: the equal budget's 10, or for the extra row the queue
    /// spout's own default (`SQUALL_BENCH_HELD_READ`), still handed out 10 at a time.
    fn urls_per_read(self) -> usize {
        match self {
            Kind::QueueHeld => env_or("HELD_READ", QueueSpoutSettings::new("", "").urls_per_read),
            _ => URLS_PER_HOST,
        }
    }

    /// The spouts to run: `SQUALL_BENCH_SPOUTS` (comma-separated names), default all five.
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
            Kind::QueueHeld => "queue-1000",
        }
    }

    /// The row's label in the report.
    fn label(self) -> String {
        match self {
            Kind::QueueHeld => format!("queue ({} held)", queues_held()),
            other => other.name().to_string(),
        }
    }

    /// Whether the spout runs at the headline's equal budget (the ratios compare only those).
    fn equal_budget(self) -> bool {
        self != Kind::QueueHeld
    }

    /// Queues the spout holds, for the queue spouts.
    fn queues(self) -> Option<usize> {
        match self {
            Kind::Queue => Some(HOSTS_PER_QUERY),
            Kind::QueueHeld => Some(queues_held()),
            _ => None,
        }
    }
}

/// The order of the spouts in run `r` (0-based): runs come in pairs, pair `r / 2` uses `kinds`
/// rotated by `r / 2` places, its first run in that order and its second in reverse (ABBA). Each
/// spout's mean position over a pair is the middle one.
fn order(kinds: &[Kind], r: usize) -> Vec<Kind> {
    let n = kinds.len();
    let mut order: Vec<Kind> = (0..n).map(|i| kinds[(i + r / 2) % n]).collect();
    if r % 2 == 1 {
        order.reverse();
    }
    order
}

/// A spout, the writer of its process, and for the queue spout its stage timings.
type Frontier = (
    Box<dyn Spout>,
    Arc<dyn StatusStore>,
    Option<Arc<StageTimes>>,
);

/// The indices of the benchmark's frontier.
struct Indices {
    status: String,
    urls: String,
    queues: String,
}

impl Indices {
    /// The spout of `kind` and the writer of its process (for the queue spout, the one that notes
    /// its writes for the queues it holds).
    fn frontier(&self, kind: Kind, client: &EsClient, owner: &str) -> Frontier {
        let settings = StatusSpoutConfig {
            index: self.status.clone(),
            max_buckets: HOSTS_PER_QUERY,
            max_urls_per_bucket: URLS_PER_HOST,
            max_urls_per_reload: URLS_PER_HOST,
            refresh_interval: REFRESH,
            ..StatusSpoutConfig::default()
        };
        let spout: Box<dyn Spout> = match kind {
            Kind::Aggregation => Box::new(AggregationSpout::new(client.clone(), settings)),
            Kind::Collapsing => Box::new(CollapsingSpout::new(client.clone(), settings)),
            Kind::Hybrid => Box::new(HybridSpout::new(client.clone(), settings)),
            Kind::Queue | Kind::QueueHeld => {
                let spout = QueueSpout::new(
                    client.clone(),
                    QueueSpoutSettings {
                        owner: owner.to_string(),
                        max_queues: kind.queues().unwrap_or(HOSTS_PER_QUERY),
                        max_claims_per_query: HOSTS_PER_QUERY,
                        max_urls_per_queue: URLS_PER_HOST,
                        urls_per_read: kind.urls_per_read(),
                        refresh_interval: REFRESH,
                        ..QueueSpoutSettings::new(&self.urls, &self.queues)
                    },
                );
                let store = Arc::new(spout.status_store());
                let times = spout.timings();
                return (Box::new(spout), store, Some(times));
            }
        };
        (spout, self.store(client), None)
    }

    /// The index where queue spouts announce themselves.
    fn workers(&self) -> String {
        QueueSpoutSettings::new(&self.urls, &self.queues).workers_index()
    }

    /// The writer of the status index.
    fn store(&self, client: &EsClient) -> Arc<dyn StatusStore> {
        Arc::new(EsStatusStore::new(
            client.clone(),
            WriterConfig {
                index: self.status.clone(),
                key_field: KeyField::default(),
                routing: true,
            },
        ))
    }
}

/// A spout that records how long each of its queries took; it forwards every other method of
/// [`Spout`], so that the runner treats it as the spout it wraps.
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

    fn reads_past_busy(&self) -> bool {
        self.inner.reads_past_busy()
    }

    fn write_visibility(&self) -> Duration {
        self.inner.write_visibility()
    }

    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        self.inner.frontier_idle().await
    }

    async fn close(&mut self) {
        self.inner.close().await;
    }
}

/// What one run of one spout saw.
struct Trial {
    /// Keys of the URLs emitted within the window, in order.
    keys: Vec<String>,
    first_url: Option<Duration>,
    latencies_ms: Vec<f64>,
    new_host: Option<Duration>,
    /// What the engine did in the window.
    engine: Option<EngineWork>,
    /// Where the window's time went (totals; per URL in the summary).
    stages: Vec<StageTime>,
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

/// The immediate-ack fetcher's writes so far: requests, URLs and time.
type WriteBack = Arc<Mutex<StageTime>>;

/// The immediate-ack fetcher: writes each batch as FETCHED through the store, then acks it.
fn write_and_ack(
    store: Arc<dyn StatusStore>,
    tuples: Vec<Tuple>,
    permits: Arc<Semaphore>,
    written: WriteBack,
) {
    tokio::spawn(async move {
        let _permit = permits.acquire_owned().await;
        let started = Instant::now();
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
        if let Ok(mut written) = written.lock() {
            written.rounds += 1;
            written.items += tuples.len() as u64;
            written.ms += started.elapsed().as_secs_f64() * 1000.0;
        }
        for (tuple, outcome) in tuples.into_iter().zip(outcomes) {
            match outcome {
                Ok(()) => tuple.ack.ack(),
                Err(e) => tuple.ack.fail(e.to_string()),
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
    let (inner, store, times) = indices.frontier(kind, client, owner);
    let permits = Arc::new(Semaphore::new(WRITES_AT_ONCE));
    let write_back: WriteBack = Arc::new(Mutex::new(StageTime {
        stage: "write_back".into(),
        ..StageTime::default()
    }));
    let wrote = |tuples| {
        write_and_ack(
            Arc::clone(&store),
            tuples,
            Arc::clone(&permits),
            Arc::clone(&write_back),
        )
    };
    let spout = Timed {
        inner,
        latencies_ms: Arc::clone(&latencies),
    };
    let runner = SpoutRunner::new(
        Box::new(spout),
        squall::spout::SpoutSettings {
            min_delay_queries: Duration::from_millis(env_or("MIN_DELAY_MS", 0)),
            max_delay_queries: Duration::from_secs(20),
            ttl_purgatory: Duration::from_secs(30),
            max_pending: 2000,
            ..squall::spout::SpoutSettings::default()
        },
    );
    let (out, mut tuples) = mpsc::channel(256);
    let (ack_sender, acks) = mpsc::unbounded_channel();
    let (state, _state) = watch::channel(RunnerState::default());
    let stop = CancellationToken::new();
    let engine_before = EngineStats::read(&engine_url()).await;
    let running = tokio::spawn(runner.run(out, ack_sender, acks, state, stop.clone()));
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
        engine: None,
        stages: Vec::new(),
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
                if pending.len() >= WRITE_BATCH {
                    wrote(std::mem::take(&mut pending));
                }
            }
            _ = flush.tick() => {
                if !pending.is_empty() {
                    wrote(std::mem::take(&mut pending));
                }
            }
        }
        if Instant::now() >= deadline || trial.new_host.is_some() {
            break;
        }
    }
    // Stop: whatever is still emitted is written and acked, but no longer counted.
    let elapsed = started.elapsed();
    let engine_after = EngineStats::read(&engine_url()).await;
    trial.stages = window_stages(times.as_deref(), &latencies, &write_back, elapsed);
    let urls = trial.keys.len() as f64;
    if let (Some(before), Some(after)) = (&engine_before, &engine_after) {
        trial.engine = Some(after.per_page(before, urls));
    }
    stop.cancel();
    if !pending.is_empty() {
        wrote(std::mem::take(&mut pending));
    }
    let drain = async {
        while let Some(tuple) = tuples.recv().await {
            wrote(vec![tuple]);
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

/// The window's stages so far: the queries as the runner waited on them, the queue spout's own
/// stages, the runner's time outside queries and the write-back alongside.
fn window_stages(
    times: Option<&StageTimes>,
    latencies: &Mutex<Vec<f64>>,
    written: &WriteBack,
    window: Duration,
) -> Vec<StageTime> {
    let queries = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    let query_ms: f64 = queries.iter().sum();
    let stage = |name: &str, rounds: u64, items: u64, ms: f64| StageTime {
        stage: name.to_string(),
        rounds,
        items,
        ms,
        ms_per_url: None,
    };
    let mut stages = vec![stage("query", queries.len() as u64, 0, query_ms)];
    if let Some(times) = times {
        for (name, totals) in times.snapshot() {
            let ms = totals.time.as_secs_f64() * 1000.0;
            stages.push(stage(name.name(), totals.rounds, totals.items, ms));
        }
    }
    let outside = (window.as_secs_f64() * 1000.0 - query_ms).max(0.0);
    stages.push(stage("runner", queries.len() as u64, 0, outside));
    if let Ok(written) = written.lock() {
        stages.push(written.clone());
    }
    stages
}

fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return None;
    }
    Some(sorted[((sorted.len() as f64 - 1.0) * q).round() as usize])
}

/// The `count` slowest queries of a window, as "milliseconds@position" (the first query is 0).
fn slowest(latencies_ms: &[f64], count: usize) -> String {
    let mut indexed: Vec<(usize, f64)> = latencies_ms.iter().copied().enumerate().collect();
    indexed.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shown: Vec<String> = indexed
        .iter()
        .take(count)
        .map(|(at, ms)| format!("{ms:.0}@{at}"))
        .collect();
    shown.join(" ")
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

/// The engine's work over `trials`, per URL emitted in them.
fn engine_per_url(trials: &[&Trial]) -> Option<EngineWork> {
    let works: Vec<&EngineWork> = trials.iter().filter_map(|t| t.engine.as_ref()).collect();
    if works.is_empty() {
        return None;
    }
    let urls = trials.iter().map(|t| t.keys.len()).sum::<usize>().max(1) as f64;
    let mut total = EngineWork::default();
    for work in works {
        total.cpu_ms += work.cpu_ms;
        for (kind, done) in &work.kinds {
            let entry = total.kinds.entry(kind.clone()).or_default();
            entry.operations += done.operations;
            entry.milliseconds += done.milliseconds;
        }
    }
    total.cpu_ms_per_page = Some(total.cpu_ms / urls);
    for kind in total.kinds.values_mut() {
        kind.operations_per_page = kind.operations / urls;
        kind.ms_per_page = kind.milliseconds / urls;
    }
    Some(total)
}

/// The stages of `trials` added up, with their milliseconds per URL emitted.
fn stages_per_url(trials: &[&Trial]) -> Vec<StageTime> {
    let urls = trials.iter().map(|t| t.keys.len()).sum::<usize>();
    let mut stages: Vec<StageTime> = Vec::new();
    for stage in trials.iter().flat_map(|t| &t.stages) {
        match stages.iter_mut().find(|s| s.stage == stage.stage) {
            Some(total) => {
                total.rounds += stage.rounds;
                total.items += stage.items;
                total.ms += stage.ms;
            }
            None => stages.push(stage.clone()),
        }
    }
    for stage in &mut stages {
        stage.ms_per_url = (urls > 0).then(|| stage.ms / urls as f64);
    }
    stages
}

/// About `count` URL numbers spread over a frontier of `size`, rewritten as generated to measure
/// the ceiling: URLs not due, which no window changes, so the frontier stays as it was (in an
/// all-due frontier every URL is due: there they are any URLs).
fn untouched_urls(size: u64, count: u64, all_due: bool) -> Vec<u64> {
    let stride = (size / count.max(1)).max(1);
    (0..size)
        .step_by(stride as usize)
        .map(|n| {
            if !all_due && Generator::is_due(n) {
                n + 1
            } else {
                n
            }
        })
        .filter(|&n| n < size)
        .collect()
}

/// The ceiling: a raw `_bulk` into the frontier's urls index, in requests of the size and number
/// in flight the immediate-ack fetcher uses.
async fn ceiling(kept: &KeptFrontiers, epoch: chrono::DateTime<Utc>, urls: &str, size: u64) -> f64 {
    let count = env_or("CEILING_DOCS", if quick() { 5_000 } else { 100_000 });
    let numbers = untouched_urls(size, count, kept.all_due);
    let rate = raw_bulk_rate(
        &kept.generator(epoch),
        urls,
        &numbers,
        WRITE_BATCH,
        WRITES_AT_ONCE,
    )
    .await;
    eprintln!("  raw _bulk: {rate:.0} docs/s");
    rate
}

fn spread(values: &[f64]) -> Option<Spread> {
    (!values.is_empty()).then(|| Spread::of(values))
}

/// Each spout's figures over its trials: URLs/s, query latency, first URL, host spread, and the
/// new-host delays (none for a phase without them).
fn summarize(
    kinds: &[Kind],
    trials: &[(Kind, Trial)],
    new_hosts: &[(Kind, Option<Duration>)],
    window: Duration,
) -> Vec<SpoutResult> {
    let mut spouts = Vec::new();
    for &kind in kinds {
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
        let urls: usize = mine.iter().map(|t| t.keys.len()).sum();
        let delays: Vec<f64> = new_hosts
            .iter()
            .filter(|(k, _)| *k == kind)
            .filter_map(|(_, d)| d.map(|d| d.as_secs_f64()))
            .collect();
        let trials_new = new_hosts.iter().filter(|(k, _)| *k == kind).count();
        spouts.push(SpoutResult {
            spout: kind.name().to_string(),
            label: Some(kind.label()),
            equal_budget: Some(kind.equal_budget()),
            queues_held: kind.queues().map(|n| n as u64),
            urls_per_second: spread(&rates),
            query_ms_p50: spread(&p50),
            query_ms_p99: spread(&p99),
            first_url_seconds: spread(&first),
            hosts_per_1000_urls: spread(&spread_hosts),
            new_host_seconds: spread(&delays),
            new_host_missed: Some((trials_new - delays.len()) as u64),
            new_host_trials: Some(trials_new as u64),
            queries: Some(queries as u64),
            urls: Some(urls as u64),
            engine: engine_per_url(&mine),
            stages: stages_per_url(&mine),
        });
    }
    spouts
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
            "script": { "source": "ctx._source.nextDue = params.later; ctx._source.remove('leaseOwner'); ctx._source.remove('leaseUntil'); ctx._source.remove('heldDue')",
                "params": { "later": later } } }),
    )
    .await;
}

/// Gives back queues that a run left leased (as the spout's own drop of a lease does: no owner,
/// `leaseUntil` now) and forgets the queue spouts' heartbeats, so that every run starts from the same
/// state. A spout closed by its runner has given its queues back already.
async fn release_leases(client: &EsClient, indices: &Indices) {
    update_by_query(
        client,
        &indices.queues,
        json!({ "query": { "exists": { "field": "leaseOwner" } },
            "script": { "source": "ctx._source.leaseOwner = null; ctx._source.leaseUntil = params.now",
                "params": { "now": format_date(Utc::now()) } } }),
    )
    .await;
    // The workers index exists once a queue spout ran; until then there is nothing to forget.
    let _ = client
        .request(
            Method::Post,
            &format!("/{}/_delete_by_query", indices.workers()),
            &[("conflicts", "proceed"), ("refresh", "true")],
            Some(RequestBody::Json(json!({ "query": { "match_all": {} } }))),
        )
        .await;
}

/// The frontier just grown to the largest size, nothing due, kept under [`background`]'s names.
async fn keep_background(client: &EsClient, targets: &Targets) {
    let kept = background();
    let names = names(&kept);
    delete(
        client,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    for (from, to) in self::names(targets).iter().zip(&names) {
        clone_index(client, from, to, false).await;
    }
    eprintln!("spouts: kept the frontier as {}", names.join(", "));
}

/// The "all due" case: a frontier of `size` URLs, every one due (just seeded or just migrated), in
/// indices of its own; one window of each spout per run, in the same orders.
async fn all_due_phase(
    client: &EsClient,
    size: u64,
    hosts: u64,
    shards: u32,
    orders: &[Vec<Kind>],
    window: Duration,
) -> SpoutSize {
    let run = std::process::id();
    let indices = Indices {
        status: format!("bench-alldue-status-{run}"),
        urls: format!("bench-alldue-urls-{run}"),
        queues: format!("bench-alldue-queues-{run}"),
    };
    let targets = Targets {
        status: Some(indices.status.clone()),
        queue_frontier: Some((indices.urls.clone(), indices.queues.clone())),
    };
    let kept_frontiers = kept_frontiers(hosts, shards, true);
    let kept = kept_frontiers.ensure(client, &[size]).await;
    let Some((_, kept)) = kept.first() else {
        panic!("no kept frontier of {size} URLs, all due");
    };
    let start = Start {
        frontiers: &kept_frontiers,
        kept,
        targets: &targets,
    };
    start.copy(client).await;
    let due_urls = due_count(client, &indices.urls).await;
    let phase = format!("{run}-all-due-{size}");
    let first_ceiling = ceiling(&kept_frontiers, kept.epoch, &indices.urls, size).await;
    let trials = windows(client, &indices, orders, &phase, window, &start).await;
    let last_ceiling = ceiling(&kept_frontiers, kept.epoch, &indices.urls, size).await;
    let mut kinds: Vec<Kind> = orders.first().cloned().unwrap_or_default();
    kinds.sort_by_key(|k| Kind::ALL.iter().position(|a| a == k));
    let spouts = summarize(&kinds, &trials, &[], window);
    let mut names = names(&targets);
    names.push(indices.workers());
    delete(
        client,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    SpoutSize {
        urls: size,
        hosts: Some(hosts),
        hosts_present: None,
        due_urls: Some(due_urls),
        load_seconds: kept.load_seconds,
        raw_bulk_docs_per_second: spread(&[first_ceiling, last_ceiling]),
        frontier_epoch: Some(kept.epoch.to_rfc3339()),
        shards: None,
        spouts,
    }
}

/// The delay before a brand-new host's first URL, once per spout and run, in a frontier made to
/// keep up (nothing due).
async fn new_host_trials(
    client: &EsClient,
    indices: &Indices,
    orders: &[Vec<Kind>],
    phase: &str,
) -> Vec<(Kind, Option<Duration>)> {
    eprintln!("spouts: {phase}, new hosts in a frontier that keeps up");
    nothing_due(client, indices).await;
    let mut new_hosts = Vec::new();
    for (r, kinds) in orders.iter().enumerate() {
        for &kind in kinds {
            let until = Until::NewHost {
                host: format!("new-{}-{phase}-{r}.test", kind.name()),
                settle: Duration::from_secs(3),
                limit: Duration::from_secs(60),
            };
            let owner = format!("bench-new-{phase}-{r}-{}", kind.name());
            let trial = run_trial(kind, client, indices, &owner, until).await;
            eprintln!("  {}: new host after {:?}", kind.name(), trial.new_host);
            new_hosts.push((kind, trial.new_host));
            release_leases(client, indices).await;
        }
    }
    new_hosts
}

/// The benchmark's kept frontiers of this shape, copied with its refresh interval. One older than
/// `SQUALL_BENCH_KEPT_DAYS` (default 3) is loaded again: URLs that were not due at its load come due
/// from an hour after it on (about 2 % of the frontier a day).
fn kept_frontiers(hosts: u64, shards: u32, all_due: bool) -> KeptFrontiers {
    let max_age = TimeDelta::try_hours((env_or("KEPT_DAYS", 3.0_f64) * 24.0).round() as i64)
        .unwrap_or(TimeDelta::days(3));
    KeptFrontiers {
        hosts,
        shards,
        all_due,
        refresh: format!("{}s", REFRESH.as_secs()),
        max_age,
    }
}

/// Where every window starts: a fresh copy of the kept frontier, so that no spout meets a frontier
/// an earlier window drained (at 1 M, one run of the five spouts writes back most of the due URLs).
struct Start<'a> {
    frontiers: &'a KeptFrontiers,
    kept: &'a Kept,
    targets: &'a Targets,
}

impl Start<'_> {
    async fn copy(&self, client: &EsClient) {
        self.frontiers
            .working_copy(client, self.kept, self.targets)
            .await;
    }
}

/// One window of every spout in each run's order, leases given back between them.
async fn windows(
    client: &EsClient,
    indices: &Indices,
    orders: &[Vec<Kind>],
    phase: &str,
    window: Duration,
    start: &Start<'_>,
) -> Vec<(Kind, Trial)> {
    let mut trials = Vec::new();
    for (r, kinds) in orders.iter().enumerate() {
        for &kind in kinds {
            eprintln!("spouts: {phase}, run {r}, {}", kind.name());
            start.copy(client).await;
            let owner = format!("bench-{phase}-{r}-{}", kind.name());
            let trial = run_trial(kind, client, indices, &owner, Until::Window(window)).await;
            eprintln!(
                "  {} URLs in {:?}, {} queries; slowest: {}",
                trial.keys.len(),
                window,
                trial.latencies_ms.len(),
                slowest(&trial.latencies_ms, 4)
            );
            trials.push((kind, trial));
            release_leases(client, indices).await;
        }
    }
    trials
}

#[tokio::main]
async fn main() {
    let client = engine_client();
    let sizes: Vec<u64> = std::env::var("SQUALL_BENCH_SIZES")
        .unwrap_or_else(|_| {
            if quick() {
                "20000".into()
            } else {
                "1000000,10000000".into()
            }
        })
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let window = Duration::from_secs_f64(env_or("WINDOW", if quick() { 3.0 } else { 20.0 }));
    let runs: usize = env_or("RUNS", if quick() { 1 } else { 2 }).max(1);
    let balanced = runs.is_multiple_of(2);
    if !balanced && !quick() {
        eprintln!(
            "spouts: {runs} runs is odd: the order of the spouts is not balanced (use an even number)"
        );
    }
    // One primary a core of the benchmark machine (2): measured side by side at 10 M, 8 primaries
    // (StormCrawler's archetype has 10) cost the spouts 40 to 50 % of their rate on two cores.
    let shards: u32 = env_or("SHARDS", 2);
    let hosts: u64 = env_or("HOSTS", (largest / 50).max(10));
    let kinds = Kind::selected();
    let orders: Vec<Vec<Kind>> = (0..runs).map(|r| order(&kinds, r)).collect();
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
    let kept_frontiers = kept_frontiers(hosts, shards, false);
    let mut results = Vec::new();
    for (size, kept) in kept_frontiers.ensure(&client, &sizes).await {
        let start = Start {
            frontiers: &kept_frontiers,
            kept: &kept,
            targets: &targets,
        };
        start.copy(&client).await;
        let status_docs = shard_docs(&client, &indices.status).await;
        let urls_docs = shard_docs(&client, &indices.urls).await;
        let due_urls = due_count(&client, &indices.urls).await;
        let hosts_present = doc_count(&client, &indices.queues).await;

        let first_ceiling = ceiling(&kept_frontiers, kept.epoch, &indices.urls, size).await;
        let phase = format!("{run}-{size}");
        let trials = windows(&client, &indices, &orders, &phase, window, &start).await;
        let last_ceiling = ceiling(&kept_frontiers, kept.epoch, &indices.urls, size).await;
        let new_hosts_measured = env_or("NEW_HOSTS", 1) == 1;
        let new_hosts = if new_hosts_measured {
            new_host_trials(&client, &indices, &orders, &phase).await
        } else {
            Vec::new()
        };
        let spouts = summarize(&kinds, &trials, &new_hosts, window);
        let shard_skew = |docs: Vec<u64>| ShardSkew {
            skew: Some(skew(&docs)),
            docs,
        };
        results.push(SpoutSize {
            urls: size,
            hosts: Some(hosts),
            hosts_present,
            due_urls: Some(due_urls),
            load_seconds: kept.load_seconds,
            raw_bulk_docs_per_second: spread(&[first_ceiling, last_ceiling]),
            frontier_epoch: Some(kept.epoch.to_rfc3339()),
            shards: Some(ShardCounts {
                status_routed: Some(shard_skew(status_docs)),
                urls: Some(shard_skew(urls_docs)),
            }),
            spouts,
        });
        if size == largest && env_or("KEEP_BACKGROUND", 0) == 1 {
            if !new_hosts_measured {
                nothing_due(&client, &indices).await;
            }
            keep_background(&client, &targets).await;
        }
    }
    delete(
        &client,
        &[
            &indices.status,
            &indices.urls,
            &indices.queues,
            &indices.workers(),
        ],
    )
    .await;
    let all_due_size: u64 = env_or("ALL_DUE", largest);
    let all_due = if all_due_size > 0 {
        Some(all_due_phase(&client, all_due_size, hosts, shards, &orders, window).await)
    } else {
        None
    };
    print_result(&Spouts {
        run: Run::named("spouts"),
        window_seconds: Some(window.as_secs_f64()),
        runs: Some(runs as u64),
        order: Some(RunOrder {
            scheme: Some(
                "ABBA: pair p of runs uses the spouts rotated by p places, first run in that \
                 order, second reversed"
                    .to_string(),
            ),
            balanced: Some(balanced),
            runs: orders
                .iter()
                .map(|o| o.iter().map(|k| k.name().to_string()).collect())
                .collect(),
        }),
        shards: Some(u64::from(shards)),
        runner: Some(Runner {
            min_delay_ms: Some(env_or::<u64>("MIN_DELAY_MS", 0) as f64),
            max_pending: Some(2000),
            purgatory_seconds: Some(30.0),
        }),
        query_budget: Some(QueryBudget {
            hosts_per_query: Some(HOSTS_PER_QUERY as u64),
            urls_per_host: Some(URLS_PER_HOST as u64),
            queues_held: Some(HOSTS_PER_QUERY as u64),
            claims_per_query: Some(HOSTS_PER_QUERY as u64),
            extra_queues_held: Some(queues_held() as u64),
        }),
        sizes: results,
        all_due,
    });
}
