//! Several spout instances read as one: StormCrawler's spout `parallelism` in one process.
//!
//! Each instance keeps its own budget and state (a status-index spout over its share of the
//! shards, say); a query asks every instance at once, and a URL's ack or fail goes back to the
//! instance that returned it.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use dashmap::DashSet;
use futures::future::join_all;
use tracing::warn;

use crate::frontier::{BusyUrls, DueUrl, Spout, SpoutError};
use crate::model::CrawlUrl;

/// Spout instances read together as one [`Spout`].
///
/// Invariants: a URL returned by instance `i` is acked or failed on instance `i` only (it is
/// routed by its URL, kept from its return until its ack or fail); an instance that fails its
/// query does not hide the URLs the others returned in the same round; the whole is idle only
/// when every instance says its frontier is.
#[derive(derive_more::Debug)]
pub struct SpoutInstances {
    #[debug("{}", instances.len())]
    instances: Vec<Box<dyn Spout>>,
    /// The instance each URL out in the topology came from.
    #[debug("{}", owners.len())]
    owners: HashMap<String, usize>,
    /// The instance each URL acked or failed lately came from, while the runner still counts it
    /// among the recently done.
    #[debug(skip)]
    finished: HashMap<String, usize>,
}

impl SpoutInstances {
    /// The instances, read together; `None` when there are none.
    pub fn new(instances: Vec<Box<dyn Spout>>) -> Option<Self> {
        if instances.is_empty() {
            return None;
        }
        Some(SpoutInstances {
            instances,
            owners: HashMap::new(),
            finished: HashMap::new(),
        })
    }

    /// How many instances are read.
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Never true: there is at least one instance.
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The instance that returned `url`, moved to the recently finished as it is asked.
    fn owner_of(&mut self, url: &CrawlUrl) -> Option<usize> {
        let owner = self.owners.remove(url.url.as_str())?;
        self.finished.insert(url.url.to_string(), owner);
        Some(owner)
    }

    /// Each instance's view of `busy`: the URLs in the topology and recently done that it
    /// returned (the others are no business of its queries: a status index's instances read
    /// disjoint shards), the waiting counts and the purgatory shared. Instance `i` of N would
    /// otherwise leave all N instances' URLs out of every query it sends.
    fn shares(&mut self, busy: &BusyUrls) -> Vec<BusyUrls> {
        let n = self.instances.len();
        let tracked: Vec<DashSet<String>> = (0..n).map(|_| DashSet::new()).collect();
        for url in busy.tracked_set().iter() {
            if let Some(&owner) = self.owners.get(url.key().as_str()) {
                tracked[owner].insert(url.key().clone());
            }
        }
        let mut recent: Vec<Vec<String>> = vec![Vec::new(); n];
        let mut finished = HashMap::with_capacity(busy.recently_done().len());
        for url in busy.recently_done() {
            if let Some((url, owner)) = self.finished.remove_entry(url.as_str()) {
                recent[owner].push(url.clone());
                finished.insert(url, owner);
            }
        }
        self.finished = finished;
        tracked
            .into_iter()
            .zip(recent)
            .map(|(tracked, recent)| busy.share(tracked, recent))
            .collect()
    }
}

#[async_trait]
impl Spout for SpoutInstances {
    /// Asks every instance at once; their answers, concatenated in instance order. A failed
    /// instance is logged and left out of this round, unless every instance failed: then the
    /// first error is returned.
    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let shares = self.shares(busy);
        let asks = self.instances.iter_mut().zip(&shares);
        let answers = join_all(asks.map(|(s, share)| s.next_batch(share))).await;
        let mut batch = Vec::new();
        let mut first_error = None;
        let mut answered = false;
        for (instance, answer) in answers.into_iter().enumerate() {
            match answer {
                Ok(urls) => {
                    answered = true;
                    for due in urls {
                        self.owners.insert(due.url.url.to_string(), instance);
                        batch.push(due);
                    }
                }
                Err(error) => {
                    warn!(instance, %error, "a spout instance's query failed");
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) if !answered => Err(error),
            _ => Ok(batch),
        }
    }

