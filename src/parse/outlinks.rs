//! A page's links made outlinks: normalized and filtered by the URL filter chain, deduplicated,
//! each with the metadata it inherits and its partition key.

use std::collections::HashMap;
use std::collections::hash_map::{Entry, RandomState};
use std::hash::BuildHasher;

use url::Url;

use super::ParserBolt;
use crate::message::Outlink;
use crate::model::{CrawlUrl, Metadata, key_matches, keys, partition_key};

impl ParserBolt {
    /// Normalizes, filters and deduplicates links, and gives each its inherited metadata and key;
    /// at most `cap` are kept.
    pub(super) fn outlinks(
        &self,
        parent: &CrawlUrl,
        links: Vec<Url>,
        cap: Option<usize>,
    ) -> Vec<Outlink> {
        let capacity = cap.map_or(links.len(), |max| max.min(links.len()));
        let mut outlinks: Vec<Outlink> = Vec::with_capacity(capacity);
        let mut seen = Seen::with_capacity(capacity);
        let mut keys = KeyCache::default();
        let inherited = self.inherited_metadata(parent);
        for link in links {
            if cap.is_some_and(|max| outlinks.len() >= max) {
                break;
            }
            let Some(link) = self.filters.filter(Some(parent), link, &inherited) else {
                continue;
            };
            if link == parent.url || seen.contains_or_insert(link.as_str(), &outlinks) {
                continue;
            }
            let key = keys.key(&link, |link| {
                partition_key(link, &inherited, self.settings.partition_mode)
            });
            outlinks.push(Outlink {
                url: CrawlUrl {
                    url: link,
                    metadata: inherited.clone(),
                },
                key,
            });
        }
        outlinks
    }

    /// The metadata every outlink of `parent` starts with.
    fn inherited_metadata(&self, parent: &CrawlUrl) -> Metadata {
        let mut metadata = Metadata::new();
        for (key, values) in parent.metadata.iter() {
            if key_matches(&self.settings.transfer_keys, key) {
                metadata.set_values(key, values.to_vec());
            }
        }
        if self.settings.track_path {
            metadata.set(keys::URL_PATH, parent.url.as_str());
        }
        if self.settings.track_depth {
            metadata.set(keys::DEPTH, (parent.depth() + 1).to_string());
        }
        metadata
    }
}

/// The URLs already kept as a page's outlinks, found by their hash instead of a copy of each: a
/// hash leads to the first outlink that has it.
struct Seen {
    hasher: RandomState,
    first: HashMap<u64, usize>,
}

impl Seen {
    fn with_capacity(capacity: usize) -> Self {
        Seen {
            hasher: RandomState::new(),
            first: HashMap::with_capacity(capacity),
        }
    }

    /// Whether `url` is one of `kept`; if not, it is remembered as the next one pushed to `kept`.
    fn contains_or_insert(&mut self, url: &str, kept: &[Outlink]) -> bool {
        match self.first.entry(self.hasher.hash_one(url)) {
            Entry::Vacant(entry) => {
                entry.insert(kept.len());
                false
            }
            Entry::Occupied(entry) => {
                let first = kept.get(*entry.get());
                first.is_some_and(|outlink| outlink.url.url.as_str() == url)
                    // Another URL with the same hash: rare enough to compare with them all.
                    || kept.iter().any(|outlink| outlink.url.url.as_str() == url)
            }
        }
    }
}

/// The partition key of the last host seen: a page's links share a few hosts, and their key
/// depends on nothing else (they inherit the same metadata).
#[derive(Default)]
struct KeyCache {
    last: Option<(Option<String>, String)>,
}

impl KeyCache {
    /// The key of `link`, from `compute` unless the last link had the same host.
    fn key(&mut self, link: &Url, compute: impl FnOnce(&Url) -> String) -> String {
        let host = link.host_str();
        if let Some((last_host, key)) = &self.last
            && last_host.as_deref() == host
        {
            return key.clone();
        }
        let key = compute(link);
        self.last = Some((host.map(str::to_string), key.clone()));
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outlink(url: &str) -> Outlink {
        Outlink {
            url: CrawlUrl::new(Url::parse(url).expect("test URL")),
            key: String::new(),
        }
    }

    #[test]
    fn seen_finds_every_kept_url_even_when_hashes_collide() {
        let mut seen = Seen::with_capacity(4);
        let mut kept = Vec::new();
        for url in ["https://a.test/1", "https://a.test/2"] {
            assert!(!seen.contains_or_insert(url, &kept));
            kept.push(outlink(url));
        }
        assert!(seen.contains_or_insert("https://a.test/1", &kept));
        assert!(seen.contains_or_insert("https://a.test/2", &kept));
        // A collision: the hash of /3 made to lead to /1's entry.
        let hash = seen.hasher.hash_one("https://a.test/3");
        seen.first.insert(hash, 0);
        assert!(!seen.contains_or_insert("https://a.test/3", &kept));
        kept.push(outlink("https://a.test/3"));
        assert!(seen.contains_or_insert("https://a.test/3", &kept));
    }

    #[test]
    fn key_cache_reuses_the_key_of_the_same_host_only() {
        let mut cache = KeyCache::default();
        let mut computed = 0;
        let url = |s: &str| Url::parse(s).expect("test URL");
        for (link, expected) in [
            ("https://a.test/1", "a.test"),
            ("https://a.test/2", "a.test"),
            ("https://b.test/", "b.test"),
            ("mailto:x@a.test", "_DEFAULT_"),
            ("data:text/plain,x", "_DEFAULT_"),
            ("https://a.test/3", "a.test"),
        ] {
            let key = cache.key(&url(link), |link| {
                computed += 1;
                link.host_str().unwrap_or("_DEFAULT_").to_string()
            });
            assert_eq!(key, expected, "{link}");
        }
        assert_eq!(computed, 4);
    }
}
