//! The indexer stage: batches the documents of parsed pages, writes them to a [`ContentStore`],
//! and passes each URL on to the status updater only once its document is durable.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tracing::{debug, warn};

use super::document::{Skipped, build_document};
use super::settings::IndexerSettings;
use super::{ContentDocument, ContentStore, IndexError};
use crate::frontier::ErrorKind;
use crate::message::{CrawlEvent, CrawlObserver, EventError, StatusUpdate};
use crate::message::{RunnerState, Wake, next_wake, waited_on};
use crate::model::{Status, keys};

/// The content-indexer stage.
pub struct ContentIndexer {
    store: Arc<dyn ContentStore>,
    settings: IndexerSettings,
    observer: Arc<dyn CrawlObserver>,
    /// The spout runner's state, when a partial batch is written as soon as the crawl waits on it.
    runner: Option<watch::Receiver<RunnerState>>,
}

impl ContentIndexer {
    /// An indexer writing documents made with `settings` to `store`; `observer` hears of the URLs
    /// whose documents could not be written.
    pub fn new(
        store: Arc<dyn ContentStore>,
        settings: IndexerSettings,
        observer: Arc<dyn CrawlObserver>,
    ) -> Self {
        ContentIndexer {
            store,
            settings,
            observer,
            runner: None,
        }
    }

    /// Writes a partial batch at once when every URL the spout runner has in flight is in it:
    /// nothing else is being fetched or parsed, so the crawl waits on this write, and the store's
    /// flush interval would only add to a small crawl's time (as the status updater does, see
    /// [`StatusUpdater::flush_when_waited_on`](crate::status::StatusUpdater::flush_when_waited_on)).
    pub fn flush_when_waited_on(mut self, runner: watch::Receiver<RunnerState>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// Runs until `input` closes, then writes what is left. Updates without a document go on at
    /// once; the others after their batch is written.
    pub async fn run(
        mut self,
        mut input: mpsc::Receiver<StatusUpdate>,
        out: mpsc::Sender<StatusUpdate>,
    ) {
        let batching = self.store.batching();
        let mut runner = self.runner.take();
        let mut batch: Vec<(StatusUpdate, ContentDocument)> = Vec::new();
        // The batch's age on tokio's clock, which its timer reads.
        let mut oldest: Option<tokio::time::Instant> = None;
        loop {
            if waited_on(runner.as_ref(), batch.len()) {
                oldest = None;
                if !self.write(std::mem::take(&mut batch), &out).await {
                    return;
                }
                continue;
            }
            let deadline = oldest.map(|t| t + batching.flush_interval);
            let passed_on =
                match next_wake(&mut input, deadline, &mut runner, !batch.is_empty()).await {
                    Wake::Update(None) => break,
                    Wake::Update(Some(update)) => {
                        let mut update = *update;
                        match self.document_for(&mut update) {
                            Some(document) => {
                                batch.push((update, document));
                                oldest.get_or_insert_with(tokio::time::Instant::now);
                                if batch.len() < batching.max_documents.max(1) {
                                    continue;
                                }
                                oldest = None;
                                self.write(std::mem::take(&mut batch), &out).await
                            }
                            None => out.send(update).await.is_ok(),
                        }
                    }
                    Wake::Due => {
                        oldest = None;
                        self.write(std::mem::take(&mut batch), &out).await
                    }
                    Wake::Runner(alive) => {
                        if !alive {
                            runner = None;
                        }
                        true
                    }
                };
            if !passed_on {
                // The status updater is gone: what is held fails back to the spout.
                return;
            }
        }
        self.write(batch, &out).await;
    }

    /// The document of a fetched HTML page, unless it is not to be indexed; the page's content
    /// goes on with it (to the status updater's page sinks).
    fn document_for(&self, update: &mut StatusUpdate) -> Option<ContentDocument> {
        let content = update.content.as_ref()?;
        if update.status != Status::Fetched {
            return None;
        }
        match build_document(&self.settings, &update.url, content) {
            Ok(document) => Some(document),
            Err(skipped) => {
                let reason = match skipped {
                    Skipped::Noindex => "noindex",
                    Skipped::Filtered => "filtered",
                };
                debug!(url = %crate::redact::url_text(update.url.url.as_str()), reason, "not indexed");
                metrics::counter!("squall_index_skipped_total", "reason" => reason).increment(1);
                None
            }
        }
    }

    /// Writes a batch, then passes on each URL whose document is durable (or refused for good,
    /// as ERROR) and fails the others. Whether the status updater is still there.
    async fn write(
        &self,
        batch: Vec<(StatusUpdate, ContentDocument)>,
        out: &mpsc::Sender<StatusUpdate>,
    ) -> bool {
        if batch.is_empty() {
            return true;
        }
        let (updates, documents): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
        let started = std::time::Instant::now();
        let count = documents.len();
        let mut outcomes = self.store.store(documents).await.into_iter();
        metrics::histogram!("squall_index_store_seconds").record(started.elapsed().as_secs_f64());
        metrics::counter!("squall_index_documents_total").increment(count as u64);
        debug!(documents = count, "content batch stored");
        for mut update in updates {
            let outcome = outcomes.next().unwrap_or_else(|| {
                Err(IndexError::unavailable(
                    "the content store returned fewer outcomes than documents",
                ))
            });
            match outcome {
                Ok(()) => {}
                Err(error) if error.kind == ErrorKind::Rejected => {
                    warn!(url = %crate::redact::url_text(update.url.url.as_str()), %error, "content refused: the URL gets ERROR");
                    update.status = Status::Error;
                    update.url.metadata.set(keys::ERROR_CAUSE, "indexing");
                    update.url.metadata.set(keys::ERROR_MESSAGE, error.message);
                }
                Err(error) => {
                    self.fail(update, error);
                    continue;
                }
            }
            if out.send(update).await.is_err() {
                return false;
            }
        }
        true
    }

    /// Fails a URL whose document was not written: it stays due in the frontier.
    fn fail(&self, update: StatusUpdate, error: IndexError) {
        warn!(url = %crate::redact::url_text(update.url.url.as_str()), %error, "content write failed; the URL goes back to the frontier");
        metrics::counter!("squall_index_write_failures_total").increment(1);
        self.observer.on_event(&CrawlEvent::Processed {
            url: update.url.url.to_string(),
            key: update.key,
            status: update.status,
            fetch: update.fetch,
            outlinks: update.outlinks.len(),
            written: false,
            error: EventError::of(&update.url),
        });
        update.ack.fail(error.message);
    }
}
