//! The fetcher bolt: per-queue politeness in front of the HTTP client.
//!
//! URLs wait in one queue per partition key. A queue hands out a URL only when fewer than
//! `threads_per_queue` of its fetches run and its delay has passed since the end of its last fetch;
//! queues take turns round-robin. The delay is `fetcher.server.delay`, replaced by the site's
//! robots.txt Crawl-delay when it has one (capped at `fetcher.max.crawl.delay`; with
//! `fetcher.server.delay.force`, never shorter than the server delay).

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
use crate::frontier::QueueReport;
use crate::message::{
    CrawlEvent, CrawlObserver, FetchFailure, FetchOutcome, FetchedPage, NoObserver, Tuple,
};
use crate::model::{Status, keys};

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
    /// A robots.txt Crawl-delay above this gives the URL ERROR (`fetcher.max.crawl.delay`)...
    pub max_crawl_delay: Duration,
    /// ...unless this is set: then the delay is capped at `max_crawl_delay` (`fetcher.max.crawl.delay.force`).
    pub max_crawl_delay_force: bool,
    /// Keep `server_delay` when robots.txt asks for a shorter one (`fetcher.server.delay.force`).
    pub server_delay_force: bool,
    /// Longest `Retry-After` hold honoured on 429 and 503 (`fetcher.max.retry.after`).
    pub max_retry_after: Duration,
    /// Fetches per second over all queues; `None`: no global cap (`fetcher.max.fetches.per.second`).
    pub max_fetches_per_second: Option<std::num::NonZeroU32>,
    /// On stop, how long fetches already started may take to finish before they are cut short.
    pub stop_grace: Duration,
}

impl Default for FetcherSettings {
    fn default() -> Self {
        FetcherSettings {
            server_delay: Duration::from_secs(1),
            min_delay: Duration::ZERO,
            threads_per_queue: 1,
            threads_total: 50,
            max_queued: 2000,
            max_crawl_delay: Duration::from_secs(30),
            max_crawl_delay_force: false,
            server_delay_force: false,
            max_retry_after: Duration::from_secs(300),
            max_fetches_per_second: None,
            stop_grace: Duration::from_secs(10),
        }
    }
}

impl FetcherSettings {
    /// The delay a queue keeps between fetches, given its robots.txt Crawl-delay.
    pub fn queue_delay(&self, crawl_delay: Option<Duration>) -> Duration {
        let base = if self.threads_per_queue > 1 {
            self.min_delay
        } else {
            self.server_delay
        };
        match crawl_delay.map(|robots| robots.min(self.max_crawl_delay)) {
            None => base,
            Some(robots) if self.server_delay_force => robots.max(base),
            Some(robots) => robots,
        }
    }
}

type GlobalLimiter = governor::DefaultDirectRateLimiter;

/// What every fetch task shares.
struct FetchContext {
    http: HttpClient,
    robots: Option<RobotsCache>,
    settings: FetcherSettings,
    limiter: Option<GlobalLimiter>,
    observer: Arc<dyn CrawlObserver>,
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
    /// `None` when the fetch was fenced at the last moment (its URL was failed back unfetched).
    page: Option<FetchedPage>,
    contacted_server: bool,
    crawl_delay: Option<Duration>,
    hold: Option<Duration>,
}

/// The fetcher stage.
pub struct FetcherBolt {
    http: HttpClient,
    robots: Option<RobotsCache>,
    settings: FetcherSettings,
    observer: Arc<dyn CrawlObserver>,
}

impl FetcherBolt {
    /// A fetcher using `http`, asking `robots` (None: robots.txt ignored) before each fetch.
    pub fn new(http: HttpClient, robots: Option<RobotsCache>, settings: FetcherSettings) -> Self {
        FetcherBolt {
            http,
            robots,
            settings,
            observer: Arc::new(NoObserver),
        }
    }

    /// Tells `observer` of each fetch attempt as it completes ([`CrawlEvent::Fetched`]).
    pub fn observed_by(mut self, observer: Arc<dyn CrawlObserver>) -> Self {
        self.observer = observer;
        self
    }

