//! The driver: a fixed number of fetches kept in flight through a [`Protocol`] over the post
//! pages, from the start of a warm-up to the end of a measured window, and what came back in the
//! window.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use squall::message::FetchOutcome;
use squall::model::Metadata;
use squall::protocol::Protocol;
use squall_bench_schema::browser::WindowRun;

use crate::cpu::{CpuReading, CpuUse};
use crate::site::Post;

/// The time every candidate gets.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Driven but not counted (the browser opens its tabs, connections are made).
    pub warmup: Duration,
    /// Counted: fetches that end within it.
    pub window: Duration,
}

/// What one fetch came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A 200 response, holding the post's text when the text is checked.
    Good,
    /// A 200 response without the post's text, though the text is checked: a render that missed.
    Miss,
    /// No 200 response (an error status, a failure, a render abandoned).
    Failed,
}

/// One fetch that ended.
struct Record {
    ended: Instant,
    latency: Duration,
    outcome: Outcome,
    has_text: bool,
}

/// What ended within a window.
#[derive(Debug, Clone)]
pub struct Window {
    /// Its length, seconds.
    pub seconds: f64,
    /// Good pages (see [`Outcome::Good`]).
    pub good: usize,
    /// 200 responses without the post's text, when it is checked.
    pub misses: usize,
    /// Fetches without a 200 response.
    pub failures: usize,
    /// 200 responses that held the post's text (checked or not: for HTTP, expected 0).
    pub with_text: usize,
    /// Latency of the good pages, milliseconds: median and 95th percentile.
    pub latency_ms: (f64, f64),
    /// Where the CPU went.
    pub cpu: CpuUse,
    /// From the window's end until the fetches in flight then had ended, seconds.
    pub drain_seconds: f64,
}

impl Window {
    /// Good pages per second.
    pub fn pages_per_second(&self) -> f64 {
        self.good as f64 / self.seconds
    }

    /// As the result file records it, with its place in the benchmark's `order`.
    pub fn record(&self, order: usize) -> WindowRun {
        WindowRun {
            order: order as u64,
            tabs: None,
            window_seconds: self.seconds,
            pages_per_second: self.pages_per_second(),
            pages: self.good as u64,
            misses: self.misses as u64,
            failures: self.failures as u64,
            with_post_text: self.with_text as u64,
            latency_p50_ms: self.latency_ms.0,
            latency_p95_ms: self.latency_ms.1,
            drain_seconds: self.drain_seconds,
            driver_cpu_cores: self.cpu.driver_cores,
            site_cpu_cores: self.cpu.site_cores,
            sampler_cpu_cores: self.cpu.sampler_cores,
            browser_cpu_cores: self.cpu.browser_cores,
            machine_busy: self.cpu.machine_busy,
            other_cpu_cores: self.cpu.other_cores,
            peak_memory_mib: None,
            memory_samples: None,
            restarts: None,
        }
    }
}

/// Keeps `in_flight` fetches of `posts` (round and round) going through `protocol` for the
/// warm-up and the window of `budget`; counts those that end within the window. With
/// `check_text`, a 200 response is good only if it holds its post's text. `browser_pid` names the
/// browser whose processes' CPU is read at both ends of the window (a restart within the window
/// makes that figure meaningless; restarts are reported beside it).
pub async fn drive<F, P>(
    protocol: Arc<dyn Protocol>,
    posts: Arc<Vec<Post>>,
    in_flight: usize,
    budget: Budget,
    check_text: bool,
    browser_pid: F,
) -> Window
where
    F: Fn() -> P,
    P: std::future::Future<Output = Option<u32>>,
{
    let started = Instant::now();
    let (from, to) = (
        started + budget.warmup,
        started + budget.warmup + budget.window,
    );
    let next = Arc::new(AtomicUsize::new(0));
    let records = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..in_flight)
        .map(|_| {
            let (protocol, posts) = (Arc::clone(&protocol), Arc::clone(&posts));
            let (next, records) = (Arc::clone(&next), Arc::clone(&records));
            tokio::spawn(async move {
                while Instant::now() < to {
                    let post = &posts[next.fetch_add(1, Ordering::Relaxed) % posts.len()];
                    let record = fetch(protocol.as_ref(), post, check_text).await;
                    if let Ok(mut records) = records.lock() {
                        records.push(record);
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep_until(from.into()).await;
    let before = CpuReading::now(browser_pid().await);
    tokio::time::sleep_until(to.into()).await;
    let after = CpuReading::now(browser_pid().await);
    let seconds = (Instant::now() - from).as_secs_f64();
    for worker in workers {
        if let Err(e) = worker.await {
            panic!("a fetch task failed: {e}");
        }
    }
    let drain_seconds = to.elapsed().as_secs_f64();
    let records = std::mem::take(&mut *records.lock().unwrap_or_else(|e| e.into_inner()));
    let counted: Vec<&Record> = records
        .iter()
        .filter(|r| r.ended >= from && r.ended <= to)
        .collect();
    let count = |outcome: Outcome| counted.iter().filter(|r| r.outcome == outcome).count();
    let mut latencies: Vec<f64> = counted
        .iter()
        .filter(|r| r.outcome == Outcome::Good)
        .map(|r| r.latency.as_secs_f64() * 1000.0)
        .collect();
    latencies.sort_by(f64::total_cmp);
    Window {
        seconds,
        good: count(Outcome::Good),
        misses: count(Outcome::Miss),
        failures: count(Outcome::Failed),
        with_text: counted.iter().filter(|r| r.has_text).count(),
        latency_ms: (percentile(&latencies, 0.5), percentile(&latencies, 0.95)),
        cpu: after.since(&before, seconds),
        drain_seconds,
    }
}

/// Fetches `post` and judges the answer.
async fn fetch(protocol: &dyn Protocol, post: &Post, check_text: bool) -> Record {
    let began = Instant::now();
    let (_, outcome) = protocol.fetch(&post.url, &Metadata::default()).await;
    let ended = Instant::now();
    let (outcome, has_text) = match outcome {
        FetchOutcome::Response(response) if response.status_code == 200 => {
            let body = String::from_utf8_lossy(&response.body);
            let has_text = body.contains(post.text.as_str());
            let outcome = if has_text || !check_text {
                Outcome::Good
            } else {
                Outcome::Miss
            };
            (outcome, has_text)
        }
        _ => (Outcome::Failed, false),
    };
    Record {
        ended,
        latency: ended - began,
        outcome,
        has_text,
    }
}

/// The `q` quantile of sorted `values` (nearest rank), 0 when there are none.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
