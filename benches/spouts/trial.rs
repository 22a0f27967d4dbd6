//! One trial: a spout in the real [`SpoutRunner`], fed to an immediate-ack fetcher that writes
//! every URL back as FETCHED, watched for a window or until a new host's first URL.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use squall::frontier::{StatusStore, StatusWrite};
use squall::message::Tuple;
use squall::model::{CrawlUrl, Status};
use squall::spout::{RunnerState, SpoutRunner, SpoutSettings};
use squall_bench_schema::end_to_end::EngineWork;
use squall_bench_schema::spouts::StageTime;
use squall_engine::client::EsClient;
use squall_engine::queue::timings::StageTimes;
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::common::engine_stats::EngineStats;
use crate::common::{engine_url, env_or};
use crate::frontier::{Indices, Timed};
use crate::kind::Kind;

/// URLs of one write-back request of the immediate-ack fetcher at most, and its requests in
/// flight at once (the raw `_bulk` ceiling sends the same).
pub const WRITE_BATCH: usize = 500;
pub const WRITES_AT_ONCE: usize = 2;

/// What one run of one spout saw.
#[derive(Default)]
pub struct Trial {
    /// Keys of the URLs emitted within the window, in order.
    pub keys: Vec<String>,
    /// From the runner's start to the first URL emitted.
    pub first_url: Option<Duration>,
    /// Each query's milliseconds, in order.
    pub latencies_ms: Vec<f64>,
    /// From the new host's URL written to its emission (a new-host trial).
    pub new_host: Option<Duration>,
    /// What the engine did in the window.
    pub engine: Option<EngineWork>,
    /// Where the window's time went (totals; per URL in the summary).
    pub stages: Vec<StageTime>,
}

