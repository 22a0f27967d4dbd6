//! The fetcher bolt: per-queue politeness in front of the HTTP client.
//!
//! URLs wait in one queue per partition key. A queue hands out a URL only when fewer than
//! `threads_per_queue` of its fetches run and its delay has passed since the end of its last fetch;
//! queues take turns round-robin. The delay is `fetcher.server.delay`, or the site's robots.txt
//! Crawl-delay when that is longer.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use super::http::HttpClient;
use super::robots::RobotsCache;
use crate::model::{Status, keys};
use crate::topology::{FetchOutcome, FetchedPage, Tuple};

/// Politeness and concurrency settings of the fetcher.
#[derive(Debug, Clone, PartialEq)]
pub struct FetcherSettings {
    /// Time from the end of one fetch to the start of the next on a queue (`fetcher.server.delay`).
    pub server_delay: Duration,
    /// The delay used instead when a queue allows several fetches at once (`fetcher.server.min.delay`).
    pub min_delay: Duration,
    /// Fetches at once on one queue (`fetcher.threads.per.queue`).
    pub threads_per_queue: usize,
    /// Fetches at once overall (`fetcher.threads.number`).
    pub threads_total: usize,
    /// URLs waiting in queues before the fetcher stops taking more (`fetcher.max.urls.in.queues`).
    pub max_queued: usize,
    /// A robots.txt Crawl-delay above this gives the URL ERROR (`fetcher.max.crawl.delay`).
    pub max_crawl_delay: Duration,
}

struct HostQueue {
    items: VecDeque<Tuple>,
    in_flight: usize,
    next_allowed: Instant,
    crawl_delay: Option<Duration>,
}

impl HostQueue {
    fn new() -> Self {
        HostQueue {
            items: VecDeque::new(),
            in_flight: 0,
            next_allowed: Instant::now(),
            crawl_delay: None,
        }
    }
}

struct Completed {
    key: String,
    page: FetchedPage,
    contacted_server: bool,
    crawl_delay: Option<Duration>,
}

/// The fetcher stage.
pub struct FetcherBolt {
    http: HttpClient,
    robots: Option<RobotsCache>,
    settings: FetcherSettings,
}

impl FetcherBolt {
    /// A fetcher using `http`, asking `robots` (None: robots.txt ignored) before each fetch.
    pub fn new(http: HttpClient, robots: Option<RobotsCache>, settings: FetcherSettings) -> Self {
        FetcherBolt {
            http,
            robots,
            settings,
        }
    }

    /// Runs until the input closes and every queue is empty, or until `stop`: then queued URLs are
    /// failed back to the spout, and fetches already started finish and are passed on.
    pub async fn run(
        self,
        mut input: mpsc::Receiver<Tuple>,
        out: mpsc::Sender<FetchedPage>,
        stop: CancellationToken,
    ) {
        let shared = Arc::new((self.http, self.robots, self.settings.max_crawl_delay));
        let settings = self.settings;
        let mut queues: HashMap<String, HostQueue> = HashMap::new();
        let mut ring: VecDeque<String> = VecDeque::new();
        let mut running: JoinSet<Completed> = JoinSet::new();
        let mut queued = 0usize;
        let mut input_open = true;

        loop {
            if stop.is_cancelled() {
                break;
            }
            // Hand out every URL whose queue allows it, round-robin.
            let now = Instant::now();
            let mut wake: Option<Instant> = None;
            for _ in 0..ring.len() {
                if running.len() >= settings.threads_total {
                    break;
                }
                let Some(key) = ring.pop_front() else { break };
                let Some(queue) = queues.get_mut(&key) else {
                    continue;
                };
                if queue.in_flight < settings.threads_per_queue && queue.next_allowed <= now {
                    if let Some(tuple) = queue.items.pop_front() {
                        queued -= 1;
                        queue.in_flight += 1;
                        let shared = Arc::clone(&shared);
                        let key = key.clone();
                        running.spawn(async move {
                            let (http, robots, max_crawl_delay) = &*shared;
                            fetch_one(http, robots.as_ref(), *max_crawl_delay, key, tuple).await
                        });
                    }
                } else if queue.in_flight < settings.threads_per_queue {
                    wake = Some(wake.map_or(queue.next_allowed, |w| w.min(queue.next_allowed)));
                }
                if !queue.items.is_empty() {
                    ring.push_back(key);
                }
            }
            metrics::gauge!("squall_fetcher_queued").set(queued as f64);
            metrics::gauge!("squall_fetcher_queues").set(queues.len() as f64);
            metrics::gauge!("squall_fetcher_active").set(running.len() as f64);

            if !input_open && queued == 0 && running.is_empty() {
                break;
            }
            let can_take = input_open && queued < settings.max_queued;
            let sleep_until = wake.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                _ = stop.cancelled() => break,
                received = input.recv(), if can_take => match received {
                    Some(tuple) => {
                        let key = tuple.key.clone();
                        let queue = queues.entry(key.clone()).or_insert_with(HostQueue::new);
                        if queue.items.is_empty() {
                            ring.push_back(key);
                        }
                        queue.items.push_back(tuple);
                        queued += 1;
                    }
                    None => input_open = false,
                },
                Some(done) = running.join_next(), if !running.is_empty() => {
                    let Ok(done) = done else { continue };
                    let finished = Instant::now();
                    if let Some(queue) = queues.get_mut(&done.key) {
                        queue.in_flight = queue.in_flight.saturating_sub(1);
                        if done.crawl_delay.is_some() {
                            queue.crawl_delay = done.crawl_delay;
                        }
                        if done.contacted_server {
                            let base = if settings.threads_per_queue > 1 {
                                settings.min_delay
                            } else {
                                settings.server_delay
                            };
                            let delay = queue.crawl_delay.map_or(base, |d| d.max(base));
                            queue.next_allowed = finished + delay;
                        }
                    }
                    // Forget idle queues whose delay has passed: memory stays bounded by active hosts.
                    queues.retain(|_, q| {
                        !q.items.is_empty() || q.in_flight > 0 || q.next_allowed > finished
                    });
                    if out.send(done.page).await.is_err() {
                        debug!("the parser is gone; the fetcher stops");
                        break;
                    }
                }
                _ = tokio::time::sleep_until(sleep_until) => {}
            }
        }

