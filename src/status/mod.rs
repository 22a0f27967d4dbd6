//! The status updater: writes each URL's new status, and its outlinks as DISCOVERED, to a
//! [`StatusStore`], and acks the URL only when all of those writes are durable. Outlinks already
//! written by this process lately ([`OutlinkCache`]) or twice in one batch are written once.

mod cache;
mod cache_spec;
mod settings;

pub use cache::OutlinkCache;
pub use cache_spec::{CacheSpec, CacheSpecError};
pub use settings::StatusSettings;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};
use tokio::sync::{mpsc, watch};
use tracing::{debug, warn};

use crate::fetch::Partitioner;
use crate::frontier::{QueueReport, StatusStore, StatusWrite};
use crate::message::{
    CrawlEvent, CrawlObserver, EventError, PageSink, ProcessedPage, StatusUpdate,
};
use crate::message::{RunnerState, Wake, next_wake, waited_on};
use crate::model::{CrawlUrl, Status, key_matches, keys};
use crate::schedule::Scheduler;

/// What the status updater is built with beside its keys ([`StatusSettings`]): the other
/// stages' rules it applies to each write, and how it keys new outlinks.
#[derive(Clone)]
pub struct UpdaterContext {
    /// When URLs are due again (`fetchInterval.*`).
    pub scheduler: Arc<dyn Scheduler>,
    /// Consecutive fetch errors that turn FETCH_ERROR into ERROR (`max.fetch.errors`).
    pub max_fetch_errors: u32,
    /// Metadata keys the parser hands on to outlinks (`metadata.transfer`): kept with a URL's
    /// status too, beside those of `metadata.persist`.
    pub transfer_keys: Vec<String>,
    /// With `partition.url.mode: byIP`, gives new outlinks the address their host resolves to as
    /// their key; `None` (or another mode): the parser's keys are written as they are.
    pub partitioner: Option<Partitioner>,
}

/// Applies StormCrawler's status-updater rules to a processed URL: counts fetch errors (turning
/// FETCH_ERROR into ERROR at the limit), clears stale error fields, keeps only persisted metadata, and
/// schedules the next fetch. The metadata kept is that of `metadata.persist` (`settings`) and
/// `metadata.transfer` (`context`); a trailing `*` matches any suffix. The write carries no
/// [`QueueReport`]; the updater adds the fetch's.
pub fn prepare_write(
    update_url: &CrawlUrl,
    key: &str,
    status: Status,
    settings: &StatusSettings,
    context: &UpdaterContext,
    now: DateTime<Utc>,
) -> StatusWrite {
    let mut metadata = update_url.metadata.clone();
    let mut status = status;
    if status == Status::FetchError {
        let errors = metadata
            .first(keys::FETCH_ERROR_COUNT)
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0)
            + 1;
        metadata.set(keys::FETCH_ERROR_COUNT, errors.to_string());
        if errors >= context.max_fetch_errors {
            status = Status::Error;
            metadata.set(keys::ERROR_CAUSE, "maxFetchErrors");
        }
    } else {
        metadata.remove(keys::FETCH_ERROR_COUNT);
    }
    if matches!(status, Status::Fetched | Status::Redirection) {
        metadata.remove(keys::ERROR_CAUSE);
        metadata.remove(keys::ERROR_MESSAGE);
        metadata.remove("error.source");
    }
    let next_fetch = context.scheduler.schedule(status, &metadata, now);
    metadata.retain(|k| {
        k == keys::URL_PATH
            || k == keys::DEPTH
            || k == keys::ETAG
            || k == keys::LAST_MODIFIED
            || k == keys::IS_SITEMAP
            || k == keys::TRIMMED
            || k == keys::SITEMAP_TRIMMED
            || k == keys::SITEMAP_SOURCE
            || k == keys::FETCH_ERROR_COUNT
            || k == keys::SCHEDULER_DELAY_MINS
            || key_matches(&settings.persist, k)
            || key_matches(&context.transfer_keys, k)
    });
    StatusWrite {
        url: CrawlUrl {
            url: update_url.url.clone(),
            metadata,
        },
        key: key.to_string(),
        status,
        next_fetch,
        queue: QueueReport::default(),
    }
}