/// How a trial ends.
pub enum Until {
    /// After the window.
    Window(Duration),
    /// When this host's first URL is emitted (or after the limit); the URL is written after `settle`.
    NewHost {
        /// The new host.
        host: String,
        /// From the runner's start to the URL's write.
        settle: Duration,
        /// How long to wait for the URL after `settle`.
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

/// The immediate-ack fetcher of a trial: the writer of the spout's process, the write requests it
/// may have in flight, and its writes so far.
struct ImmediateAck {
    store: Arc<dyn StatusStore>,
    permits: Arc<Semaphore>,
    written: WriteBack,
}

impl ImmediateAck {
    fn new(store: Arc<dyn StatusStore>) -> ImmediateAck {
        ImmediateAck {
            store,
            permits: Arc::new(Semaphore::new(WRITES_AT_ONCE)),
            written: Arc::new(Mutex::new(StageTime {
                stage: "write_back".into(),
                ..StageTime::default()
            })),
        }
    }

    /// Writes `tuples` back and acks them, in a task of its own.
    fn write(&self, tuples: Vec<Tuple>) {
        write_and_ack(
            Arc::clone(&self.store),
            tuples,
            Arc::clone(&self.permits),
            Arc::clone(&self.written),
        )
    }
}

/// The runner around the timed spout, with the benchmark's settings.
fn runner(spout: Timed) -> SpoutRunner {
    SpoutRunner::new(
        Box::new(spout),
        SpoutSettings {
            min_delay_queries: Duration::from_millis(env_or("MIN_DELAY_MS", 0)),
            max_delay_queries: Duration::from_secs(20),
            ttl_purgatory: Duration::from_secs(30),
            max_pending: 2000,
            ..SpoutSettings::default()
        },
    )
}

/// One trial of the spout of `kind` (its process named `owner`) until `until` says it ends.
pub async fn run_trial(
    kind: Kind,
    client: &EsClient,
    indices: &Indices,
    owner: &str,
    until: Until,
) -> Trial {
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let (inner, store, times) = indices.frontier(kind, client, owner);
    let fetcher = ImmediateAck::new(store);
    let runner = runner(Timed {
        inner,
        latencies_ms: Arc::clone(&latencies),
    });
    let (out, mut tuples) = mpsc::channel(256);
    let (ack_sender, acks) = mpsc::unbounded_channel();
    let (state, _state) = watch::channel(RunnerState::default());
    let stop = CancellationToken::new();
    let engine_before = EngineStats::read(&engine_url()).await;
    let running = tokio::spawn(runner.run(out, ack_sender, acks, state, stop.clone()));
    let started = Instant::now();
    let mut trial = Trial::default();
    let mut pending = Vec::new();
    watch_window(
        &mut tuples,
        &fetcher,
        &until,
        started,
        &mut trial,
        &mut pending,
    )
    .await;
    // Stop: whatever is still emitted is written and acked, but no longer counted.
    let elapsed = started.elapsed();
    let engine_after = EngineStats::read(&engine_url()).await;
    trial.stages = window_stages(times.as_deref(), &latencies, &fetcher.written, elapsed);
    let urls = trial.keys.len() as f64;
    if let (Some(before), Some(after)) = (&engine_before, &engine_after) {
        trial.engine = Some(after.per_page(before, urls));
    }
    stop.cancel();
    wind_down(running, tuples, pending, &fetcher).await;
    trial.latencies_ms = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    trial
}

/// Counts what the runner emits (into `trial`) until `until` says the trial ends, handing it to
/// the fetcher in batches (`pending`: what waits for the next); for a new host, writes its URL
/// once `settle` has passed since `started` and notes when the URL comes out.
async fn watch_window(
    tuples: &mut mpsc::Receiver<Tuple>,
    fetcher: &ImmediateAck,
    until: &Until,
    started: Instant,
    trial: &mut Trial,
    pending: &mut Vec<Tuple>,
) {
    let (deadline, new_host, settle) = match until {
        Until::Window(window) => (started + *window, None, Duration::ZERO),
        Until::NewHost {
            host,
            settle,
            limit,
        } => (started + *settle + *limit, Some(host.clone()), *settle),
    };
    let mut written: Option<Instant> = None;
    let mut flush = tokio::time::interval(Duration::from_millis(20));
    loop {
        if let Some(host) = &new_host
            && written.is_none()
            && started.elapsed() >= settle
        {
            written = Some(Instant::now());
            write_new_host(fetcher.store.as_ref(), host).await;
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
                    fetcher.write(std::mem::take(pending));
                }
            }
            _ = flush.tick() => {
                if !pending.is_empty() {
                    fetcher.write(std::mem::take(pending));
                }
            }
        }
        if Instant::now() >= deadline || trial.new_host.is_some() {
            break;
        }
    }
}

/// Writes the new host's home page, due now, as a discovered URL.
async fn write_new_host(store: &dyn StatusStore, host: &str) {
    let url = format!("https://{host}/");
    let write = StatusWrite {
        url: CrawlUrl::seed(match url::Url::parse(&url) {
            Ok(u) => u,
            Err(e) => panic!("{url}: {e}"),
        }),
        key: host.to_string(),
        status: Status::Discovered,
        next_fetch: Some(Utc::now()),
        queue: Default::default(),
    };
    if let Some(Err(e)) = store.store(vec![write]).await.into_iter().next() {
        panic!("writing the new host: {e}");
    }
}

/// After a stopped window: the URLs still pending and whatever the stopping runner still emits
/// are written back and acked, for two minutes at most.
async fn wind_down(
    running: JoinHandle<()>,
    mut tuples: mpsc::Receiver<Tuple>,
    mut pending: Vec<Tuple>,
    fetcher: &ImmediateAck,
) {
    if !pending.is_empty() {
        fetcher.write(std::mem::take(&mut pending));
    }
    let drain = async {
        while let Some(tuple) = tuples.recv().await {
            fetcher.write(vec![tuple]);
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(120), async {
        drain.await;
        let _ = running.await;
    })
    .await;
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
