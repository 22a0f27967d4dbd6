//! The fetcher bolt: per-queue politeness in front of the protocols.
//!
//! URLs wait in one queue per partition key ([`HostQueues`]). A queue hands out a URL only when
//! fewer than `threads_per_queue` of its fetches run and its delay has passed since the end of its
//! last fetch; queues take turns round-robin. The delay is `fetcher.server.delay`, replaced by the
//! site's robots.txt Crawl-delay when it has one (capped at `fetcher.max.crawl.delay`; with
//! `fetcher.server.delay.force`, never shorter than the server delay), kept as the queue's pace
//! sets it under `fetcher.pace.policy` (longer while its server pushes back; see
//! [`pace`](super::pace)). Each URL is then checked and fetched in a task of its own
//! ([`fetch_one`]); what its queue's pace learned goes to the frontier with the page's status.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use super::board::QueueBoard;
use super::inflight::{InFlight, Joined};
use super::partition::Partitioner;
use super::queue_keys::{QueueKeys, unresolved};
use super::queues::{HostQueues, Learned};
use super::settings::FetcherSettings;
use super::task::{FetchContext, fetch_one};
use crate::message::{CrawlObserver, FetchedPage, NoObserver, Tuple};
use crate::protocol::{Protocols, RobotsCache};

/// How long the loop sleeps when nothing but new URLs or a completion can wake it.
const IDLE_WAKE: Duration = Duration::from_secs(3600);

/// Why a URL that waited is failed back on stop.
const STOPPED: &str = "fetcher stopped before fetching it";

/// The fetcher stage.
pub struct FetcherBolt {
    protocols: Protocols,
    robots: Option<RobotsCache>,
    settings: FetcherSettings,
    observer: Arc<dyn CrawlObserver>,
    partitioner: Option<Partitioner>,
    board: Option<QueueBoard>,
}

impl FetcherBolt {
    /// A fetcher using `protocols` by URL scheme (an [`HttpClient`](crate::protocol::HttpClient) serves
    /// `http` and `https`), asking `robots` (None: robots.txt ignored) before each HTTP(S) fetch.
    pub fn new(
        protocols: impl Into<Protocols>,
        robots: Option<RobotsCache>,
        settings: FetcherSettings,
    ) -> Self {
        FetcherBolt {
            protocols: protocols.into(),
            robots,
            settings,
            observer: Arc::new(NoObserver),
            partitioner: None,
            board: None,
        }
    }

    /// Queues URLs by `partitioner`'s key when it is byIP (the address each host resolves to)
    /// instead of by the key the frontier gave them; other modes keep the frontier's key.
    pub fn queued_by(mut self, partitioner: Partitioner) -> Self {
        self.partitioner = Some(partitioner);
        self
    }

    /// Tells `observer` of each fetch attempt as it completes ([`CrawlEvent::Fetched`]).
    ///
    /// [`CrawlEvent::Fetched`]: crate::message::CrawlEvent::Fetched
    pub fn observed_by(mut self, observer: Arc<dyn CrawlObserver>) -> Self {
        self.observer = observer;
        self
    }

    /// Publishes the queues on `board` whenever a live view asks for them ([`QueueBoard`]).
    pub fn published_on(mut self, board: QueueBoard) -> Self {
        self.board = Some(board);
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
        let board = self.board.clone();
        let mut keys = QueueKeys::new(self.partitioner.clone());
        let context = Arc::new(self.into_context());
        let mut queues = HostQueues::new(settings.clone());
        let mut running = InFlight::default();
        let mut input_open = true;
        while !stop.is_cancelled() {
            let wake = start_ready(&context, &mut queues, &mut running);
            record_gauges(&queues, &running);
            publish(board.as_ref(), &queues, &running);
            if !input_open && queues.queued() == 0 && running.is_empty() && keys.pending() == 0 {
                break;
            }
            let can_take = input_open && queues.has_room_for(keys.pending());
            let sleep_until = wake.unwrap_or_else(|| Instant::now() + IDLE_WAKE);
            tokio::select! {
                _ = stop.cancelled() => break,
                // A live view asked for the queues: published at the top of the loop.
                _ = asked(board.as_ref()) => {}
                received = input.recv(), if can_take => match received {
                    Some(tuple) => {
                        if let Some((key, tuple)) = keys.admit(tuple) {
                            queues.enqueue_on(key, tuple);
                        }
                    }
                    None => input_open = false,
                },
                Some((looked, tuple)) = keys.looked_up(), if keys.pending() > 0 => match looked {
                    Ok(key) => queues.enqueue_on(key, tuple),
                    Err(error) => {
                        if out.send(unresolved(tuple, &error)).await.is_err() {
                            debug!("the parser is gone; the fetcher stops");
                            break;
                        }
                    }
                },
                Some(joined) = running.join_next(), if !running.is_empty() => {
                    let Some(page) = completed(&mut queues, joined) else { continue };
                    if out.send(page).await.is_err() {
                        debug!("the parser is gone; the fetcher stops");
                        break;
                    }
                }
                _ = tokio::time::sleep_until(sleep_until) => {}
            }
        }
        let looking_up = keys.abandon();
        if looking_up > 0 {
            info!(
                looking_up,
                "fetcher stopping: host lookups abandoned, their URLs left due"
            );
        }
        stop_fetching(input, queues, running, &out, settings.stop_grace).await;
    }

