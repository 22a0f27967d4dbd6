//! The discovered URLs of a batch of writes (a page's outlinks) as one PutDiscovered batch (API
//! 2.6): one message and one ack for all of them, instead of one of each per URL on PutURLs.
//!
//! A server that does not take PutDiscovered (API 2.5, or the reference's cluster mode) answers
//! UNIMPLEMENTED; the caller then sends the same writes on PutURLs, and stops asking that server.

use std::sync::atomic::{AtomicBool, Ordering};

use squall::frontier::StoreError;
use tokio::time::{Instant, timeout_at};
use tonic::Code;

use super::errors::{store_error, timed_out};
use crate::proto::ack_message::Status as AckStatus;
use crate::proto::{BatchAck, DiscoveredBatch, UrlInfo};

/// The ID of the one batch a call sends.
const BATCH_ID: &str = "0";

/// Whether a server takes PutDiscovered, as far as the client has seen: yes until it says
/// UNIMPLEMENTED once.
#[derive(Debug)]
pub(crate) struct DiscoveredSupport(AtomicBool);

impl DiscoveredSupport {
    /// Assumes the server takes it until told otherwise.
    pub(crate) fn new() -> Self {
        DiscoveredSupport(AtomicBool::new(true))
    }

    /// Whether to send discovered URLs on PutDiscovered.
    pub(crate) fn offered(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn withdrawn(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// What a PutDiscovered call came to.
pub(crate) enum Sent {
    /// One outcome per URL, in the batch's order.
    Outcomes(Vec<Result<(), StoreError>>),
    /// The server does not take PutDiscovered: nothing was written.
    NotOffered,
}

/// Sends `items` as one batch on a PutDiscovered stream of `client`, waiting until `deadline` for
/// its ack: OK and SKIPPED are success, FAIL a retryable failure; a missing or short ack fails the
/// URLs it does not cover.
pub(crate) async fn put_discovered(
    client: &mut crate::proto::url_frontier_client::UrlFrontierClient<super::Connection>,
    items: Vec<UrlInfo>,
    support: &DiscoveredSupport,
    deadline: Instant,
    limit: std::time::Duration,
) -> Sent {
    let count = items.len();
    let batch = DiscoveredBatch {
        id: BATCH_ID.to_string(),
        items,
    };
    let failed = |error: StoreError| Sent::Outcomes(vec![Err(error); count]);
    let call = client.put_discovered(tokio_stream::iter([batch]));
    let mut acks = match timeout_at(deadline, call).await {
        Ok(Ok(response)) => response.into_inner(),
        Ok(Err(status)) if status.code() == Code::Unimplemented => {
            support.withdrawn();
            return Sent::NotOffered;
        }
        Ok(Err(status)) => return failed(store_error("PutDiscovered", &status)),
        Err(_) => return failed(StoreError::unavailable(timed_out("PutDiscovered", limit))),
    };
    loop {
        match timeout_at(deadline, acks.message()).await {
            Ok(Ok(Some(ack))) if ack.id == BATCH_ID => {
                return Sent::Outcomes(outcomes(&ack, count));
            }
            Ok(Ok(Some(_))) => continue, // not this call's batch: ignored
            Ok(Ok(None)) => {
                return failed(StoreError::unavailable(
                    "the URLFrontier server ended the PutDiscovered stream without acking the batch",
                ));
            }
            Ok(Err(status)) if status.code() == Code::Unimplemented => {
                support.withdrawn();
                return Sent::NotOffered;
            }
            Ok(Err(status)) => return failed(store_error("PutDiscovered", &status)),
            Err(_) => return failed(StoreError::unavailable(timed_out("PutDiscovered", limit))),
        }
    }
}

/// The outcome of each of `count` URLs from their batch's ack.
fn outcomes(ack: &BatchAck, count: usize) -> Vec<Result<(), StoreError>> {
    (0..count)
        .map(|position| match ack.statuses.get(position).copied() {
            Some(status) => match AckStatus::try_from(status) {
                Ok(AckStatus::Ok | AckStatus::Skipped) => Ok(()),
                Ok(AckStatus::Fail) => Err(StoreError::unavailable(
                    "the URLFrontier server failed to store the URL (PutDiscovered: FAIL)",
                )),
                Err(_) => Err(StoreError::rejected(format!(
                    "the URLFrontier server acked the URL with unknown status {status}"
                ))),
            },
            None => Err(StoreError::unavailable(format!(
                "the URLFrontier server acked {} of {count} URLs of the batch",
                ack.statuses.len()
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_ack_gives_each_url_its_status_and_fails_those_it_leaves_out() {
        let ack = BatchAck {
            id: BATCH_ID.to_string(),
            statuses: vec![
                AckStatus::Ok as i32,
                AckStatus::Skipped as i32,
                AckStatus::Fail as i32,
                9,
            ],
        };
        let got = outcomes(&ack, 5);
        assert_eq!(got[0], Ok(()));
        assert_eq!(got[1], Ok(()));
        assert!(got[2].as_ref().is_err_and(StoreError::is_retryable));
        assert!(got[3].as_ref().is_err_and(|e| !e.is_retryable()));
        assert!(
            got[4]
                .as_ref()
                .is_err_and(|e| e.message().contains("4 of 5"))
        );
    }
}
