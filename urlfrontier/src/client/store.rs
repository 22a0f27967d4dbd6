//! [`UrlFrontierStore`]: status writes as a URLFrontier server's PutURLs, and queue reports as
//! its SetDelay and BlockQueueUntil.

use std::time::Duration;

use async_trait::async_trait;
use squall::frontier::{QueueReport, StatusStore, StatusWrite, StoreError};
use tokio::time::{Instant, timeout, timeout_at};
use tracing::{debug, warn};

use super::Connection;
use super::acks::AckBook;
use super::errors::{store_error, timed_out};
use super::messages::{queue_reports, url_item};
use super::settings::ClientSettings;
use crate::convert::secs_from_date;
use crate::proto::url_frontier_client::UrlFrontierClient;
use crate::proto::{BlockQueueParams, QueueDelayParams, UrlItem};

/// Writes statuses to a URLFrontier server: each batch is one PutURLs stream, a write reported `Ok`
/// once the server acknowledged it OK or SKIPPED.
///
/// DISCOVERED writes are sent as discovered items (the server adds a URL it does not know and keeps
/// one it knows); other statuses as known items, due again at `next_fetch` (never when `None`),
/// with the status in the metadata under [`STATUS_KEY`](crate::convert::STATUS_KEY). What the fetches
/// reported about their queues goes with it: a robots.txt crawl delay or a learned pace as
/// SetDelay (the longer, in whole seconds, rounded up: the server's workers then keep it between
/// holders), a Retry-After hold as BlockQueueUntil, once per queue per batch, before the stream
/// (a server dates a queue's gap when its last URL comes back); a failure of these is logged and
/// does not fail the writes.
#[derive(derive_more::Debug)]
pub struct UrlFrontierStore {
    #[debug(skip)]
    client: UrlFrontierClient<Connection>,
    settings: ClientSettings,
}

impl UrlFrontierStore {
    /// A store over a connection to the server, configured by `settings`.
    pub fn new(channel: Connection, settings: ClientSettings) -> Self {
        UrlFrontierStore {
            client: UrlFrontierClient::new(channel),
            settings,
        }
    }

    /// Sends `items` on one PutURLs stream and collects their acknowledgements, until every item
    /// is acknowledged, the server ends the stream, or the request timeout passes.
    async fn put(&self, items: Vec<UrlItem>) -> Vec<Result<(), StoreError>> {
        let mut book = AckBook::new(items.len());
        let timeout = self.settings.request_timeout;
        let deadline = Instant::now() + timeout;
        let mut client = self.client.clone();
        let call = client.put_ur_ls(tokio_stream::iter(items));
        let mut acks = match timeout_at(deadline, call).await {
            Ok(Ok(response)) => response.into_inner(),
            Ok(Err(status)) => return book.finish(Some(store_error("PutURLs", &status))),
            Err(_) => {
                return book.finish(Some(StoreError::unavailable(timed_out("PutURLs", timeout))));
            }
        };
        let ending = loop {
            if book.is_complete() {
                break None;
            }
            match timeout_at(deadline, acks.message()).await {
                Ok(Ok(Some(ack))) => book.record(&ack),
                Ok(Ok(None)) => break None,
                Ok(Err(status)) => break Some(store_error("PutURLs", &status)),
                Err(_) => break Some(StoreError::unavailable(timed_out("PutURLs", timeout))),
            }
        };
        book.finish(ending)
    }

    /// Tells the server what the fetches learned about `key`'s queue; failures are logged.
    async fn report_queue(&self, key: &str, report: QueueReport) {
        let limit = self.settings.request_timeout;
        let crawl_id = &self.settings.crawl_id;
        let mut client = self.client.clone();
        // The server keeps one delay per queue: the longer of the robots.txt crawl delay and the
        // pace learned last (which comes back down as the server recovers).
        let delay = report.crawl_delay.max(report.pace.map(|pace| pace.delay));
        if let Some(delay) = delay {
            let request = QueueDelayParams {
                key: key.to_string(),
                delay_requestable: whole_seconds(delay),
                crawl_id: crawl_id.clone(),
                local: false,
            };
            let outcome = timeout(limit, client.set_delay(request)).await;
            log_failure("SetDelay", key, outcome, limit);
        }
        if let Some(until) = report.blocked_until {
            let request = BlockQueueParams {
                key: key.to_string(),
                time: secs_from_date(Some(until)),
                crawl_id: crawl_id.clone(),
                local: false,
            };
            let outcome = timeout(limit, client.block_queue_until(request)).await;
            log_failure("BlockQueueUntil", key, outcome, limit);
        }
    }
}

/// A delay in whole seconds, rounded up.
fn whole_seconds(delay: Duration) -> u32 {
    let seconds = delay
        .as_secs()
        .saturating_add(u64::from(delay.subsec_nanos() > 0));
    u32::try_from(seconds).unwrap_or(u32::MAX)
}

fn log_failure<T>(
    call: &str,
    key: &str,
    outcome: Result<Result<T, tonic::Status>, tokio::time::error::Elapsed>,
    limit: Duration,
) {
    let error = match outcome {
        Ok(Ok(_)) => return,
        Ok(Err(status)) => store_error(call, &status).to_string(),
        Err(_) => timed_out(call, limit),
    };
    warn!(queue = %key, %error, "could not tell the URLFrontier server about a queue");
}

#[async_trait]
impl StatusStore for UrlFrontierStore {
    async fn store(&self, batch: Vec<StatusWrite>) -> Vec<Result<(), StoreError>> {
        if batch.is_empty() {
            return Vec::new();
        }
        let crawl_id = &self.settings.crawl_id;
        let items = batch
            .iter()
            .enumerate()
            .map(|(index, write)| url_item(write, AckBook::id(index), crawl_id))
            .collect();
        // The queues' news first: a server dates the gap before a queue's next holder when its
        // last URL comes back, with the delay it knows then.
        for (key, report) in queue_reports(&batch) {
            self.report_queue(&key, report).await;
        }
        let outcomes = self.put(items).await;
        let failed = outcomes.iter().filter(|outcome| outcome.is_err()).count();
        debug!(writes = batch.len(), failed, "URLFrontier PutURLs");
        outcomes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_are_whole_seconds_rounded_up() {
        assert_eq!(whole_seconds(Duration::from_secs(3)), 3);
        assert_eq!(whole_seconds(Duration::from_millis(2500)), 3);
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::ZERO), 0);
        assert_eq!(whole_seconds(Duration::MAX), u32::MAX);
    }
}