/// The status-updater stage: batches updates, writes them, then acks or fails each source URL.
pub struct StatusUpdater {
    store: Arc<dyn StatusStore>,
    settings: StatusSettings,
    context: UpdaterContext,
    /// URLs written lately, whose DISCOVERED writes are left out (`status.updater.use.cache`);
    /// `None`: every outlink is written each time it is seen.
    outlink_cache: Option<OutlinkCache>,
    observer: Arc<dyn CrawlObserver>,
    /// The spout runner's state, when the updater writes a partial batch as soon as the crawl
    /// waits on it ([`flush_when_waited_on`](Self::flush_when_waited_on)).
    runner: Option<watch::Receiver<RunnerState>>,
    /// Told of each page once its writes were attempted.
    sinks: Vec<Arc<dyn PageSink>>,
}

struct Pending {
    update: StatusUpdate,
    final_status: Status,
    /// The positions in the batch of the writes this URL waits for: its own, and its outlinks'
    /// (an outlink written for several URLs of the batch is written once, for all of them).
    writes: Vec<usize>,
}

impl StatusUpdater {
    /// A status updater writing to `store` as `settings` (its keys) and `context` say, with an
    /// outlink cache of its own when `status.updater.use.cache` is on.
    pub fn new(
        store: Arc<dyn StatusStore>,
        settings: StatusSettings,
        context: UpdaterContext,
        observer: Arc<dyn CrawlObserver>,
    ) -> Self {
        StatusUpdater {
            store,
            outlink_cache: settings.outlink_cache(),
            settings,
            context,
            observer,
            runner: None,
            sinks: Vec::new(),
        }
    }

    /// Tells `sinks` of each page once its writes were attempted, before its URL is acked (see
    /// [`PageSink`] for the order of everything a URL goes through).
    pub fn page_sinks(mut self, sinks: Vec<Arc<dyn PageSink>>) -> Self {
        self.sinks = sinks;
        self
    }