        // Stopping: what waits is failed back (it stays due in the frontier), what runs finishes.
        input.close();
        let mut dropped = queued;
        while let Ok(tuple) = input.try_recv() {
            tuple.ack.fail("fetcher stopped before fetching it");
            dropped += 1;
        }
        for (_, queue) in queues.drain() {
            for tuple in queue.items {
                tuple.ack.fail("fetcher stopped before fetching it");
            }
        }
        info!(
            returned = dropped,
            finishing = running.len(),
            "fetcher stopping"
        );
        while let Some(done) = running.join_next().await {
            if let Ok(done) = done {
                let _ = out.send(done.page).await;
            }
        }
    }
}

async fn fetch_one(
    http: &HttpClient,
    robots: Option<&RobotsCache>,
    max_crawl_delay: Duration,
    key: String,
    mut tuple: Tuple,
) -> Completed {
    let mut crawl_delay = None;
    if let Some(robots) = robots {
        let rules = robots.rules_for(&tuple.url.url).await;
        crawl_delay = rules.crawl_delay();
        let refusal = if !rules.allowed(&tuple.url.url) {
            Some(("robots.txt", "disallowed by robots.txt".to_string()))
        } else if crawl_delay.is_some_and(|d| d > max_crawl_delay) {
            Some((
                "crawl_delay",
                format!(
                    "robots.txt Crawl-delay {:?} exceeds fetcher.max.crawl.delay {:?}",
                    crawl_delay.unwrap_or_default(),
                    max_crawl_delay
                ),
            ))
        } else {
            None
        };
        if let Some((cause, message)) = refusal {
            tuple.url.metadata.set(keys::ERROR_CAUSE, cause);
            return Completed {
                key,
                page: FetchedPage {
                    tuple,
                    record: None,
                    outcome: FetchOutcome::Failed {
                        status: Status::Error,
                        cause: cause.to_string(),
                        message,
                    },
                },
                contacted_server: false,
                crawl_delay: None,
            };
        }
    }
    let started = std::time::Instant::now();
    let (record, outcome) = http.fetch(&tuple.url.url).await;
    metrics::histogram!("squall_fetch_seconds").record(started.elapsed().as_secs_f64());
    metrics::counter!("squall_fetch_bytes_total").increment(record.bytes);
    metrics::counter!("squall_fetch_total").increment(1);
    Completed {
        key,
        page: FetchedPage {
            tuple,
            record: Some(record),
            outcome,
        },
        contacted_server: true,
        crawl_delay,
    }
}