    fn into_context(self) -> FetchContext {
        let limiter = self
            .settings
            .max_fetches_per_second
            .map(|rate| governor::RateLimiter::direct(governor::Quota::per_second(rate)));
        FetchContext {
            protocols: self.protocols,
            robots: self.robots,
            settings: self.settings,
            limiter,
            observer: self.observer,
        }
    }
}

/// Starts a fetch for every URL whose queue allows it, within the free threads; returns when a
/// waiting queue may hand out its next URL.
fn start_ready(
    context: &Arc<FetchContext>,
    queues: &mut HostQueues,
    running: &mut InFlight,
) -> Option<Instant> {
    let slots = context
        .settings
        .threads_number
        .saturating_sub(running.len());
    let ready = queues.take_ready(Instant::now(), slots);
    for (key, tuple) in ready.fetches {
        tuple.ack.started();
        let context = Arc::clone(context);
        let task_key = key.clone();
        running.spawn(
            key,
            async move { fetch_one(&context, task_key, tuple).await },
        );
    }
    ready.wake
}

/// Ends a fetch on its queue; the page to pass on, if there is one.
fn completed(queues: &mut HostQueues, joined: Joined) -> Option<FetchedPage> {
    match joined {
        Joined::Done(mut done) => {
            let finished = Instant::now();
            let news = queues.complete(&done.key, &done.learned, finished);
            queues.sweep(finished);
            if let Some(page) = done.page.as_mut() {
                // What the queue's pace learned goes to the frontier with the page's status.
                let report = &mut page.queue;
                report.pace = news.report.or(report.pace);
                let blocked = news.blocked_until_wall(finished, chrono::Utc::now());
                report.blocked_until = report.blocked_until.max(blocked);
            }
            done.page
        }
        Joined::Died(key) => {
            if let Some(key) = key {
                queues.complete(&key, &Learned::default(), Instant::now());
            }
            None
        }
    }
}

/// Publishes the queues on the board, when there is one and a reader asked.
fn publish(board: Option<&QueueBoard>, queues: &HostQueues, running: &InFlight) {
    let Some(board) = board else { return };
    if board.wanted() {
        let now = Instant::now();
        board.publish(queues.view(now, running.len(), board.rows()), now);
    }
}

/// Resolves when a reader of `board` asks for the queues; never without a board.
async fn asked(board: Option<&QueueBoard>) {
    match board {
        Some(board) => board.asked().await,
        None => std::future::pending().await,
    }
}

fn record_gauges(queues: &HostQueues, running: &InFlight) {
    metrics::gauge!("squall_fetcher_queued").set(queues.queued() as f64);
    metrics::gauge!("squall_fetcher_queues").set(queues.len() as f64);
    metrics::gauge!("squall_fetcher_active").set(running.len() as f64);
}