    /// Runs until the input closes and every queue is empty, or until `stop`: then queued URLs are
    /// failed back to the spout, and fetches already started finish and are passed on.
    pub async fn run(
        self,
        mut input: mpsc::Receiver<Tuple>,
        out: mpsc::Sender<FetchedPage>,
        stop: CancellationToken,
    ) {
        let settings = self.settings.clone();
        let shared = Arc::new(FetchContext {
            http: self.http,
            robots: self.robots,
            limiter: self
                .settings
                .max_fetches_per_second
                .map(|rate| governor::RateLimiter::direct(governor::Quota::per_second(rate))),
            settings: self.settings,
            observer: self.observer,
        });
        let mut queues: HashMap<String, HostQueue> = HashMap::new();
        let mut ring: VecDeque<String> = VecDeque::new();
        let mut running: JoinSet<Completed> = JoinSet::new();
        // Which queue each running fetch belongs to, so that even a fetch task that dies frees its slot.
        let mut running_keys: HashMap<tokio::task::Id, String> = HashMap::new();
        let mut queued = 0usize;
        let mut input_open = true;
        let mut last_sweep = Instant::now();

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
                        // Fencing: a queue whose lease this process lost is fetched by its new
                        // owner; what waits here for it goes back to the frontier unfetched.
                        if !tuple.hints.may_fetch() {
                            debug!(key = %key, url = %tuple.url.url, "lease lost; not fetched");
                            metrics::counter!("squall_fetch_fenced_total").increment(1);
                            tuple.ack.fail(format!(
                                "the lease on queue {key} was lost before the fetch; left due"
                            ));
                            if !queue.items.is_empty() {
                                ring.push_back(key);
                                wake = Some(now);
                            }
                            continue;
                        }
                        queue.in_flight += 1;
                        tuple.ack.started();
                        let shared = Arc::clone(&shared);
                        let task_key = key.clone();
                        let handle =
                            running.spawn(async move { fetch_one(&shared, task_key, tuple).await });
                        running_keys.insert(handle.id(), key.clone());
                        // A queue allowing several fetches at once may hand out another right away.
                        if queue.in_flight < settings.threads_per_queue && !queue.items.is_empty() {
                            wake = Some(now);
                        }
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
                        // A delay another process learned for this queue (carried by a shared frontier).
                        if let Some(delay) = tuple.hints.crawl_delay {
                            queue.crawl_delay = Some(queue.crawl_delay.map_or(delay, |d| d.max(delay)));
                        }
                        if queue.items.is_empty() {
                            ring.push_back(key);
                        }
                        queue.items.push_back(tuple);
                        queued += 1;
                    }
                    None => input_open = false,
                },
                Some(done) = running.join_next_with_id(), if !running.is_empty() => {
                    let done = match done {
                        Ok((id, done)) => {
                            running_keys.remove(&id);
                            done
                        }
                        Err(error) => {
                            // The task's tuple was dropped with it, which failed it back to the spout.
                            tracing::error!(%error, "a fetch task died");
                            if let Some(queue) = running_keys
                                .remove(&error.id())
                                .and_then(|key| queues.get_mut(&key))
                            {
                                queue.in_flight = queue.in_flight.saturating_sub(1);
                            }
                            continue;
                        }
                    };
                    let finished = Instant::now();
                    if let Some(queue) = queues.get_mut(&done.key) {
                        queue.in_flight = queue.in_flight.saturating_sub(1);
                        if done.crawl_delay.is_some() {
                            queue.crawl_delay = done.crawl_delay;
                        }
                        if done.contacted_server {
                            let delay = settings.queue_delay(queue.crawl_delay);
                            let hold = done.hold.unwrap_or_default().max(delay);
                            let until = finished
                                .checked_add(hold)
                                .unwrap_or(finished + settings.max_retry_after);
                            queue.next_allowed = queue.next_allowed.max(until);
                        }
                    }
                    // Once a second, forget idle queues whose delay has passed: memory stays bounded
                    // by the hosts being crawled, not by every host ever seen.
                    if finished.duration_since(last_sweep) >= Duration::from_secs(1) {
                        queues.retain(|_, q| {
                            !q.items.is_empty() || q.in_flight > 0 || q.next_allowed > finished
                        });
                        last_sweep = finished;
                    }
                    let Some(page) = done.page else { continue };
                    if out.send(page).await.is_err() {
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
        // Fetches already started may finish within the grace period; after it they are cut short,
        // and their URLs fail back to the spout (they stay due in the frontier).
        let grace = tokio::time::sleep(settings.stop_grace);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                done = running.join_next() => match done {
                    Some(Ok(done)) => {
                        if let Some(page) = done.page {
                            let _ = out.send(page).await;
                        }
                    }
                    Some(Err(_)) => {}
                    None => break,
                },
                _ = &mut grace => {
                    info!(cut_short = running.len(), "fetches still running at the end of the grace period");
                    running.abort_all();
                    while running.join_next().await.is_some() {}
                    break;
                }
            }
        }
    }
}

