//! What a frontier holds, for people and services that list, count and delete rather than crawl:
//! the [`Catalog`] trait (the URLFrontier server's `ListURLs`, `CountURLs`, `GetURLStatus`,
//! `ListQueues`, `DeleteQueue` and `DeleteCrawl` stand on it).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use super::rules::{RuleChange, ServedRules};
use crate::model::{CrawlUrl, Status};

/// A URL as the frontier keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredUrl {
    /// The URL and its persisted metadata.
    pub url: CrawlUrl,
    /// Its partition key (queue).
    pub key: String,
    /// Its status.
    pub status: Status,
    /// When it is due next; `None` means never.
    pub next_fetch: Option<DateTime<Utc>>,
    /// When the frontier first stored it, to the second; `None` where the frontier keeps no such
    /// date, or stored the URL before it kept them.
    pub created: Option<DateTime<Utc>>,
}

/// Which URLs a listing or a count covers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlQuery {
    /// Only the URLs of this queue; `None` for every queue.
    pub key: Option<String>,
    /// Only the URLs containing this text; `None` for all.
    pub contains: Option<String>,
    /// Whether `contains` ignores case.
    pub ignore_case: bool,
    /// Only the URLs with a next fetch (`Some(true)`: due now or later), or only those never due
    /// again (`Some(false)`: done for good); `None` for both.
    pub scheduled: Option<bool>,
}

impl UrlQuery {
    /// Whether `url` of queue `key`, due again (`scheduled`) or not, is covered (the reference for
    /// implementations that filter in memory).
    pub fn covers(&self, url: &str, key: &str, scheduled: bool) -> bool {
        self.scheduled.is_none_or(|wanted| wanted == scheduled) && self.matches(url, key)
    }

    /// Whether `url` of queue `key` is covered by the key and text filters (the schedule filter
    /// left aside: see [`covers`](Self::covers)).
    pub fn matches(&self, url: &str, key: &str) -> bool {
        if self.key.as_deref().is_some_and(|wanted| wanted != key) {
            return false;
        }
        match &self.contains {
            None => true,
            Some(text) if self.ignore_case => url.to_lowercase().contains(&text.to_lowercase()),
            Some(text) => url.contains(text.as_str()),
        }
    }
}

/// One page of queue keys, in key order, with how many there are in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueuePage {
    /// The keys of this page.
    pub keys: Vec<String>,
    /// How many queues the frontier holds in all.
    pub total: u64,
}

/// What a frontier holds: URLs and queues to look up, list, count and delete.
///
/// Listings are in a stable order (URLs by queue then URL, queues by key), so that pages given by
/// `start` and `size` neither repeat nor skip entries while nothing is written. Deleting a queue
/// removes its URLs and whatever the frontier keeps about the queue itself.
#[async_trait]
pub trait Catalog: Send + Sync {
    /// The URL's record, if the frontier knows it.
    async fn lookup(&self, url: &str) -> Result<Option<StoredUrl>, StoreError>;

    /// How many URLs `query` covers.
    async fn count(&self, query: &UrlQuery) -> Result<u64, StoreError>;

