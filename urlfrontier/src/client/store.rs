//! [`UrlFrontierStore`]: status writes as a URLFrontier server's PutURLs, and queue reports as
//! its SetDelay and BlockQueueUntil.

use std::time::Duration;

use async_trait::async_trait;
use squall::frontier::{QueueReport, StatusStore, StatusWrite, StoreError};
use squall::model::Status;
use tokio::time::{Instant, timeout, timeout_at};
use tracing::{debug, warn};

use super::Connection;
use super::acks::AckBook;
use super::discovered::{DiscoveredSupport, Sent, put_discovered};
use super::errors::{store_error, timed_out};
use super::messages::{discovered_info, queue_reports, url_item};
use super::settings::ClientSettings;
use crate::convert::secs_from_date;
use crate::proto::url_frontier_client::UrlFrontierClient;
use crate::proto::{BlockQueueParams, QueueDelayParams, UrlItem};

/// Writes statuses to a URLFrontier server: each batch is one PutURLs stream, a write reported `Ok`
/// once the server acknowledged it OK or SKIPPED.
///
/// DISCOVERED writes (the server adds a URL it does not know and keeps one it knows) go as one
/// PutDiscovered batch (API 2.6), beside the PutURLs stream of the others; to a server that answers
/// UNIMPLEMENTED (API 2.5), as discovered items on PutURLs, from then on. Other statuses go as known items, due again at `next_fetch` (never when `None`),
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
    discovered: DiscoveredSupport,
}

impl UrlFrontierStore {
    /// A store over a connection to the server, configured by `settings`.
    pub fn new(channel: Connection, settings: ClientSettings) -> Self {
        UrlFrontierStore {
            client: UrlFrontierClient::new(channel),
            settings,
            discovered: DiscoveredSupport::new(),
        }
    }

    /// Writes `batch`: its discovered URLs on PutDiscovered (while the server takes it) beside
    /// the other writes on PutURLs; one outcome per write, in the batch's order.
    async fn put_all(&self, batch: &[StatusWrite]) -> Vec<Result<(), StoreError>> {
        let crawl_id = &self.settings.crawl_id;
        let (found, others): (Vec<usize>, Vec<usize>) = (0..batch.len())
            .partition(|&i| batch[i].status == Status::Discovered && self.discovered.offered());
        if found.is_empty() {
            return self.put_writes(batch, &others).await;
        }
        let infos = found
            .iter()
            .map(|&i| discovered_info(&batch[i], crawl_id))
            .collect();
        let limit = self.settings.request_timeout;
        let deadline = Instant::now() + limit;
        let mut client = self.client.clone();
        let (sent, put) = tokio::join!(
            put_discovered(&mut client, infos, &self.discovered, deadline, limit),
            self.put_writes(batch, &others),
        );
        let found_outcomes = match sent {
            Sent::Outcomes(outcomes) => outcomes,
            Sent::NotOffered => self.put_writes(batch, &found).await,
        };
        let mut outcomes = vec![Ok(()); batch.len()];
        for (index, outcome) in found.into_iter().zip(found_outcomes) {
            outcomes[index] = outcome;
        }
        for (index, outcome) in others.into_iter().zip(put) {
            outcomes[index] = outcome;
        }
        outcomes
    }

    /// Writes `batch[i]` for each `i` of `indices` on one PutURLs stream: their outcomes, in the
    /// order of `indices`.
    async fn put_writes(
        &self,
        batch: &[StatusWrite],
        indices: &[usize],
    ) -> Vec<Result<(), StoreError>> {
        if indices.is_empty() {
            return Vec::new();
        }
        let crawl_id = &self.settings.crawl_id;
        let items = indices
            .iter()
            .enumerate()
            .map(|(id, &index)| url_item(&batch[index], AckBook::id(id), crawl_id))
            .collect();
        self.put(items).await
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
        // The queues' news first: a server dates the gap before a queue's next holder when its
        // last URL comes back, with the delay it knows then.
        for (key, report) in queue_reports(&batch) {
            self.report_queue(&key, report).await;
        }
        let outcomes = self.put_all(&batch).await;
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
