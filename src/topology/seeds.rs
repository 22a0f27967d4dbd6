//! Seeds: parsed, normalized and filtered like outlinks, then written to the frontier as DISCOVERED.

use std::sync::Arc;

use url::Url;

use crate::fetch::Partitioner;
use crate::filter::{CanonicalUrlNormalizer, FilterChain};
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
    pub(super) normalizer: Arc<CanonicalUrlNormalizer>,
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
            let (address, metadata) = match seed_line(raw) {
                Ok(parts) => parts,
                Err(reason) => {
                    report.rejected.push((raw.to_string(), reason));
                    continue;
                }
            };
            let parsed = match Url::parse(address) {
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
            let mut seed = CrawlUrl::seed(url);
            for (key, value) in metadata {
                seed.metadata.add(key, value);
            }
            let Some(url) = self.filters.filter(None, seed.url.clone(), &seed.metadata) else {
                report
                    .rejected
                    .push((raw.to_string(), "refused by the URL filters".to_string()));
                continue;
            };
            // The user named this host: it may be private (a site on the intranet or loopback).
            if let Some(host) = url.host_str() {
                self.partitioner.resolver().trust(host);
            }
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

/// A seed line's metadata, `key=value` fields in order.
type SeedMetadata<'a> = Vec<(&'a str, &'a str)>;

/// A seed line as StormCrawler writes it: the URL, then metadata as tab-separated `key=value`
/// fields (a key given twice has two values). `Err` names a field that is not `key=value`.
fn seed_line(line: &str) -> Result<(&str, SeedMetadata<'_>), String> {
    let mut fields = line.split('\t');
    let url = fields.next().unwrap_or_default().trim();
    let mut metadata = Vec::new();
    for field in fields.map(str::trim).filter(|f| !f.is_empty()) {
        match field.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                metadata.push((key.trim(), value.trim()));
            }
            _ => return Err(format!("metadata field {field:?} is not key=value")),
        }
    }
    Ok((url, metadata))
}

#[cfg(test)]
mod tests {
    use super::seed_line;

    #[test]
    fn a_seed_line_carries_tab_separated_metadata() {
        assert_eq!(
            seed_line("https://a.test/\tisSitemap=true\tgroup=x\tgroup=y"),
            Ok((
                "https://a.test/",
                vec![("isSitemap", "true"), ("group", "x"), ("group", "y")]
            ))
        );
        assert_eq!(
            seed_line("https://a.test/"),
            Ok(("https://a.test/", vec![]))
        );
        let error = seed_line("https://a.test/\tnot-a-pair").expect_err("bad field");
        assert!(error.contains("not-a-pair"), "{error}");
    }
}
