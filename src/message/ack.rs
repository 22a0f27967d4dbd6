//! Acknowledgement handles: every URL the spout emits carries one, and it reports exactly once.
//!
//! A handle is resolved explicitly with [`AckHandle::ack`] once the URL's status and its outlinks are
//! durably written, or with [`AckHandle::fail`]. A handle dropped without either (a stage gave up on
//! the URL, or shut down with it queued) reports a failure, so no URL is ever lost silently.

use tokio::sync::mpsc::UnboundedSender;

use crate::model::CrawlUrl;

/// What the spout runner hears about a URL it emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckMessage {
    /// The fetcher took the URL (given as emitted) out of its queue to fetch it: the queue is one
    /// shorter, which the runner reads as demand for more of that queue.
    Started(String),
    /// The URL was processed and its writes are durable.
    Acked(CrawlUrl),
    /// The URL was not processed; it stays due in the frontier and may be emitted again later.
    Failed {
        /// The URL as it was emitted.
        url: CrawlUrl,
        /// Why.
        reason: String,
    },
}

/// The obligation to report the outcome of one emitted URL.
#[derive(Debug)]
pub struct AckHandle {
    url: Option<CrawlUrl>,
    sender: UnboundedSender<AckMessage>,
}

impl AckHandle {
    /// A handle for `url` that reports to `sender`.
    pub fn new(url: CrawlUrl, sender: UnboundedSender<AckMessage>) -> Self {
        AckHandle {
            url: Some(url),
            sender,
        }
    }

    /// The URL as the spout emitted it.
    pub fn url(&self) -> Option<&CrawlUrl> {
        self.url.as_ref()
    }

    /// Tells the runner that the fetcher has started on the URL (it left the fetcher's queue); the
    /// outcome is still owed.
    pub fn started(&self) {
        if let Some(url) = &self.url {
            let _ = self.sender.send(AckMessage::Started(url.url.to_string()));
        }
    }

    /// Reports success.
    pub fn ack(mut self) {
        if let Some(url) = self.url.take() {
            // The runner may already be gone at the very end of a shutdown; nothing is left to tell.
            let _ = self.sender.send(AckMessage::Acked(url));
        }
    }

    /// Reports failure, with the reason.
    pub fn fail(mut self, reason: impl Into<String>) {
        self.report_failure(reason.into());
    }

    fn report_failure(&mut self, reason: String) {
        if let Some(url) = self.url.take() {
            let _ = self.sender.send(AckMessage::Failed { url, reason });
        }
    }
}

impl Drop for AckHandle {
    fn drop(&mut self) {
        self.report_failure("dropped before its status was written".to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    fn crawl_url() -> CrawlUrl {
        CrawlUrl::new(Url::parse("http://a.test/").expect("url"))
    }

    #[test]
    fn reports_exactly_once() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        AckHandle::new(crawl_url(), tx.clone()).ack();
        AckHandle::new(crawl_url(), tx.clone()).fail("boom");
        drop(AckHandle::new(crawl_url(), tx));
        assert_eq!(rx.try_recv(), Ok(AckMessage::Acked(crawl_url())));
        assert!(matches!(rx.try_recv(), Ok(AckMessage::Failed { reason, .. }) if reason == "boom"));
        assert!(
            matches!(rx.try_recv(), Ok(AckMessage::Failed { reason, .. }) if reason.contains("dropped"))
        );
        assert!(rx.try_recv().is_err());
    }
}