async fn fetch_one(context: &FetchContext, key: String, tuple: Tuple) -> Completed {
    let settings = &context.settings;
    let mut crawl_delay = None;
    let mut sitemaps = Vec::new();
    if let Some(message) = context.http.refusal(&tuple.url.url) {
        return refused(
            key,
            tuple,
            FetchFailure::PrivateAddress,
            message,
            Status::Error,
            Vec::new(),
            None,
        );
    }
    if let Some(robots) = &context.robots {
        let lookup = robots.rules_for(&tuple.url.url).await;
        if lookup.fresh {
            sitemaps = lookup.rules.sitemaps();
        }
        crawl_delay = lookup.rules.crawl_delay();
        let refusal = if let Some((reason, is_final)) = lookup.rules.refusal(&tuple.url.url) {
            // An unreadable robots.txt refuses only for now: FETCH_ERROR, to be tried again.
            let status = if is_final {
                Status::Error
            } else {
                Status::FetchError
            };
            Some((FetchFailure::RobotsTxt, reason, status))
        } else if let Some(delay) = crawl_delay.filter(|d| *d > settings.max_crawl_delay) {
            (!settings.max_crawl_delay_force).then(|| {
                (
                    FetchFailure::CrawlDelay,
                    format!(
                        "robots.txt Crawl-delay of {delay:?} exceeds fetcher.max.crawl.delay ({:?})",
                        settings.max_crawl_delay
                    ),
                    Status::Error,
                )
            })
        } else {
            None
        };
        if let Some((cause, message, status)) = refusal {
            return refused(key, tuple, cause, message, status, sitemaps, crawl_delay);
        }
    }
    if let Some(limiter) = &context.limiter {
        limiter.until_ready().await;
    }
    // Fencing again, just before the request: the lease was valid when the URL left its queue,
    // but it may have lapsed since (a robots.txt fetch, the global rate limit, a paused process).
    if !tuple.hints.may_fetch() {
        debug!(key = %key, url = %tuple.url.url, "lease lost before the request; not fetched");
        metrics::counter!("squall_fetch_fenced_total").increment(1);
        tuple.ack.fail(format!(
            "the lease on queue {key} was lost before the request; left due"
        ));
        return Completed {
            key,
            page: None,
            contacted_server: false,
            crawl_delay,
            hold: None,
        };
    }
    let started = std::time::Instant::now();
    let (record, outcome) = context
        .http
        .fetch(&tuple.url.url, &tuple.url.metadata)
        .await;
    metrics::histogram!("squall_fetch_seconds").record(started.elapsed().as_secs_f64());
    metrics::counter!("squall_fetch_bytes_total").increment(record.bytes);
    metrics::counter!("squall_fetch_total").increment(1);
    context.observer.on_event(&CrawlEvent::Fetched {
        url: tuple.url.url.to_string(),
        key: key.clone(),
        fetch: record.clone(),
    });
    let hold = match &outcome {
        FetchOutcome::Response(response) if matches!(response.status_code, 429 | 503) => response
            .retry_after
            .map(|wait| wait.min(settings.max_retry_after)),
        _ => None,
    };
    let blocked_until = hold.map(|hold| {
        debug!(key = %key, ?hold, "the server asked us to wait (Retry-After)");
        chrono::Utc::now() + chrono::TimeDelta::from_std(hold).unwrap_or_default()
    });
    Completed {
        key,
        page: Some(FetchedPage {
            tuple,
            record: Some(record),
            outcome,
            sitemaps,
            queue: QueueReport {
                blocked_until,
                crawl_delay,
            },
        }),
        contacted_server: true,
        crawl_delay,
        hold,
    }
}