    /// Makes every write acknowledged so far show in counts and listings: an index refresh for a
    /// frontier in the engine, whose reads otherwise see writes only once the index refreshed on
    /// its own schedule (StormCrawler's status index: every 5 s). The default does nothing, for
    /// frontiers whose reads see every write at once.
    async fn settle(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The URLs `query` covers, from the `start`th, at most `size` of them.
    async fn list(
        &self,
        query: &UrlQuery,
        start: u64,
        size: u64,
    ) -> Result<Vec<StoredUrl>, StoreError>;

    /// How many queues hold URLs that `query` covers.
    async fn count_queues(&self, query: &UrlQuery) -> Result<u64, StoreError>;

    /// How many URLs there are of each status (statuses with none left out).
    async fn count_by_status(&self) -> Result<Vec<(Status, u64)>, StoreError>;

    /// The queues, from the `start`th in key order, at most `size` of them.
    async fn queues(&self, start: u64, size: u64) -> Result<QueuePage, StoreError>;

    /// Deletes a queue and its URLs, returning how many URLs went.
    async fn delete_queue(&self, key: &str) -> Result<u64, StoreError>;

    /// Deletes every URL and queue, returning how many URLs went.
    async fn delete_all(&self) -> Result<u64, StoreError>;

    /// Whether the frontier keeps when it first stored each URL ([`StoredUrl::created`]), and so
    /// can [`purge_created_before`](Self::purge_created_before). The default: no.
    fn keeps_creation_dates(&self) -> bool {
        false
    }

    /// Deletes the URLs of queue `key` (every queue: `None`), in any status, that the frontier
    /// first stored before `cutoff` (URLFrontier's `PurgeURLs`); returns how many went. A URL whose
    /// creation the frontier does not know (stored before it kept dates, or rewritten by a program
    /// that does not keep them) stays: an age is never guessed. Queues stay, even emptied. The
    /// default refuses, for frontiers that keep no creation dates.
    async fn purge_created_before(
        &self,
        key: Option<&str>,
        cutoff: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let _ = (key, cutoff);
        Err(StoreError::rejected(
            "this frontier keeps no creation dates, so it cannot purge URLs by age",
        ))
    }

    /// Whether the frontier keeps the rules of the programs serving it ([`rules`](Self::rules)).
    fn keeps_rules(&self) -> bool {
        false
    }

    /// The rules kept for the programs serving the frontier (none by default).
    async fn rules(&self) -> Result<ServedRules, StoreError> {
        Ok(ServedRules::default())
    }

    /// Keeps `change`, durably when it returns `Ok`. The default refuses.
    async fn keep_rule(&self, change: RuleChange) -> Result<(), StoreError> {
        let _ = change;
        Err(StoreError::rejected(
            "this frontier keeps no rules for the programs serving it",
        ))
    }

    /// The counts a live view shows, in one go: URLs by status, scheduled, the queues holding them
    /// and (where it is cheap) the queues due now. The default asks [`count_by_status`],
    /// [`count`] and [`count_queues`]; a frontier that can count them in one pass does.
    ///
    /// [`count_by_status`]: Catalog::count_by_status
    /// [`count`]: Catalog::count
    /// [`count_queues`]: Catalog::count_queues
    async fn census(&self) -> Result<Census, StoreError> {
        let scheduled = UrlQuery {
            scheduled: Some(true),
            ..UrlQuery::default()
        };
        Ok(Census {
            by_status: self.count_by_status().await?,
            scheduled: self.count(&scheduled).await?,
            queues_scheduled: self.count_queues(&scheduled).await?,
            queues_due_now: None,
        })
    }
}

/// What a frontier holds, counted for a live view ([`Catalog::census`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Census {
    /// URLs by status (statuses with none left out).
    pub by_status: Vec<(Status, u64)>,
    /// URLs due now or later.
    pub scheduled: u64,
    /// Queues holding URLs due now or later.
    pub queues_scheduled: u64,
    /// Queues whose earliest URL is due now, when the frontier counts them cheaply.
    pub queues_due_now: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_filters_by_queue_and_text() {
        let all = UrlQuery::default();
        assert!(all.matches("http://a.test/x", "a.test"));
        let queue = UrlQuery {
            key: Some("a.test".into()),
            ..UrlQuery::default()
        };
        assert!(queue.matches("http://a.test/x", "a.test"));
        assert!(!queue.matches("http://b.test/x", "b.test"));
        let text = UrlQuery {
            contains: Some("/Post".into()),
            ..UrlQuery::default()
        };
        assert!(!text.matches("http://a.test/post/1", "a.test"));
        let folded = UrlQuery {
            ignore_case: true,
            ..text
        };
        assert!(folded.matches("http://a.test/post/1", "a.test"));
    }
}