    async fn ack(&mut self, url: &CrawlUrl) {
        if let Some(instance) = self.owner_of(url) {
            self.instances[instance].ack(url).await;
        }
    }

    async fn fail(&mut self, url: &CrawlUrl) {
        if let Some(instance) = self.owner_of(url) {
            self.instances[instance].fail(url).await;
        }
    }

    fn visibility_delay(&self) -> Duration {
        let delays = self.instances.iter().map(|s| s.visibility_delay());
        delays.max().unwrap_or_default()
    }

    fn reads_past_busy(&self) -> bool {
        self.instances.iter().any(|s| s.reads_past_busy())
    }

    fn write_visibility(&self) -> Duration {
        let delays = self.instances.iter().map(|s| s.write_visibility());
        delays.max().unwrap_or_default()
    }

    async fn frontier_idle(&mut self) -> Result<bool, SpoutError> {
        for instance in &mut self.instances {
            if !instance.frontier_idle().await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    async fn close(&mut self) {
        join_all(self.instances.iter_mut().map(|s| s.close())).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{EmbeddedFrontier, QueryLimits, QueueReport, StatusStore, StatusWrite};
    use crate::model::{Metadata, Status};

    async fn frontier_with(dir: &std::path::Path, urls: &[&str]) -> EmbeddedFrontier {
        let frontier = EmbeddedFrontier::open(dir).expect("open");
        let writes = urls
            .iter()
            .map(|url| {
                let url = url::Url::parse(url).expect("url");
                StatusWrite {
                    key: url.host_str().unwrap_or_default().to_string(),
                    url: CrawlUrl {
                        url,
                        metadata: Metadata::new(),
                    },
                    status: Status::Discovered,
                    next_fetch: Some(chrono::Utc::now()),
                    queue: QueueReport::default(),
                }
            })
            .collect();
        for outcome in frontier.store(writes).await {
            outcome.expect("stored");
        }
        frontier.flush().await.expect("flush");
        frontier
    }

    #[tokio::test]
    async fn each_instance_answers_and_hears_back_about_its_own_urls() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = frontier_with(
            &dir.path().join("a"),
            &["http://a.test/1", "http://a.test/2"],
        )
        .await;
        let b = frontier_with(&dir.path().join("b"), &["http://b.test/1"]).await;
        let spouts: Vec<Box<dyn Spout>> = vec![
            Box::new(a.spout(QueryLimits::default())),
            Box::new(b.spout(QueryLimits::default())),
        ];
        let mut instances = SpoutInstances::new(spouts).expect("two instances");
        let batch = instances
            .next_batch(&BusyUrls::none())
            .await
            .expect("batch");
        let mut urls: Vec<String> = batch.iter().map(|d| d.url.url.to_string()).collect();
        urls.sort();
        assert_eq!(
            urls,
            ["http://a.test/1", "http://a.test/2", "http://b.test/1"]
        );
        assert_eq!(instances.owners.get("http://b.test/1"), Some(&1));
        // Each instance's queries leave out only the URLs it returned.
        let busy = BusyUrls::in_topology_of(urls.iter().cloned());
        let shares = instances.shares(&busy);
        let mut own: Vec<Vec<String>> = shares
            .iter()
            .map(|share| share.in_topology_urls())
            .collect();
        own.iter_mut().for_each(|urls| urls.sort());
        assert_eq!(
            own,
            [
                vec!["http://a.test/1", "http://a.test/2"],
                vec!["http://b.test/1"]
            ]
        );
        for due in &batch {
            instances.ack(&due.url).await;
        }
        assert!(
            instances.owners.is_empty(),
            "every ack went to its instance"
        );
    }

    #[test]
    fn no_instance_is_no_spout() {
        assert!(SpoutInstances::new(Vec::new()).is_none());
    }
}
