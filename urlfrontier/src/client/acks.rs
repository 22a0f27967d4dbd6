//! The acknowledgements of one PutURLs stream, matched to the writes of the batch by ID.

use squall::frontier::StoreError;
use tracing::debug;

use crate::proto::AckMessage;
use crate::proto::ack_message::Status as AckStatus;

/// One outcome per write of a batch, filled in as acknowledgements arrive. Write `i` is sent with
/// ID `i` (its index in the batch), so that a URL written twice in a batch is acknowledged twice.
#[derive(Debug)]
pub(crate) struct AckBook {
    outcomes: Vec<Option<Result<(), StoreError>>>,
    pending: usize,
}

impl AckBook {
    /// A book for a batch of `len` writes, none acknowledged.
    pub(crate) fn new(len: usize) -> Self {
        AckBook {
            outcomes: vec![None; len],
            pending: len,
        }
    }

    /// The ID write `index` is sent with.
    pub(crate) fn id(index: usize) -> String {
        index.to_string()
    }

    /// Takes one acknowledgement: OK and SKIPPED (the server kept or did not need the write) are
    /// success, FAIL is a retryable failure, an unknown status a rejection. An ID not in the batch
    /// is ignored; a second acknowledgement of a write replaces a success, never a failure.
    pub(crate) fn record(&mut self, ack: &AckMessage) {
        let Some(slot) = ack
            .id
            .parse::<usize>()
            .ok()
            .and_then(|index| self.outcomes.get_mut(index))
        else {
            debug!(id = %ack.id, "URLFrontier acknowledged an ID this batch did not send");
            return;
        };
        let outcome = match AckStatus::try_from(ack.status) {
            Ok(AckStatus::Ok | AckStatus::Skipped) => Ok(()),
            Ok(AckStatus::Fail) => Err(StoreError::unavailable(
                "the URLFrontier server failed to store the URL (ack FAIL)",
            )),
            Err(_) => Err(StoreError::rejected(format!(
                "the URLFrontier server acknowledged the URL with unknown status {}",
                ack.status
            ))),
        };
        match slot {
            None => {
                self.pending -= 1;
                *slot = Some(outcome);
            }
            Some(Ok(())) if outcome.is_err() => *slot = Some(outcome),
            Some(_) => {}
        }
    }

    /// Whether every write has been acknowledged.
    pub(crate) fn is_complete(&self) -> bool {
        self.pending == 0
    }

    /// The outcomes in batch order; a write never acknowledged fails with `ending` (why the stream
    /// ended early), or as unavailable when the stream ended without it.
    pub(crate) fn finish(self, ending: Option<StoreError>) -> Vec<Result<(), StoreError>> {
        let missing = ending.unwrap_or_else(|| {
            StoreError::unavailable(
                "the URLFrontier server ended the PutURLs stream without acknowledging the URL",
            )
        });
        self.outcomes
            .into_iter()
            .map(|outcome| outcome.unwrap_or_else(|| Err(missing.clone())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use squall::frontier::ErrorKind;

    use super::*;

    fn ack(id: &str, status: AckStatus) -> AckMessage {
        AckMessage {
            id: id.to_string(),
            status: status as i32,
        }
    }

    #[test]
    fn acks_match_writes_by_id_in_any_order() {
        let mut book = AckBook::new(3);
        book.record(&ack("2", AckStatus::Ok));
        book.record(&ack("0", AckStatus::Skipped));
        assert!(!book.is_complete());
        book.record(&ack("1", AckStatus::Fail));
        assert!(book.is_complete());
        let outcomes = book.finish(None);
        assert_eq!(outcomes[0], Ok(()));
        assert_eq!(outcomes[2], Ok(()));
        let failed = outcomes[1].as_ref().expect_err("FAIL");
        assert_eq!(failed.kind(), ErrorKind::Unavailable);
    }

    #[test]
    fn a_write_never_acknowledged_fails_as_unavailable_or_with_the_streams_error() {
        let mut book = AckBook::new(2);
        book.record(&ack("0", AckStatus::Ok));
        let outcomes = book.finish(None);
        assert_eq!(outcomes[0], Ok(()));
        let missing = outcomes[1].as_ref().expect_err("missing");
        assert!(missing.is_retryable());
        assert!(
            missing.message().contains("without acknowledging"),
            "{missing}"
        );

        let book = AckBook::new(1);
        let outcomes = book.finish(Some(StoreError::rejected("refused")));
        assert_eq!(outcomes, [Err(StoreError::rejected("refused"))]);
    }

    #[test]
    fn duplicate_and_foreign_acks_change_nothing_but_a_late_failure_counts() {
        let mut book = AckBook::new(2);
        book.record(&ack("0", AckStatus::Fail));
        book.record(&ack("0", AckStatus::Ok));
        book.record(&ack("1", AckStatus::Ok));
        book.record(&ack("1", AckStatus::Ok));
        book.record(&ack("9", AckStatus::Fail));
        book.record(&ack("http://example.com/", AckStatus::Fail));
        assert!(book.is_complete());
        let outcomes = book.finish(None);
        assert!(
            outcomes[0].is_err(),
            "a failure is not undone by a later OK"
        );
        assert_eq!(outcomes[1], Ok(()));

        let mut book = AckBook::new(1);
        book.record(&ack("0", AckStatus::Ok));
        book.record(&ack("0", AckStatus::Fail));
        assert!(book.finish(None)[0].is_err(), "a later FAIL wins");
    }

    #[test]
    fn an_unknown_ack_status_is_a_rejection() {
        let mut book = AckBook::new(1);
        book.record(&AckMessage {
            id: "0".to_string(),
            status: 42,
        });
        let outcome = book.finish(None);
        let error = outcome[0].as_ref().expect_err("unknown status");
        assert_eq!(error.kind(), ErrorKind::Rejected);
    }

    #[test]
    fn the_same_url_twice_in_a_batch_is_acknowledged_twice() {
        // Both writes of one URL carry their own ID, so both get an outcome.
        let mut book = AckBook::new(2);
        book.record(&ack(&AckBook::id(0), AckStatus::Ok));
        book.record(&ack(&AckBook::id(1), AckStatus::Skipped));
        assert_eq!(book.finish(None), [Ok(()), Ok(())]);
    }
}
