//! The crawls a server serves, by crawl ID, each opened on first use.
//!
//! URLFrontier names a crawl in most calls; squall gives each crawl a frontier of its own. The
//! crawl `DEFAULT` is the frontier the configuration names; another crawl `ID` is a frontier beside
//! it, named after it (see [`FrontierOpener`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::RwLock;

use super::crawl::{Crawl, CrawlRunConfig};
use squall::frontier::Frontier;

/// How long closing a crawl waits for its frontier to be let go.
pub const RELEASE_WAIT: Duration = Duration::from_secs(10);

/// The crawl ID URLFrontier clients use when they name none.
pub const DEFAULT_CRAWL: &str = "DEFAULT";

/// Why a crawl's frontier could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The crawl ID cannot name a frontier.
    #[error("crawl ID {0:?} is not usable: use 1 to 64 of a-z, 0-9, '-' and '_' (or DEFAULT)")]
    BadId(String),
    /// The frontier could not be opened.
    #[error("the frontier of crawl {crawl:?} could not be opened: {message}")]
    Open {
        /// The crawl.
        crawl: String,
        /// Why.
        message: String,
    },
}

/// Opens the frontier of a crawl.
#[async_trait]
pub trait FrontierOpener: Send + Sync {
    /// The frontier of crawl `crawl` (a valid ID), created when missing.
    async fn open(&self, crawl: &str) -> Result<Frontier, CrawlError>;

    /// The crawls that have a frontier already (for `ListCrawls`), besides those open.
    async fn existing(&self) -> Vec<String>;

    /// Deletes what is left of crawl `crawl`'s frontier once it is emptied and closed (a
    /// directory, indices); the default keeps it.
    async fn remove(&self, _crawl: &str) -> Result<(), CrawlError> {
        Ok(())
    }
}

/// Checks a crawl ID: `DEFAULT`, or 1 to 64 of `a-z`, `0-9`, `-`, `_`.
pub fn check_id(crawl: &str) -> Result<(), CrawlError> {
    let fine = crawl == DEFAULT_CRAWL
        || (!crawl.is_empty()
            && crawl.len() <= 64
            && crawl
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'));
    if fine {
        Ok(())
    } else {
        Err(CrawlError::BadId(crawl.to_string()))
    }
}

/// The crawls, opened on first use.
#[derive(derive_more::Debug)]
#[debug("Crawls {{ .. }}")]
pub struct Crawls {
    opener: Arc<dyn FrontierOpener>,
    open: RwLock<BTreeMap<String, Arc<Crawl>>>,
    settings: CrawlRunConfig,
}

impl Crawls {
    /// Crawls opened by `opener`, each run with `settings`.
    pub fn new(opener: Arc<dyn FrontierOpener>, settings: CrawlRunConfig) -> Self {
        Crawls {
            opener,
            open: RwLock::new(BTreeMap::new()),
            settings,
        }
    }

    /// Crawl `crawl` if it is open.
    pub async fn get(&self, crawl: &str) -> Option<Arc<Crawl>> {
        self.open.read().await.get(crawl).cloned()
    }

    /// Crawl `crawl`, opened now if it is not yet.
    pub async fn get_or_open(&self, crawl: &str) -> Result<Arc<Crawl>, CrawlError> {
        check_id(crawl)?;
        if let Some(found) = self.get(crawl).await {
            return Ok(found);
        }
        let mut open = self.open.write().await;
        if let Some(found) = open.get(crawl) {
            return Ok(Arc::clone(found));
        }
        let frontier = self.opener.open(crawl).await?;
        let Some(catalog) = frontier.catalog.clone() else {
            return Err(CrawlError::Open {
                crawl: crawl.to_string(),
                message: format!(
                    "{} cannot be listed, so it cannot be served",
                    frontier.description
                ),
            });
        };
        tracing::info!(crawl, frontier = %frontier.description, "crawl opened");
        let started = Crawl::start(frontier, catalog, &self.settings);
        open.insert(crawl.to_string(), Arc::clone(&started));
        Ok(started)
    }

    /// The open crawls, by ID.
    pub async fn all(&self) -> Vec<(String, Arc<Crawl>)> {
        let open = self.open.read().await;
        open.iter()
            .map(|(id, c)| (id.clone(), Arc::clone(c)))
            .collect()
    }

    /// Every crawl known: open, or with a frontier on disk or in the engine.
    pub async fn known(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.open.read().await.keys().cloned().collect();
        ids.extend(self.opener.existing().await);
        ids.sort();
        ids.dedup();
        ids
    }

    /// The crawls that hold URLs, as ListCrawls shows them (the reference service lists the crawls
    /// that have queues): an open crawl whose frontier is empty (such as `DEFAULT` before any
    /// put) is left out; one on disk or in the engine and not open is listed unread.
    pub async fn holding_urls(&self) -> Result<Vec<String>, squall::frontier::StoreError> {
        let open = self.all().await;
        let mut ids = Vec::new();
        for id in self.known().await {
            match open.iter().find(|(open_id, _)| *open_id == id) {
                Some((_, crawl)) => {
                    let everything = squall::frontier::UrlQuery::default();
                    if crawl.catalog().count(&everything).await? > 0 {
                        ids.push(id);
                    }
                }
                None => ids.push(id),
            }
        }
        Ok(ids)
    }

    /// Stops crawl `crawl`, forgets it, and waits (up to [`RELEASE_WAIT`]) until its tasks and the
    /// calls that held it have let go of its frontier, so that the frontier can be removed or
    /// opened again at once (an embedded frontier is locked while open). Whether it was open.
    pub async fn close(&self, crawl: &str) -> bool {
        let Some(closed) = self.open.write().await.remove(crawl) else {
            return false;
        };
        closed.stop().await;
        let handles = closed.frontier_handles();
        drop(closed);
        let deadline = tokio::time::Instant::now() + RELEASE_WAIT;
        while handles.held() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if handles.held() {
            tracing::warn!(
                crawl,
                "the crawl's frontier is still held {RELEASE_WAIT:?} after it stopped (a call \
                 still uses it); removing or opening it again may fail until it is let go"
            );
        }
        true
    }

    /// Lets the opener delete what is left of a crawl's frontier.
    pub async fn remove_frontier(&self, crawl: &str) -> Result<(), CrawlError> {
        self.opener.remove(crawl).await
    }

    /// Stops every crawl (shutdown).
    pub async fn stop_all(&self) {
        let open = std::mem::take(&mut *self.open.write().await);
        for (_, crawl) in open {
            crawl.stop().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_ids_name_files_and_indices_safely() {
        for good in ["DEFAULT", "news", "shop-2026", "a_b"] {
            assert!(check_id(good).is_ok(), "{good}");
        }
        for bad in ["", "News", "../x", "a b", "a.b", &"x".repeat(65)] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }
}