    /// Writes a partial batch at once when every URL the spout runner has in flight is in it:
    /// nothing else is being fetched or parsed, so the crawl waits on this write (its outlinks are
    /// the next URLs due), and the flush interval would only add to a small crawl's time. A busy
    /// crawl, with URLs in flight beyond the batch, still writes by size and interval.
    pub fn flush_when_waited_on(mut self, runner: watch::Receiver<RunnerState>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// Runs until `input` closes, then writes what is left.
    pub async fn run(mut self, mut input: mpsc::Receiver<StatusUpdate>) {
        // Served from the start (at 0), so that dashboards show no gap.
        metrics::counter!("squall_status_writes_total").increment(0);
        metrics::counter!("squall_status_write_failures_total").increment(0);
        let mut runner = self.runner.take();
        let mut batch: Vec<StatusUpdate> = Vec::new();
        let mut writes = 0usize;
        // The batch's age on tokio's clock, which its timer reads.
        let mut oldest: Option<tokio::time::Instant> = None;
        loop {
            if waited_on(runner.as_ref(), batch.len()) {
                self.write(std::mem::take(&mut batch)).await;
                (writes, oldest) = (0, None);
                continue;
            }
            let deadline = oldest.map(|t| t + self.settings.flush_interval);
            match next_wake(&mut input, deadline, &mut runner, !batch.is_empty()).await {
                Wake::Update(None) => break,
                Wake::Update(Some(update)) => {
                    writes += 1 + update.outlinks.len();
                    batch.push(*update);
                    oldest.get_or_insert_with(tokio::time::Instant::now);
                    if writes >= self.settings.batch_size {
                        self.write(std::mem::take(&mut batch)).await;
                        (writes, oldest) = (0, None);
                    }
                }
                Wake::Due => {
                    self.write(std::mem::take(&mut batch)).await;
                    (writes, oldest) = (0, None);
                }
                Wake::Runner(true) => {}
                Wake::Runner(false) => runner = None,
            }
        }
        self.write(batch).await;
    }

    /// The writes of a batch of updates: each URL's own, then its outlinks as DISCOVERED, leaving out
    /// outlinks that are URLs of the batch themselves, outlinks already in the batch (written once,
    /// for every URL that found them) and outlinks in the cache.
    fn batch_writes(
        &self,
        updates: Vec<StatusUpdate>,
        now: DateTime<Utc>,
    ) -> (Vec<StatusWrite>, Vec<Pending>) {
        let own_urls: HashSet<String> = updates.iter().map(|u| u.url.url.to_string()).collect();
        let mut outlink_writes: HashMap<String, usize> = HashMap::new();
        let mut writes = Vec::new();
        let mut pending = Vec::with_capacity(updates.len());
        for update in updates {
            let own = StatusWrite {
                queue: update.queue,
                ..prepare_write(
                    &update.url,
                    &update.key,
                    update.status,
                    &self.settings,
                    &self.context,
                    now,
                )
            };
            let final_status = own.status;
            let mut waits_for = vec![writes.len()];
            writes.push(own);
            for outlink in &update.outlinks {
                let url = outlink.url.url.as_str();
                if own_urls.contains(url) {
                    continue;
                }
                if let Some(&at) = outlink_writes.get(url) {
                    waits_for.push(at);
                    continue;
                }
                if self.outlink_cache.as_ref().is_some_and(|c| c.seen(url)) {
                    continue;
                }
                outlink_writes.insert(url.to_string(), writes.len());
                waits_for.push(writes.len());
                writes.push(StatusWrite {
                    url: outlink.url.clone(),
                    key: outlink.key.clone(),
                    status: Status::Discovered,
                    next_fetch: self.context.scheduler.schedule(
                        Status::Discovered,
                        &outlink.url.metadata,
                        now,
                    ),
                    queue: QueueReport::default(),
                });
            }
            pending.push(Pending {
                writes: waits_for,
                update,
                final_status,
            });
        }
        (writes, pending)
    }

    /// Shows the page of `update`, which ended as `status`, to every sink.
    fn tell_sinks(&self, update: &StatusUpdate, status: Status, written: bool) {
        if self.sinks.is_empty() {
            return;
        }
        let page = ProcessedPage {
            url: &update.url,
            key: &update.key,
            status,
            fetch: update.fetch.as_ref(),
            content: update.content.as_ref(),
            outlinks: &update.outlinks,
            written,
        };
        for sink in &self.sinks {
            sink.on_page(&page);
        }
    }

    async fn write(&self, mut updates: Vec<StatusUpdate>) {
        if updates.is_empty() {
            return;
        }
        if let Some(partitioner) = &self.context.partitioner {
            let outlinks = updates.iter_mut().flat_map(|u| u.outlinks.iter_mut());
            partitioner.rekey_outlinks(outlinks).await;
        }
        let now = Utc::now();
        let (writes, pending) = self.batch_writes(updates, now);
        let started = Instant::now();
        let count = writes.len();
        let urls: Vec<String> = writes.iter().map(|w| w.url.url.to_string()).collect();
        let mut outcomes: Vec<Result<(), String>> = self
            .store
            .store(writes)
            .await
            .into_iter()
            .map(|outcome| outcome.map_err(|error| error.message().to_string()))
            .collect();
        outcomes.resize(
            count,
            Err("the store returned fewer outcomes than writes".into()),
        );
        metrics::histogram!("squall_status_store_seconds").record(started.elapsed().as_secs_f64());
        metrics::counter!("squall_status_writes_total").increment(count as u64);
        debug!(writes = count, "status batch stored");
        if let Some(cache) = &self.outlink_cache {
            for (url, outcome) in urls.iter().zip(&outcomes) {
                if outcome.is_ok() {
                    cache.insert(url);
                }
            }
        }
        for item in pending {
            let failure = item
                .writes
                .iter()
                .find_map(|&i| outcomes[i].as_ref().err().cloned());
            let written = failure.is_none();
            self.tell_sinks(&item.update, item.final_status, written);
            let StatusUpdate {
                url,
                key,
                outlinks,
                fetch,
                ack,
                ..
            } = item.update;
            self.observer.on_event(&CrawlEvent::Processed {
                url: crate::redact::url_text(url.url.as_str()).into_owned(),
                key,
                status: item.final_status,
                fetch,
                outlinks: outlinks.len(),
                written,
                error: EventError::of(&url),
            });
            match failure {
                None => ack.ack(),
                Some(reason) => {
                    warn!(url = %crate::redact::url_text(url.url.as_str()), %reason, "status write failed; the URL goes back to the frontier");
                    metrics::counter!("squall_status_write_failures_total").increment(1);
                    ack.fail(reason);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "waiting_tests.rs"]
mod waiting_tests;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::Metadata;
    use crate::schedule::DefaultScheduler;
    use url::Url;

    fn settings() -> StatusSettings {
        StatusSettings {
            batch_size: 10,
            flush_interval: Duration::from_secs(1),
            use_cache: false,
            persist: vec!["error.cause".into(), "keep.*".into()],
            ..StatusSettings::default()
        }
    }

    fn context() -> UpdaterContext {
        UpdaterContext {
            scheduler: Arc::new(DefaultScheduler::default()),
            max_fetch_errors: 3,
            transfer_keys: Vec::new(),
            partitioner: None,
        }
    }

    /// The write of `url` (in the queue `a.test`) with `status`, under the tests' settings.
    fn write_of(url: &CrawlUrl, status: Status, now: DateTime<Utc>) -> StatusWrite {
        prepare_write(url, "a.test", status, &settings(), &context(), now)
    }

    #[test]
    fn fetch_errors_count_up_and_become_error_at_the_limit() {
        let now = Utc::now();
        let mut url = CrawlUrl::new(Url::parse("http://a.test/").expect("url"));
        let first = write_of(&url, Status::FetchError, now);
        assert_eq!(first.status, Status::FetchError);
        assert_eq!(first.url.metadata.first(keys::FETCH_ERROR_COUNT), Some("1"));
        assert!(first.next_fetch.is_some());
        url.metadata.set(keys::FETCH_ERROR_COUNT, "2");
        let third = write_of(&url, Status::FetchError, now);
        assert_eq!(third.status, Status::Error);
        assert_eq!(
            third.url.metadata.first(keys::ERROR_CAUSE),
            Some("maxFetchErrors")
        );
        assert_eq!(
            third.next_fetch, None,
            "ERROR is never refetched by default"
        );
    }

    #[test]
    fn success_clears_errors_and_only_persisted_metadata_is_kept() {
        let now = Utc::now();
        let mut metadata = Metadata::new();
        metadata.set(keys::FETCH_ERROR_COUNT, "2");
        metadata.set(keys::ERROR_CAUSE, "x");
        metadata.set(keys::DEPTH, "2");
        metadata.set("keep.me", "1");
        metadata.set("drop.me", "1");
        let url = CrawlUrl {
            url: Url::parse("http://a.test/").expect("url"),
            metadata,
        };
        let write = write_of(&url, Status::Fetched, now);
        let kept: Vec<&str> = write.url.metadata.iter().map(|(k, _)| k).collect();
        assert_eq!(kept, ["depth", "keep.me"]);
        assert!(write.next_fetch.is_some_and(|t| t > now));
    }

    /// Keeps every batch it is given.
    #[derive(Default)]
    struct Recorder(std::sync::Mutex<Vec<StatusWrite>>);

    #[async_trait::async_trait]
    impl StatusStore for Recorder {
        async fn store(
            &self,
            batch: Vec<StatusWrite>,
        ) -> Vec<Result<(), crate::frontier::StoreError>> {
            let outcomes = batch.iter().map(|_| Ok(())).collect();
            self.0.lock().expect("lock").extend(batch);
            outcomes
        }
    }

    #[tokio::test]
    async fn the_queue_report_goes_with_the_urls_own_write_only() {
        let store = Arc::new(Recorder::default());
        let updater = StatusUpdater::new(
            store.clone(),
            settings(),
            context(),
            Arc::new(crate::message::NoObserver),
        );
        let (acks, mut acked) = mpsc::unbounded_channel();
        let url = CrawlUrl::new(Url::parse("http://a.test/").expect("url"));
        let report = QueueReport {
            blocked_until: Some(Utc::now()),
            crawl_delay: Some(Duration::from_millis(2500)),
            last_fetch: Some(Utc::now()),
            pace: None,
        };
        let (input, output) = mpsc::channel(1);
        input
            .send(StatusUpdate {
                url: url.clone(),
                key: "a.test".into(),
                status: Status::FetchError,
                outlinks: vec![crate::message::Outlink {
                    url: CrawlUrl::new(Url::parse("http://a.test/b").expect("url")),
                    key: "a.test".into(),
                }],
                fetch: None,
                queue: report,
                content: None,
                ack: crate::message::AckHandle::new(url, acks),
            })
            .await
            .expect("send");
        drop(input);
        updater.run(output).await;
        let writes = store.0.lock().expect("lock").clone();
        assert_eq!(writes.len(), 2);
        assert_eq!(
            writes[0].queue, report,
            "the fetched URL's write carries it"
        );
        assert!(writes[1].queue.is_empty(), "an outlink's write does not");
        assert!(
            writes[0]
                .url
                .metadata
                .iter()
                .all(|(k, _)| !k.starts_with("queue")),
            "nothing of it in the URL's metadata"
        );
        assert!(matches!(
            acked.recv().await,
            Some(crate::message::AckMessage::Acked(_))
        ));
    }

    /// Fails the writes of URLs containing "fail"; keeps every batch it is given.
    #[derive(Default)]
    struct Picky(std::sync::Mutex<Vec<Vec<String>>>);

    #[async_trait::async_trait]
    impl StatusStore for Picky {
        async fn store(
            &self,
            batch: Vec<StatusWrite>,
        ) -> Vec<Result<(), crate::frontier::StoreError>> {
            let urls: Vec<String> = batch.iter().map(|w| w.url.url.to_string()).collect();
            let outcomes = urls
                .iter()
                .map(|url| match url.contains("fail") {
                    true => Err(crate::frontier::StoreError::unavailable("refused")),
                    false => Ok(()),
                })
                .collect();
            self.0.lock().expect("lock").push(urls);
            outcomes
        }
    }

    fn fetched_with_links(
        path: &str,
        links: &[&str],
    ) -> (
        StatusUpdate,
        mpsc::UnboundedReceiver<crate::message::AckMessage>,
    ) {
        let (acks, acked) = mpsc::unbounded_channel();
        let url = CrawlUrl::new(Url::parse(&format!("http://a.test/{path}")).expect("url"));
        let outlinks = links
            .iter()
            .map(|link| crate::message::Outlink {
                url: CrawlUrl::new(Url::parse(&format!("http://a.test/{link}")).expect("url")),
                key: "a.test".into(),
            })
            .collect();
        let update = StatusUpdate {
            url: url.clone(),
            key: "a.test".into(),
            status: Status::Fetched,
            outlinks,
            fetch: None,
            queue: QueueReport::default(),
            content: None,
            ack: crate::message::AckHandle::new(url, acks),
        };
        (update, acked)
    }

    #[tokio::test]
    async fn outlinks_are_written_once_per_batch_and_not_again_once_cached() {
        let store = Arc::new(Picky::default());
        let updater = StatusUpdater::new(
            store.clone(),
            StatusSettings {
                use_cache: true,
                ..settings()
            },
            context(),
            Arc::new(crate::message::NoObserver),
        );
        let cache = updater.outlink_cache.clone().expect("a cache");
        let first = fetched_with_links("1", &["x", "y", "x", "2", "fail"]);
        let second = fetched_with_links("2", &["x", "z"]);
        let third = fetched_with_links("3", &["x", "y", "z", "1", "fail"]);
        updater.write(vec![first.0, second.0]).await;
        updater.write(vec![third.0]).await;
        let batches = store.0.lock().expect("lock").clone();
        let paths = |batch: &Vec<String>| -> Vec<String> {
            batch
                .iter()
                .map(|u| u.trim_start_matches("http://a.test/").to_string())
                .collect()
        };
        assert_eq!(
            paths(&batches[0]),
            ["1", "x", "y", "fail", "2", "z"],
            "x once for both pages, 2 not as an outlink of 1: it is the batch's own"
        );
        assert_eq!(
            paths(&batches[1]),
            ["3", "fail"],
            "written URLs are cached (1 as a fetched URL); the failed one is sent again"
        );
        assert!(cache.hits() >= 4, "{cache:?}");
        let outcome = |mut acked: mpsc::UnboundedReceiver<crate::message::AckMessage>| {
            matches!(acked.try_recv(), Ok(crate::message::AckMessage::Acked(_)))
        };
        assert!(
            !outcome(first.1),
            "page 1 waits for its failed outlink: failed"
        );
        assert!(outcome(second.1), "page 2's writes all succeeded");
        assert!(!outcome(third.1));
    }

    #[test]
    fn wildcard_patterns() {
        let patterns = vec!["a.*".to_string(), "exact".to_string()];
        assert!(key_matches(&patterns, "a.b"));
        assert!(key_matches(&patterns, "exact"));
        assert!(!key_matches(&patterns, "exactly"));
        assert!(!key_matches(&patterns, "b.a"));
    }
}