/// A URL that may not be fetched: a status with the cause, and no request made.
fn refused(
    key: String,
    mut tuple: Tuple,
    cause: FetchFailure,
    message: String,
    status: Status,
    sitemaps: Vec<url::Url>,
    crawl_delay: Option<Duration>,
) -> Completed {
    tuple.url.metadata.set(keys::ERROR_CAUSE, cause.as_str());
    Completed {
        key,
        page: Some(FetchedPage {
            tuple,
            record: None,
            outcome: FetchOutcome::Failed {
                status,
                cause,
                message,
            },
            sitemaps,
            queue: QueueReport {
                blocked_until: None,
                crawl_delay,
            },
        }),
        contacted_server: false,
        crawl_delay,
        hold: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::HttpSettings;
    use crate::frontier::QueueHints;
    use crate::message::AckHandle;
    use crate::model::CrawlUrl;
    use axum::http::{StatusCode, Uri, header};
    use axum::response::IntoResponse;

    async fn serve(uri: Uri) -> axum::response::Response {
        match uri.path() {
            "/robots.txt" => "User-agent: *\nCrawl-delay: 2\n".into_response(),
            "/busy" => {
                (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "60")]).into_response()
            }
            _ => "ok".into_response(),
        }
    }

    /// Fetches each URL (one per host, so no politeness wait) and returns the pages by path.
    async fn fetch_all(paths: &[(&str, &str)]) -> HashMap<String, FetchedPage> {
        let paths: Vec<(&str, &str, QueueHints)> = paths
            .iter()
            .map(|(host, path)| (*host, *path, QueueHints::default()))
            .collect();
        fetch_with_hints(&paths).await.0
    }

    /// Fetches each URL with its queue hints; returns the pages by path, and the URLs failed back
    /// to the spout with their reasons.
    async fn fetch_with_hints(
        paths: &[(&str, &str, QueueHints)],
    ) -> (HashMap<String, FetchedPage>, Vec<(String, String)>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, axum::Router::new().fallback(serve)).await;
        });
        let http_settings = HttpSettings {
            resolve: paths
                .iter()
                .map(|(host, _, _)| (host.to_string(), addr))
                .collect(),
            ..HttpSettings::default()
        };
        let http = HttpClient::new(&http_settings).expect("client");
        let robots = RobotsCache::new(
            &http_settings,
            "squall",
            Duration::from_secs(60),
            Duration::from_secs(60),
        )
        .expect("robots");
        let fetcher = FetcherBolt::new(http, Some(robots), FetcherSettings::default());
        let (tuples, input) = mpsc::channel(paths.len());
        let (out, mut pages) = mpsc::channel(paths.len());
        let (acks, mut acked) = mpsc::unbounded_channel();
        for (host, path, hints) in paths {
            let url = CrawlUrl::new(
                url::Url::parse(&format!("http://{host}:{}{path}", addr.port())).expect("url"),
            );
            tuples
                .send(Tuple {
                    ack: AckHandle::new(url.clone(), acks.clone()),
                    url,
                    key: host.to_string(),
                    hints: hints.clone(),
                })
                .await
                .expect("send");
        }
        drop(tuples);
        fetcher.run(input, out, CancellationToken::new()).await;
        let mut by_path = HashMap::new();
        while let Some(page) = pages.recv().await {
            by_path.insert(page.tuple.url.url.path().to_string(), page);
        }
        drop(acks);
        let mut failed = Vec::new();
        while let Ok(message) = acked.try_recv() {
            if let crate::message::AckMessage::Failed { url, reason } = message {
                failed.push((url.url.path().to_string(), reason));
            }
        }
        (by_path, failed)
    }

    #[tokio::test]
    async fn a_url_whose_lease_was_lost_is_failed_back_unfetched() {
        let valid =
            crate::frontier::Lease::until(std::time::Instant::now() + Duration::from_secs(60));
        let lost =
            crate::frontier::Lease::until(std::time::Instant::now() + Duration::from_secs(60));
        lost.revoke();
        let hints = |lease: &crate::frontier::Lease| QueueHints {
            crawl_delay: None,
            lease: Some(lease.clone()),
        };
        let (pages, failed) = fetch_with_hints(&[
            ("held.test", "/held", hints(&valid)),
            ("lost.test", "/lost", hints(&lost)),
        ])
        .await;
        assert!(pages.contains_key("/held"), "fetched under a valid lease");
        assert!(
            !pages.contains_key("/lost"),
            "not fetched once the lease was lost"
        );
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].0, "/lost");
        assert!(failed[0].1.contains("lease"), "{failed:?}");
    }

    #[tokio::test]
    async fn a_lease_that_lapses_before_the_request_fences_the_fetch() {
        // robots.txt answers slowly: the lease, valid when the URL leaves its queue, runs out
        // while the fetcher waits for it.
        let pages = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = pages.clone();
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let counted = counted.clone();
            async move {
                if uri.path() == "/robots.txt" {
                    tokio::time::sleep(Duration::from_millis(400)).await;
                    return "User-agent: *\nAllow: /\n".into_response();
                }
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                "page".into_response()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let http_settings = HttpSettings::default();
        let http = HttpClient::new(&http_settings).expect("client");
        let robots = RobotsCache::new(
            &http_settings,
            "squall",
            Duration::from_secs(60),
            Duration::from_secs(60),
        )
        .expect("robots");
        let fetcher = FetcherBolt::new(http, Some(robots), FetcherSettings::default());
        let (tuples, input) = mpsc::channel(1);
        let (out, mut fetched) = mpsc::channel(1);
        let (acks, mut acked) = mpsc::unbounded_channel();
        let url = CrawlUrl::new(
            url::Url::parse(&format!("http://127.0.0.1:{}/page", addr.port())).expect("url"),
        );
        let lease =
            crate::frontier::Lease::until(std::time::Instant::now() + Duration::from_millis(150));
        tuples
            .send(Tuple {
                ack: AckHandle::new(url.clone(), acks),
                url,
                key: "127.0.0.1".to_string(),
                hints: crate::frontier::QueueHints {
                    crawl_delay: None,
                    lease: Some(lease),
                },
            })
            .await
            .expect("send");
        drop(tuples);
        fetcher.run(input, out, CancellationToken::new()).await;
        assert!(fetched.recv().await.is_none(), "nothing goes to the parser");
        assert_eq!(
            pages.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "the page was not requested"
        );
        let mut failed = false;
        while let Ok(message) = acked.try_recv() {
            failed |= matches!(message, crate::message::AckMessage::Failed { .. });
        }
        assert!(failed, "the URL was failed back");
    }

    #[tokio::test]
    async fn retry_after_and_crawl_delay_are_reported_typed_not_in_metadata() {
        let before = chrono::Utc::now();
        let pages = fetch_all(&[("busy.test", "/busy"), ("ok.test", "/ok")]).await;
        let busy = &pages["/busy"];
        let until = busy.queue.blocked_until.expect("a Retry-After hold");
        assert!(
            until >= before + chrono::TimeDelta::seconds(59)
                && until <= chrono::Utc::now() + chrono::TimeDelta::seconds(60),
            "held until {until}, 60 s after {before}"
        );
        assert_eq!(busy.queue.crawl_delay, Some(Duration::from_secs(2)));
        let ok = &pages["/ok"];
        assert_eq!(
            ok.queue,
            QueueReport {
                blocked_until: None,
                crawl_delay: Some(Duration::from_secs(2)),
            }
        );
        for page in pages.values() {
            assert!(
                page.tuple.url.metadata.iter().next().is_none(),
                "nothing about the queue in the metadata: {:?}",
                page.tuple.url.metadata
            );
        }
    }
}
