//! URLs waiting for the fetcher (buffered in the runner, or emitted and not yet started), counted
//! per queue and shared with the spout: a spout keeps a queue's waiting URLs within its share, and
//! when a queue's count falls to zero the fetcher has nothing of it left to start, so the runner may
//! ask the frontier for more of it at once.

use std::collections::HashMap;
use std::sync::Arc;

use dashmap::{DashMap, DashSet};

/// Waiting URLs, by queue; shared with the spout through
/// [`BusyUrls::is_waiting`](super::BusyUrls::is_waiting) and
/// [`BusyUrls::waiting_in`](super::BusyUrls::waiting_in).
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    key_of: HashMap<String, String>,
    per_key: Arc<DashMap<String, usize>>,
    urls: Arc<DashSet<String>>,
}

impl Waiting {
    /// The waiting URLs, shared with the spout.
    pub(crate) fn urls(&self) -> Arc<DashSet<String>> {
        Arc::clone(&self.urls)
    }

    /// The waiting URLs per queue, shared with the spout.
    pub(crate) fn per_key(&self) -> Arc<DashMap<String, usize>> {
        Arc::clone(&self.per_key)
    }

    /// `url` of queue `key` was read into the buffer.
    pub(crate) fn buffered(&mut self, url: &str, key: &str) {
        if self
            .key_of
            .insert(url.to_string(), key.to_string())
            .is_none()
        {
            *self.per_key.entry(key.to_string()).or_default() += 1;
        }
        self.urls.insert(url.to_string());
    }

    /// `url` left the fetcher's queue (started, or resolved without a fetch). Returns true when that
    /// was the last waiting URL of its queue.
    pub(crate) fn left(&mut self, url: &str) -> bool {
        self.urls.remove(url);
        let Some(key) = self.key_of.remove(url) else {
            return false;
        };
        let mut ran_dry = false;
        self.per_key.remove_if_mut(&key, |_, count| {
            *count = count.saturating_sub(1);
            ran_dry = *count == 0;
            ran_dry
        });
        ran_dry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_runs_dry_when_its_last_waiting_url_leaves() {
        let mut waiting = Waiting::default();
        waiting.buffered("a/1", "a");
        waiting.buffered("a/2", "a");
        waiting.buffered("a/2", "a");
        waiting.buffered("b/1", "b");
        let per_key = waiting.per_key();
        assert_eq!(per_key.get("a").map(|c| *c), Some(2));
        assert!(waiting.urls().contains("a/1"));
        assert!(!waiting.left("a/1"));
        assert!(!waiting.urls().contains("a/1"));
        assert!(waiting.left("b/1"));
        assert!(waiting.left("a/2"));
        assert!(per_key.is_empty());
        // Told twice (started, then acked): only the first counts.
        assert!(!waiting.left("a/2"));
        assert!(!waiting.left("never/buffered"));
    }
}
