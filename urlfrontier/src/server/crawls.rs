//! The crawls a server serves, by crawl ID, each opened on first use.
//!
//! URLFrontier names a crawl in most calls; squall gives each crawl a frontier of its own. The
//! crawl `DEFAULT` is the frontier the configuration names; another crawl `ID` is a frontier beside
//! it, named after it (see [`FrontierOpener`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::RwLock;

use super::crawl::{Crawl, CrawlRunConfig};
use squall::frontier::Frontier;

/// How long after a crawl closed opening it again is retried (while its old run lets go of it).
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
    /// When each crawl closed since it was last opened.
    closed: Mutex<HashMap<String, Instant>>,
    settings: CrawlRunConfig,
}

/// The map's lock; it is held for one insertion or removal, which cannot leave it half changed,
/// so poisoning is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Crawls {
    /// Crawls opened by `opener`, each run with `settings`.
    pub fn new(opener: Arc<dyn FrontierOpener>, settings: CrawlRunConfig) -> Self {
        Crawls {
            opener,
            open: RwLock::new(BTreeMap::new()),
            closed: Mutex::default(),
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
        let frontier = self.open_frontier(crawl).await?;
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

    /// Stops crawl `crawl` and forgets it; whether it was open. Its frontier is let go once the
    /// last task of its run ends (a blocking query in flight may outlive the stop), so opening it
    /// again within [`RELEASE_WAIT`] is retried until then.
    pub async fn close(&self, crawl: &str) -> bool {
        let Some(closed) = self.open.write().await.remove(crawl) else {
            return false;
        };
        closed.stop().await;
        lock(&self.closed).insert(crawl.to_string(), Instant::now());
        true
    }

    /// Opens `crawl`'s frontier, trying again for up to [`RELEASE_WAIT`] after the crawl was
    /// closed (an embedded frontier is locked until the old run's last task lets go of it).
    async fn open_frontier(&self, crawl: &str) -> Result<Frontier, CrawlError> {
        let closed_at = lock(&self.closed).remove(crawl);
        loop {
            match self.opener.open(crawl).await {
                Ok(frontier) => return Ok(frontier),
                Err(error) if closed_at.is_some_and(|at| at.elapsed() < RELEASE_WAIT) => {
                    tracing::debug!(crawl, %error, "a crawl just closed; opening it again");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(error) => return Err(error),
            }
        }
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
