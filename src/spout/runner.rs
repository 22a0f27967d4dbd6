//! The runner around a [`Spout`]: pacing of queries, buffer, in-flight set, purgatory, acks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashSet;

use moka::sync::Cache;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::waiting::Waiting;
use super::{SpoutSettings, UrlBuffer};
use crate::frontier::{BusyUrls, Spout};
use crate::message::{AckHandle, AckMessage, RunnerState, Tuple};

/// Consecutive empty queries, with nothing in flight or buffered, that mean "idle".
const IDLE_AFTER_EMPTY_QUERIES: u32 = 2;

/// Drives a [`Spout`]: queries it at a measured pace and emits its URLs into the topology.
pub struct SpoutRunner {
    spout: Box<dyn Spout>,
    settings: SpoutSettings,
    /// URLs emitted and not yet acked or failed, at most: [`SpoutSettings::pending_budget`].
    max_pending: usize,
    buffer: UrlBuffer,
    in_flight: std::collections::HashSet<String>,
    /// Buffered and in-flight URLs, shared with the spout through [`BusyUrls`].
    tracked: Arc<DashSet<String>>,
    /// Buffered and emitted URLs the fetcher has not started, by queue.
    waiting: Waiting,
    /// The last query failed: the next waits out the minimum delay, whatever happens meanwhile.
    last_query_failed: bool,
    /// URLs acked or failed lately, oldest first, kept while the frontier may not show their writes.
    recently_done: std::collections::VecDeque<(String, Instant)>,
    purgatory: Cache<String, ()>,
    state: RunnerState,
    empty_queries: u32,
    /// When the first query of the current run of empty answers was sent.
    first_empty_query: Option<Instant>,
    /// When the latest query of that run was sent: the run proves the frontier empty only once it
    /// spans the frontier's write visibility, counted between the queries sent, not up to now (a
    /// write just before the first query may show only in a query sent a refresh later).
    last_empty_query: Option<Instant>,
    /// The frontier, asked after the last empty answer, still had work (due or held elsewhere).
    frontier_busy: bool,
    /// URLs failed recently: still due, waiting out the purgatory, so the crawl is not idle.
    failed_recently: std::collections::HashMap<String, Instant>,
    last_query_sent: Option<Instant>,
    last_query_received: Option<Instant>,
    /// The last query brought no new URL (or failed).
    last_answer_empty: bool,
    /// The first ack after such an answer: writes were made since, so URLs may be due.
    acked_since_empty_answer: Option<Instant>,
    /// Since such an answer, the fetcher started the last waiting URL of a queue.
    demand_since_empty_answer: bool,
    /// How long the last query took.
    last_query_took: Duration,
    /// Told when something else wrote to the frontier (see [`with_writes_signal`]).
    ///
    /// [`with_writes_signal`]: SpoutRunner::with_writes_signal
    writes: Option<Arc<Notify>>,
    /// When `writes` last told of a write.
    written_at: Option<Instant>,
}

/// The shortest pause after a query that returned nothing, whatever the minimum delay: a spout that
/// answers "nothing" without asking its frontier (all its queues busy) must not be asked in a loop.
const EMPTY_ANSWER_PAUSE: Duration = Duration::from_millis(50);

/// Resolves when `writes` is notified; never without one.
async fn written(writes: Option<&Notify>) {
    match writes {
        Some(writes) => writes.notified().await,
        None => std::future::pending().await,
    }
}

/// After another writer's write (see [`SpoutRunner::with_writes_signal`]), how often an empty
/// answer is asked again while the write may still be on its way into the frontier's answers.
const WRITE_WATCH: Duration = Duration::from_millis(200);

