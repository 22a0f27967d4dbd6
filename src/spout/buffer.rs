//! The spout's buffer: URLs read from the frontier and not yet emitted, one queue per key, emitted
//! round-robin so that no host monopolises the fetcher.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::frontier::DueUrl;

/// Round-robin buffer of due URLs, deduplicated by URL.
#[derive(Debug, Default)]
pub struct UrlBuffer {
    queues: HashMap<String, VecDeque<DueUrl>>,
    order: VecDeque<String>,
    buffered: HashSet<String>,
}

impl UrlBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a URL to its queue; returns false when it is already buffered.
    pub fn push(&mut self, due: DueUrl) -> bool {
        if !self.buffered.insert(due.url.url.as_str().to_string()) {
            return false;
        }
        match self.queues.get_mut(&due.key) {
            Some(queue) => queue.push_back(due),
            None => {
                self.order.push_back(due.key.clone());
                self.queues.insert(due.key.clone(), VecDeque::from([due]));
            }
        }
        true
    }

    /// Takes the next URL: the head of the first queue, which then moves to the back of the line.
    pub fn pop(&mut self) -> Option<DueUrl> {
        let key = self.order.pop_front()?;
        let queue = self.queues.get_mut(&key)?;
        let due = queue.pop_front()?;
        if queue.is_empty() {
            self.queues.remove(&key);
        } else {
            self.order.push_back(key);
        }
        self.buffered.remove(due.url.url.as_str());
        Some(due)
    }

    /// Whether `url` is buffered.
    pub fn contains(&self, url: &str) -> bool {
        self.buffered.contains(url)
    }

    /// URLs buffered.
    pub fn len(&self) -> usize {
        self.buffered.len()
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.buffered.is_empty()
    }

    /// Queues with at least one URL.
    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CrawlUrl;
    use url::Url;

    fn due(url: &str, key: &str) -> DueUrl {
        DueUrl::new(CrawlUrl::new(Url::parse(url).expect("url")), key)
    }

    #[test]
    fn emits_round_robin_over_queues_and_deduplicates() {
        let mut buffer = UrlBuffer::new();
        for (url, key) in [
            ("http://a.test/1", "a"),
            ("http://a.test/2", "a"),
            ("http://a.test/3", "a"),
            ("http://b.test/1", "b"),
            ("http://c.test/1", "c"),
        ] {
            assert!(buffer.push(due(url, key)));
        }
        assert!(!buffer.push(due("http://a.test/2", "a")));
        assert_eq!(buffer.len(), 5);
        assert_eq!(buffer.queue_count(), 3);
        let order: Vec<String> = std::iter::from_fn(|| buffer.pop())
            .map(|d| d.url.url.to_string())
            .collect();
        assert_eq!(
            order,
            [
                "http://a.test/1",
                "http://b.test/1",
                "http://c.test/1",
                "http://a.test/2",
                "http://a.test/3"
            ]
        );
        assert!(buffer.is_empty());
    }
}
