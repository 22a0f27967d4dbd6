//! [`UrlFrontierSpout`]: due URLs from a URLFrontier server's GetURLs.

use async_trait::async_trait;
use squall::frontier::{BusyUrls, DueUrl, Spout, SpoutError};
use tokio::time::{Instant, timeout_at};
use tracing::{debug, warn};

use super::Connection;
use super::errors::{spout_error, timed_out};
use super::messages::due_url;
use super::settings::ClientSettings;
use crate::IDLE_COUNT;
use crate::proto::url_frontier_client::UrlFrontierClient;
use crate::proto::{GetParams, QueueWithinCrawlParams, UrlInfo, get_params};

/// How long GetURLs must come back empty, with nothing in process, before a crawl on a server
/// other than squall's is called idle: the reference service's politeness gate (2 s at its default
/// delay) and a second more.
pub const IDLE_SETTLE: std::time::Duration = std::time::Duration::from_secs(3);

/// Reads due URLs from a URLFrontier server: each batch is one GetURLs call for the crawl, at most
/// `max_queues` queues and `max_urls_per_queue` URLs per queue.
///
/// The server keeps track of what it handed out: a URL is not handed out again for
/// `delay_requestable`, and the status write that follows its fetch (through
/// [`UrlFrontierStore`](super::UrlFrontierStore)) settles it. So [`ack`](Spout::ack) and
/// [`fail`](Spout::fail) have nothing to do: a URL that failed, or whose status could not be
/// written, is handed out again once `delay_requestable` has passed.
///
/// It does not claim [`reads_past_busy`](Spout::reads_past_busy): a squall server hands out nothing
/// more of a queue while URLs of it are out, so asking again as soon as the fetcher starts a queue's
/// last URL would bring nothing of that queue.
#[derive(derive_more::Debug)]
pub struct UrlFrontierSpout {
    #[debug(skip)]
    client: UrlFrontierClient<Connection>,
    settings: ClientSettings,
}

impl UrlFrontierSpout {
    /// A spout over a connection to the server, configured by `settings`.
    pub fn new(channel: Connection, settings: ClientSettings) -> Self {
        UrlFrontierSpout {
            client: UrlFrontierClient::new(channel),
            settings,
        }
    }

    /// The GetURLs request of one batch.
    fn request(&self) -> GetParams {
        let delay = self.settings.delay_requestable.as_secs();
        GetParams {
            max_urls_per_queue: self.settings.max_urls_per_queue,
            max_queues: self.settings.max_queues,
            key: String::new(),
            delay_requestable: u32::try_from(delay).unwrap_or(u32::MAX),
            item: Some(get_params::Item::CrawlId(self.settings.crawl_id.clone())),
        }
    }

    /// The URLs one GetURLs call hands out. A stream that breaks or times out after some URLs
    /// arrived gives those (the server counts them as handed out); before any, the error.
    async fn get_urls(&mut self) -> Result<Vec<UrlInfo>, SpoutError> {
        let timeout = self.settings.request_timeout;
        let deadline = Instant::now() + timeout;
        let call = self.client.get_ur_ls(self.request());
        let mut stream = match timeout_at(deadline, call).await {
            Ok(Ok(response)) => response.into_inner(),
            Ok(Err(status)) => return Err(spout_error("GetURLs", status)),
            Err(_) => return Err(SpoutError::unavailable(timed_out("GetURLs", timeout))),
        };
        let mut infos = Vec::new();
        let failure = loop {
            match timeout_at(deadline, stream.message()).await {
                Ok(Ok(Some(info))) => infos.push(info),
                Ok(Ok(None)) => return Ok(infos),
                Ok(Err(status)) => break spout_error("GetURLs", status),
                Err(_) => break SpoutError::unavailable(timed_out("GetURLs", timeout)),
            }
        };
        if infos.is_empty() {
            return Err(failure);
        }
        warn!(
            error = %failure,
            received = infos.len(),
            "the GetURLs answer broke off; using the URLs received"
        );
        Ok(infos)
    }
}

#[async_trait]
impl Spout for UrlFrontierSpout {
    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let infos = self.get_urls().await?;
        let received = infos.len();
        let mut batch = Vec::with_capacity(received);
        for info in infos {
            let written = info.url.clone();
            match due_url(info, self.settings.partition) {
                Ok(due) if busy.contains(due.url.url.as_str()) => {}
                Ok(due) => batch.push(due),
                Err(error) => {
                    warn!(url = %written, %error, "URLFrontier handed out a malformed URL; skipped")
                }
            }
        }
        debug!(received, due = batch.len(), "URLFrontier GetURLs");
        Ok(batch)
    }

    /// Any server's GetURLs may come back empty while URLs are due: the reference service hands
    /// out nothing of a queue within its politeness gate (a queue that handed out URLs in second T
    /// serves again from T + 2 at its default 1 s delay). So the crawl is called idle only after
    /// empty answers that lasted [`IDLE_SETTLE`].
    fn visibility_delay(&self) -> std::time::Duration {
        IDLE_SETTLE
    }

    /// A URL put is handed out at once by the servers this spout knows (squall's buffers it within
    /// its reader's next query): no wait after an ack before asking again.
    fn write_visibility(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }

    /// Asks the server for the crawl's stats: a squall server's [`IDLE_COUNT`] count when present;
    /// otherwise idle when no URL is in process, by any worker (`inProcess`: handed out and
    /// neither put back nor lapsed). `size` is not read: the reference service counts in it the
    /// URLs scheduled for a later re-fetch, which a crawl run until idle does not wait for.
    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        let request = QueueWithinCrawlParams {
            key: String::new(),
            crawl_id: self.settings.crawl_id.clone(),
            local: false,
        };
        let timeout = self.settings.request_timeout;
        let stats = match tokio::time::timeout(timeout, self.client.get_stats(request)).await {
            Ok(Ok(response)) => response.into_inner(),
            Ok(Err(status)) => return Err(spout_error("GetStats", status)),
            Err(_) => return Err(SpoutError::unavailable(timed_out("GetStats", timeout))),
        };
        Ok(match stats.counts.get(IDLE_COUNT) {
            Some(idle) => *idle != 0,
            None => stats.in_process == 0,
        })
    }
}