impl SpoutRunner {
    /// A runner around `spout`, paced and bounded as `settings` say (`spout.*`,
    /// `topology.max.spout.pending`): it keeps the pending budget of all the spout's instances
    /// ([`SpoutSettings::pending_budget`]) in flight at most.
    pub fn new(spout: Box<dyn Spout>, settings: SpoutSettings) -> Self {
        let purgatory = Cache::builder()
            .time_to_live(settings.ttl_purgatory.max(Duration::from_millis(1)))
            .build();
        SpoutRunner {
            spout,
            max_pending: settings.pending_budget(),
            settings,
            buffer: UrlBuffer::new(),
            in_flight: std::collections::HashSet::new(),
            tracked: Arc::new(DashSet::new()),
            waiting: Waiting::default(),
            last_query_failed: false,
            recently_done: std::collections::VecDeque::new(),
            purgatory,
            state: RunnerState::default(),
            empty_queries: 0,
            first_empty_query: None,
            last_empty_query: None,
            frontier_busy: false,
            failed_recently: std::collections::HashMap::new(),
            last_query_sent: None,
            last_query_received: None,
            last_answer_empty: false,
            acked_since_empty_answer: None,
            demand_since_empty_answer: false,
            last_query_took: Duration::ZERO,
            writes: None,
            written_at: None,
        }
    }

    /// The same runner, told through `writes` when a writer other than its own topology's acks
    /// (a URLFrontier server's PutURLs) wrote to the frontier: after an empty answer it asks again
    /// once such a write can show, as after an ack, instead of after the minimum delay; and while
    /// the write may still be on its way into the answers (the spout's visibility delay: a queue
    /// nobody holds shows an index refresh later), again every 200 ms.
    pub fn with_writes_signal(mut self, writes: Arc<Notify>) -> Self {
        self.writes = Some(writes);
        self
    }

    /// A write was made: after an empty answer, URLs may be due from the time it shows.
    fn note_write(&mut self) {
        if self.last_answer_empty && self.acked_since_empty_answer.is_none() {
            self.acked_since_empty_answer = Some(Instant::now());
        }
    }

