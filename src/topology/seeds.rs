//! Seeds: parsed, normalized and filtered like outlinks, then written to the frontier as DISCOVERED.

use std::sync::Arc;

use url::Url;

use crate::fetch::Partitioner;
use crate::filter::{BasicNormalizer, FilterChain};
use crate::frontier::{QueueReport, StatusStore, StatusWrite};
use crate::model::{CrawlUrl, Status};
use crate::schedule::Scheduler;

/// What happened to the seeds given to [`Crawler::inject`](super::Crawler::inject).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeedReport {
    /// Seeds written to the frontier (or already in it).
    pub accepted: usize,
    /// Seeds refused, with the reason.
    pub rejected: Vec<(String, String)>,
}

/// What seeds go through before they enter the frontier.
pub(crate) struct SeedFilters {
    pub(super) normalizer: Arc<BasicNormalizer>,
    pub(super) filters: FilterChain,
    /// Keys the seeds (byIP: by the address each host resolves to).
    pub(super) partitioner: Partitioner,
}

impl SeedFilters {
    /// Parses, normalizes and filters seeds, and writes them as DISCOVERED.
    pub(crate) async fn inject<'a>(
        &self,
        seeds: impl IntoIterator<Item = &'a str>,
        scheduler: &dyn Scheduler,
        store: &dyn StatusStore,
    ) -> SeedReport {
        let mut report = SeedReport::default();
        let mut writes = Vec::new();
        let now = chrono::Utc::now();
        for raw in seeds {
            let raw = raw.trim();
            if raw.is_empty() || raw.starts_with('#') {
                continue;
            }
            let parsed = match Url::parse(raw) {
                Ok(url) => url,
                Err(error) => {
                    report
                        .rejected
                        .push((raw.to_string(), format!("not a valid URL: {error}")));
                    continue;
                }
            };
            if parsed.host_str().is_none() {
                report
                    .rejected
                    .push((raw.to_string(), "the URL has no host".to_string()));
                continue;
            }
            let url = self.normalizer.normalize(parsed);
            let seed = CrawlUrl::seed(url);
            let Some(url) = self.filters.filter(None, seed.url.clone(), &seed.metadata) else {
                report
                    .rejected
                    .push((raw.to_string(), "refused by the URL filters".to_string()));
                continue;
            };
            let key = self.partitioner.key_or_host(&url, &seed.metadata).await;
            let next_fetch = scheduler.schedule(Status::Discovered, &seed.metadata, now);
            writes.push(StatusWrite {
                url: CrawlUrl {
                    url,
                    metadata: seed.metadata,
                },
                key,
                status: Status::Discovered,
                next_fetch,
                queue: QueueReport::default(),
            });
        }
        let urls: Vec<String> = writes.iter().map(|w| w.url.url.to_string()).collect();
        for (url, outcome) in urls.into_iter().zip(store.store(writes).await) {
            match outcome {
                Ok(()) => report.accepted += 1,
                Err(error) => report
                    .rejected
                    .push((url, format!("could not be written: {error}"))),
            }
        }
        report
    }
}