/// Stopping: what waits is failed back (it stays due in the frontier), what runs may finish within
/// `grace`.
async fn stop_fetching(
    mut input: mpsc::Receiver<Tuple>,
    mut queues: HostQueues,
    running: InFlight,
    out: &mpsc::Sender<FetchedPage>,
    grace: Duration,
) {
    input.close();
    let mut returned = 0usize;
    while let Ok(tuple) = input.try_recv() {
        tuple.ack.fail(STOPPED);
        returned += 1;
    }
    for tuple in queues.drain() {
        tuple.ack.fail(STOPPED);
        returned += 1;
    }
    info!(returned, finishing = running.len(), "fetcher stopping");
    running.finish(out, grace).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::QueueHints;
    use crate::message::{AckHandle, FetchFailure, FetchOutcome};
    use crate::model::CrawlUrl;
    use crate::model::Status;
    use crate::protocol::{HttpClient, HttpContext, HttpSettings, RobotsSettings};
    use axum::http::{StatusCode, Uri, header};
    use axum::response::IntoResponse;
    use std::collections::HashMap;

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

    /// A fetcher with the default settings that reads robots.txt, over a client of the default
    /// keys in `context`.
    fn fetcher_with_robots(context: &HttpContext) -> FetcherBolt {
        let config = HttpSettings::default();
        let http = HttpClient::new(&config, context).expect("client");
        let robots = RobotsCache::new(
            &config,
            context,
            "squall",
            &RobotsSettings {
                cache_ttl: Duration::from_secs(60),
                error_cache_ttl: Duration::from_secs(60),
                ..RobotsSettings::default()
            },
        )
        .expect("robots");
        FetcherBolt::new(http, Some(robots), FetcherSettings::default())
    }

    /// Fetches each URL with its queue hints; returns the pages by path, and the URLs failed back
    /// to the spout with their reasons.
    async fn fetch_with_hints(
        paths: &[(&str, &str, QueueHints)],
    ) -> (HashMap<String, FetchedPage>, Vec<(String, String)>) {
        let addr = squall_testsite::serve_router(axum::Router::new().fallback(serve))
            .await
            .expect("a loopback port");
        let context = HttpContext {
            resolve: paths
                .iter()
                .map(|(host, _, _)| (host.to_string(), addr))
                .collect(),
            ..HttpContext::new(&HttpSettings::default())
        };
        let fetcher = fetcher_with_robots(&context);
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
            lease: Some(lease.clone()),
            ..QueueHints::default()
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
        let addr = squall_testsite::serve_router(app)
            .await
            .expect("a loopback port");
        let fetcher = fetcher_with_robots(&HttpContext {
            trusted_hosts: crate::protocol::TrustedHosts::of(["127.0.0.1"]),
            ..HttpContext::new(&HttpSettings::default())
        });
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
                    lease: Some(lease),
                    ..Default::default()
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
        assert_eq!(ok.queue.blocked_until, None);
        assert_eq!(ok.queue.crawl_delay, Some(Duration::from_secs(2)));
        let ended = ok.queue.last_fetch.expect("the fetch reached the server");
        assert!(ended >= before && ended <= chrono::Utc::now(), "{ended}");
        for page in pages.values() {
            assert!(
                page.tuple.url.metadata.iter().next().is_none(),
                "nothing about the queue in the metadata: {:?}",
                page.tuple.url.metadata
            );
        }
    }

    #[tokio::test]
    async fn a_scheme_without_protocol_gets_error_not_a_panic() {
        let config = HttpSettings::default();
        let http = HttpClient::new(&config, &HttpContext::new(&config)).expect("client");
        let fetcher = FetcherBolt::new(http, None, FetcherSettings::default());
        let (tuples, input) = mpsc::channel(1);
        let (out, mut pages) = mpsc::channel(1);
        let (acks, _acked) = mpsc::unbounded_channel();
        let url = CrawlUrl::new(url::Url::parse("mem://site/page").expect("url"));
        tuples
            .send(Tuple {
                ack: AckHandle::new(url.clone(), acks),
                url,
                key: "site".to_string(),
                hints: QueueHints::default(),
            })
            .await
            .expect("send");
        drop(tuples);
        fetcher.run(input, out, CancellationToken::new()).await;
        let page = pages.recv().await.expect("a page with its status");
        let FetchOutcome::Failed {
            status,
            cause,
            message,
        } = &page.outcome
        else {
            panic!("not fetched: {:?}", page.outcome);
        };
        assert_eq!(
            (*status, *cause),
            (Status::Error, FetchFailure::UnsupportedScheme)
        );
        assert!(message.contains("mem"), "{message}");
        assert!(page.record.is_none(), "no request");
        assert_eq!(
            page.tuple
                .url
                .metadata
                .first(crate::model::keys::ERROR_CAUSE),
            Some("unsupported_scheme")
        );
    }
}