    /// Runs until `stop` is cancelled, then waits for every URL in flight to be acked or failed.
    ///
    /// Emits [`Tuple`]s into `out`; the acks come back on `acks` (the sender given to each tuple's
    /// [`AckHandle`] is `ack_sender`). The state is published on `state`.
    pub async fn run(
        mut self,
        out: mpsc::Sender<Tuple>,
        ack_sender: mpsc::UnboundedSender<AckMessage>,
        mut acks: mpsc::UnboundedReceiver<AckMessage>,
        state: watch::Sender<RunnerState>,
        stop: CancellationToken,
    ) {
        // The counters are served from the start (at 0), so that dashboards show no gap.
        for counter in [
            "squall_spout_emitted_total",
            "squall_spout_acked_total",
            "squall_spout_failed_total",
        ] {
            metrics::counter!(counter).increment(0);
        }
        // Only the tuples hold senders from here on, so `acks` ends once the last one resolves.
        let emit_sender = ack_sender;
        while !stop.is_cancelled() {
            while let Ok(message) = acks.try_recv() {
                self.on_ack(message).await;
            }
            if self.query_due() {
                self.query().await;
                self.publish(&state);
                continue;
            }
            let can_emit = !self.buffer.is_empty() && self.in_flight.len() < self.max_pending;
            let wait = self.time_to_next_query();
            let writes = self.writes.clone();
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                Some(message) = acks.recv() => self.on_ack(message).await,
                () = written(writes.as_deref()) => {
                    self.written_at = Some(Instant::now());
                    self.note_write();
                }
                permit = out.reserve(), if can_emit => {
                    let Ok(permit) = permit else {
                        warn!("the fetcher is gone; the spout stops");
                        break;
                    };
                    if let Some(due) = self.buffer.pop() {
                        self.in_flight.insert(due.url.url.as_str().to_string());
                        self.state.emitted += 1;
                        metrics::counter!("squall_spout_emitted_total").increment(1);
                        let ack = AckHandle::new(due.url.clone(), emit_sender.clone());
                        permit.send(Tuple { url: due.url, key: due.key, hints: due.hints, ack });
                    }
                }
                _ = tokio::time::sleep(wait) => {}
            }
            self.publish(&state);
        }
        drop(out);
        drop(emit_sender);
        info!(
            in_flight = self.in_flight.len(),
            "spout stopped; waiting for URLs in flight"
        );
        while !self.in_flight.is_empty() {
            match acks.recv().await {
                Some(message) => self.on_ack(message).await,
                None => break,
            }
            self.publish(&state);
        }
        self.spout.close().await;
        self.publish(&state);
    }

    fn query_due(&self) -> bool {
        // A full buffer waits for the topology to take from it: memory stays bounded.
        if self.buffer.len() >= self.max_pending {
            return false;
        }
        if self
            .earliest_next_query()
            .is_some_and(|earliest| Instant::now() < earliest)
        {
            return false;
        }
        if self.buffer.is_empty() {
            return true;
        }
        self.last_query_received
            .is_some_and(|received| received.elapsed() >= self.settings.max_delay_queries)
    }

    /// When the next query may go: right after an answer with new URLs (demand decides); after one
    /// with nothing new, once the minimum delay has passed or, sooner, once a write acked since
    /// then can show in the frontier's answers, or once a queue ran dry in the fetcher (for spouts
    /// that read past busy URLs; never spending more than half the time querying).
    fn earliest_next_query(&self) -> Option<Instant> {
        let sent = self.last_query_sent?;
        if !self.last_answer_empty {
            return Some(sent);
        }
        let after_min_delay = sent + self.settings.min_delay_queries;
        if self.last_query_failed {
            return Some(after_min_delay.max(sent + EMPTY_ANSWER_PAUSE));
        }
        let after_write = self
            .acked_since_empty_answer
            .map(|acked| acked + self.spout.write_visibility());
        let mut at = after_write.map_or(after_min_delay, |w| w.min(after_min_delay));
        if self.demand_since_empty_answer {
            at = at.min(sent + self.last_query_took * 2);
        }
        // Another writer's write may reach the answers only once the frontier shows it (a queue
        // nobody holds, an index refresh away): asked again every WRITE_WATCH until it may.
        let watching = self.written_at.is_some_and(|written| {
            sent.saturating_duration_since(written) < self.spout.visibility_delay()
        });
        if watching {
            at = at.min(sent + WRITE_WATCH);
        }
        // An empty answer with nothing in flight or buffered may be the crawl's end: the query that
        // confirms it goes once the frontier shows every write made before the first (a crawl run
        // until idle would otherwise wait out the minimum delay after its last page).
        if self.confirming_idle() {
            at = at.min(sent + self.spout.visibility_delay());
        }
        Some(at.max(sent + EMPTY_ANSWER_PAUSE))
    }

    /// The last answers were empty with nothing in flight or buffered, but not yet as many as
    /// calling the crawl idle takes.
    fn confirming_idle(&self) -> bool {
        (1..IDLE_AFTER_EMPTY_QUERIES).contains(&self.empty_queries)
            && self.in_flight.is_empty()
            && self.buffer.is_empty()
    }

    fn time_to_next_query(&self) -> Duration {
        if self.buffer.len() >= self.max_pending {
            // No query until the topology takes from the buffer; acks wake the loop.
            return self
                .settings
                .max_delay_queries
                .max(Duration::from_millis(1));
        }
        let min_wait = self.earliest_next_query().map_or(Duration::ZERO, |at| {
            at.saturating_duration_since(Instant::now())
        });
        if self.buffer.is_empty() {
            return min_wait.max(Duration::from_millis(1));
        }
        let max_wait = self
            .last_query_received
            .map(|r| self.settings.max_delay_queries.saturating_sub(r.elapsed()))
            .unwrap_or(self.settings.max_delay_queries);
        min_wait.max(max_wait).max(Duration::from_millis(1))
    }

    async fn query(&mut self) {
        self.last_query_sent = Some(Instant::now());
        self.acked_since_empty_answer = None;
        self.demand_since_empty_answer = false;
        let started = Instant::now();
        let busy = BusyUrls::new(
            Arc::clone(&self.tracked),
            self.waiting.urls(),
            self.waiting.per_key(),
            self.recently_done(),
            self.purgatory.clone(),
        );
        let result = self.spout.next_batch(&busy).await;
        self.last_query_received = Some(Instant::now());
        self.last_query_took = started.elapsed();
        self.last_query_failed = result.is_err();
        metrics::histogram!("squall_spout_query_seconds").record(started.elapsed().as_secs_f64());
        let batch = match result {
            Ok(batch) => batch,
            Err(error) => {
                if error.is_retryable() {
                    warn!(%error, "frontier query failed; retrying after the query delay");
                } else {
                    tracing::error!(%error, "the frontier refused the query (it will not heal by itself); asking again after the query delay");
                }
                metrics::counter!("squall_spout_query_errors_total").increment(1);
                self.last_answer_empty = true;
                self.empty_queries = 0;
                self.first_empty_query = None;
                return;
            }
        };
        let returned = batch.len();
        let mut added = 0;
        let mut being_processed = 0;
        for due in batch {
            let url = due.url.url.as_str();
            if self.in_flight.contains(url) || self.purgatory.contains_key(url) {
                being_processed += 1;
                continue;
            }
            let url = url.to_string();
            self.failed_recently.remove(&url);
            let key = due.key.clone();
            if self.buffer.push(due) {
                self.waiting.buffered(&url, &key);
                self.tracked.insert(url);
                added += 1;
            }
        }
        debug!(returned, added, being_processed, "frontier query");
        self.last_answer_empty = added == 0;
        if returned == 0 && self.in_flight.is_empty() && self.buffer.is_empty() {
            self.empty_queries += 1;
            let sent = self.last_query_sent.unwrap_or_else(Instant::now);
            self.first_empty_query.get_or_insert(sent);
            self.last_empty_query = Some(sent);
            self.frontier_busy = match self.spout.frontier_idle().await {
                Ok(idle) => !idle,
                Err(error) => {
                    warn!(%error, "could not tell whether the frontier is idle");
                    true
                }
            };
        } else {
            self.empty_queries = 0;
            self.first_empty_query = None;
        }
    }

    /// The URLs done within the frontier's write visibility and a second, forgetting older ones.
    fn recently_done(&mut self) -> Arc<[String]> {
        let window = self.spout.write_visibility() + Duration::from_secs(1);
        while self
            .recently_done
            .front()
            .is_some_and(|(_, done)| done.elapsed() > window)
        {
            self.recently_done.pop_front();
        }
        self.recently_done
            .iter()
            .map(|(url, _)| url.clone())
            .collect()
    }

    async fn on_ack(&mut self, message: AckMessage) {
        if matches!(message, AckMessage::Acked(_)) {
            self.note_write();
        }
        let url = match &message {
            AckMessage::Started(url) => url.as_str(),
            AckMessage::Acked(url) | AckMessage::Failed { url, .. } => url.url.as_str(),
        };
        if self.waiting.left(url) && self.spout.reads_past_busy() {
            self.demand_since_empty_answer = true;
        }
        match message {
            AckMessage::Started(_) => {}
            AckMessage::Acked(url) => {
                let key = url.url.as_str().to_string();
                self.in_flight.remove(&key);
                self.tracked.remove(&key);
                self.recently_done.push_back((key.clone(), Instant::now()));
                self.purgatory.insert(key, ());
                self.state.acked += 1;
                metrics::counter!("squall_spout_acked_total").increment(1);
                self.spout.ack(&url).await;
            }
            AckMessage::Failed { url, reason } => {
                let key = url.url.as_str().to_string();
                debug!(url = %crate::redact::url_text(&key), %reason, "URL failed");
                self.in_flight.remove(&key);
                self.tracked.remove(&key);
                self.failed_recently.insert(key.clone(), Instant::now());
                self.purgatory.insert(key, ());
                self.state.failed += 1;
                metrics::counter!("squall_spout_failed_total").increment(1);
                self.spout.fail(&url).await;
            }
        }
        // Anything heard back means work happened: not idle.
        self.empty_queries = 0;
        self.first_empty_query = None;
    }

    fn publish(&mut self, state: &watch::Sender<RunnerState>) {
        self.state.in_flight = self.in_flight.len();
        self.state.buffered = self.buffer.len();
        let ttl = self.settings.ttl_purgatory;
        let before = self.failed_recently.len();
        self.failed_recently
            .retain(|_, failed| failed.elapsed() < ttl + Duration::from_secs(1));
        if self.failed_recently.len() < before {
            // They are out of the purgatory: ask the frontier again before calling the crawl idle.
            self.empty_queries = 0;
            self.first_empty_query = None;
        }
        // Writes may take a while to show in the frontier's answers (an index refresh): only a run of
        // empty answers that lasted that long means there is nothing left.
        let settled = match (self.first_empty_query, self.last_empty_query) {
            (Some(first), Some(last)) => {
                last.saturating_duration_since(first) >= self.spout.visibility_delay()
            }
            _ => false,
        };
        self.state.idle = self.empty_queries >= IDLE_AFTER_EMPTY_QUERIES
            && settled
            && !self.frontier_busy
            && self.in_flight.is_empty()
            && self.buffer.is_empty()
            && self.failed_recently.is_empty();
        metrics::gauge!("squall_spout_in_flight").set(self.state.in_flight as f64);
        metrics::gauge!("squall_spout_buffered").set(self.state.buffered as f64);
        state.send_replace(self.state);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use async_trait::async_trait;

    use super::*;
    use crate::frontier::{DueUrl, SpoutError};

    /// A spout with nothing to give, answering at once without any I/O.
    struct Empty(Arc<AtomicUsize>);

    #[async_trait]
    impl Spout for Empty {
        async fn next_batch(&mut self, _busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(Vec::new())
        }
    }

    /// A runner over an [`Empty`] spout with `min_delay` between queries, started: its count of
    /// queries, its state, its stop token and its task. (The tuples' receiver is dropped: it
    /// never emits.)
    fn run_empty(
        min_delay: Duration,
    ) -> (
        Arc<AtomicUsize>,
        watch::Receiver<RunnerState>,
        CancellationToken,
        tokio::task::JoinHandle<()>,
    ) {
        let calls = Arc::new(AtomicUsize::new(0));
        let settings = SpoutSettings {
            min_delay_queries: min_delay,
            ..SpoutSettings::default()
        };
        let runner = SpoutRunner::new(Box::new(Empty(Arc::clone(&calls))), settings);
        let (out, _tuples) = mpsc::channel(8);
        let (ack_sender, acks) = mpsc::unbounded_channel();
        let (state, watched) = watch::channel(RunnerState::default());
        let stop = CancellationToken::new();
        let running = tokio::spawn(runner.run(out, ack_sender, acks, state, stop.clone()));
        (calls, watched, stop, running)
    }

    // Two workers: a busy-looping runner must not keep the test itself from running.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_spout_that_answers_nothing_is_not_asked_in_a_loop() {
        let (calls, _state, stop, running) = run_empty(Duration::ZERO);
        tokio::time::sleep(Duration::from_millis(500)).await;
        stop.cancel();
        let _ = running.await;
        let calls = calls.load(Ordering::Relaxed);
        // Without the pause after an empty answer this is a busy loop of many thousands of calls;
        // with it, one call per 50 ms at most.
        assert!((2..=20).contains(&calls), "{calls} calls in 500 ms");
    }

    /// A crawl with nothing to do is called idle after its confirming query, which goes once the
    /// frontier shows its writes (at once here), not after the 30 s minimum delay between queries.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_empty_answer_is_confirmed_without_waiting_out_the_minimum_delay() {
        let (calls, mut watched, stop, running) = run_empty(Duration::from_secs(30));
        // A wide margin (the minimum delay is 30 s, the confirming query goes after 50 ms).
        let idle = tokio::time::timeout(Duration::from_secs(20), watched.wait_for(|s| s.idle))
            .await
            .map(|state| state.is_ok());
        stop.cancel();
        let _ = running.await;
        assert_eq!(idle, Ok(true), "not idle within 20 s");
        assert_eq!(calls.load(Ordering::Relaxed), 2, "two empty answers");
    }

    /// A spout whose first answer holds that many due URLs of one host; then nothing.
    struct Many(usize);

    #[async_trait]
    impl Spout for Many {
        async fn next_batch(&mut self, _busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
            let urls = (0..std::mem::take(&mut self.0))
                .map(|n| {
                    let url = url::Url::parse(&format!("http://a.test/{n}")).expect("URL");
                    DueUrl::new(crate::model::CrawlUrl::seed(url), "a.test")
                })
                .collect();
            Ok(urls)
        }
    }

    /// URLs in flight once a runner built from `yaml`'s keys has emitted what it may of 5,000 due
    /// URLs to a topology that acks none.
    async fn in_flight_with(yaml: &str) -> usize {
        let config =
            crate::config::CrawlConfig::from_yaml_str(&format!("http.agent.name: t\n{yaml}"))
                .expect("config");
        let runner = SpoutRunner::new(Box::new(Many(5_000)), config.spout.clone());
        let (out, mut tuples) = mpsc::channel::<Tuple>(8);
        let (ack_sender, acks) = mpsc::unbounded_channel();
        let (state, mut watched) = watch::channel(RunnerState::default());
        let stop = CancellationToken::new();
        let running = tokio::spawn(runner.run(out, ack_sender, acks, state, stop.clone()));
        let held = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Some(tuple) = tuples.recv().await {
                held.push(tuple);
            }
            held.len()
        });
        // Settled: URLs wait in the buffer, yet the count in flight stays put over three looks
        // (a loaded machine may pause the runner for one look, never with nothing held back).
        let settled = tokio::time::timeout(Duration::from_secs(30), async {
            let (mut last, mut steady) = (usize::MAX, 0);
            loop {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let state = *watched.borrow_and_update();
                steady = if state.in_flight == last && state.buffered > 0 {
                    steady + 1
                } else {
                    0
                };
                if steady == 2 {
                    return state.in_flight;
                }
                last = state.in_flight;
            }
        })
        .await
        .expect("the runner settles");
        stop.cancel();
        let _ = running.await;
        held.abort();
        settled
    }

    // The budget a user gets through the configuration: `topology.max.spout.pending` (2000 when
    // absent) for each of `spout.parallelism` instances.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_configured_pending_budget_bounds_the_urls_in_flight() {
        assert_eq!(in_flight_with("").await, 2000);
        assert_eq!(in_flight_with("topology.max.spout.pending: 300").await, 300);
        let two = "topology.max.spout.pending: 300\nspout.parallelism: 2";
        assert_eq!(in_flight_with(two).await, 600);
    }

    /// Answers from a script: one list of URL paths per call, then nothing.
    struct Scripted {
        answers: std::collections::VecDeque<Vec<&'static str>>,
        calls: Arc<std::sync::Mutex<Vec<Instant>>>,
        reads_past_busy: bool,
    }

    #[async_trait]
    impl Spout for Scripted {
        fn reads_past_busy(&self) -> bool {
            self.reads_past_busy
        }

        async fn next_batch(&mut self, _busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
            if let Ok(mut calls) = self.calls.lock() {
                calls.push(Instant::now());
            }
            let paths = self.answers.pop_front().unwrap_or_default();
            Ok(paths
                .into_iter()
                .map(|path| {
                    let url = url::Url::parse(&format!("http://a.test{path}")).expect("URL");
                    DueUrl::new(crate::model::CrawlUrl::seed(url), "a.test")
                })
                .collect())
        }
    }

    /// What the stand-in fetcher does with each tuple, after a pause.
    #[derive(Clone, Copy)]
    enum Consumer {
        /// Acks it.
        Ack(Duration),
        /// Starts it (it leaves the fetcher's queue) and never acks it.
        Start(Duration),
    }

    /// Runs a scripted spout with a long minimum delay, its tuples handled as `consumer` says.
    async fn run_scripted(
        answers: Vec<Vec<&'static str>>,
        consumer: Consumer,
        reads_past_busy: bool,
    ) -> Vec<Instant> {
        let calls = Arc::new(std::sync::Mutex::new(Vec::new()));
        let spout = Scripted {
            answers: answers.into(),
            calls: Arc::clone(&calls),
            reads_past_busy,
        };
        let runner = SpoutRunner::new(
            Box::new(spout),
            SpoutSettings {
                min_delay_queries: Duration::from_secs(30),
                ..SpoutSettings::default()
            },
        );
        let (out, mut tuples) = mpsc::channel::<Tuple>(8);
        let (ack_sender, acks) = mpsc::unbounded_channel();
        let (state, _state) = watch::channel(RunnerState::default());
        let stop = CancellationToken::new();
        let running = tokio::spawn(runner.run(out, ack_sender, acks, state, stop.clone()));
        let acker = tokio::spawn(async move {
            let mut started = Vec::new();
            while let Some(tuple) = tuples.recv().await {
                match consumer {
                    Consumer::Ack(after) => {
                        tokio::time::sleep(after).await;
                        tuple.ack.ack();
                    }
                    Consumer::Start(after) => {
                        tokio::time::sleep(after).await;
                        tuple.ack.started();
                        started.push(tuple);
                    }
                }
            }
        });
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stop.cancel();
        let _ = running.await;
        acker.abort();
        calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_with_new_urls_are_followed_by_a_query_as_soon_as_they_are_taken() {
        let answers = vec![vec!["/1", "/2"], vec!["/3"], vec!["/4"], vec![]];
        let calls = run_scripted(answers, Consumer::Ack(Duration::ZERO), false).await;
        // With the 30 s minimum delay between every two queries there would be one call in 1.5 s.
        // After the empty fourth answer, the acks that follow it allow one more query, no loop.
        assert!((4..=6).contains(&calls.len()), "{calls:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_ack_after_an_answer_with_nothing_new_brings_the_next_query_forward() {
        // The second answer repeats the URL in flight: nothing new. Its ack (a write) means the
        // frontier changed, and this spout shows writes at once: the third query follows the ack.
        let answers = vec![vec!["/1"], vec!["/1"], vec!["/2"], vec![]];
        let calls = run_scripted(answers, Consumer::Ack(Duration::from_millis(300)), false).await;
        assert!(calls.len() >= 3, "{calls:?}");
        let gap = calls[2] - calls[1];
        assert!(
            gap >= Duration::from_millis(200) && gap < Duration::from_secs(5),
            "the third query came {gap:?} after the second"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_queue_running_dry_in_the_fetcher_brings_the_next_query_forward() {
        // The second answer brings nothing new; nothing is acked. When the fetcher starts the last
        // waiting URL of the queue, a spout that reads past busy URLs is asked again; one that
        // cannot waits out the 30 s minimum delay.
        let answers = || vec![vec!["/1"], vec!["/1"], vec!["/2"], vec![]];
        let start = Consumer::Start(Duration::from_millis(300));
        let calls = run_scripted(answers(), start, true).await;
        assert!(calls.len() >= 3, "{calls:?}");
        let gap = calls[2] - calls[1];
        assert!(
            gap >= Duration::from_millis(200) && gap < Duration::from_secs(5),
            "the third query came {gap:?} after the second"
        );
        let calls = run_scripted(answers(), start, false).await;
        assert_eq!(calls.len(), 2, "{calls:?}");
    }
}
