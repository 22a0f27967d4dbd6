//! URLs the runner emitted that the fetcher has not started yet, counted per queue: when a queue's
//! count falls to zero, the fetcher has nothing of that queue left to start, and the runner may ask
//! the frontier for more of it at once.

use std::collections::HashMap;
use std::sync::Arc;

use dashmap::DashSet;

/// Emitted, not yet started URLs, by queue; their URLs (and the buffered ones) are shared with the
/// spout through [`BusyUrls::is_waiting`](super::BusyUrls::is_waiting).
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    key_of: HashMap<String, String>,
    per_key: HashMap<String, usize>,
    /// Buffered or emitted and not started: what a spout counts toward a queue's share.
    shared: Arc<DashSet<String>>,
}

impl Waiting {
    /// The set shared with the spout.
    pub(crate) fn shared(&self) -> Arc<DashSet<String>> {
        Arc::clone(&self.shared)
    }

    /// `url` was read into the buffer.
    pub(crate) fn buffered(&self, url: &str) {
        self.shared.insert(url.to_string());
    }

    /// `url` of queue `key` went to the fetcher.
    pub(crate) fn emitted(&mut self, url: &str, key: &str) {
        *self.per_key.entry(key.to_string()).or_default() += 1;
        self.key_of.insert(url.to_string(), key.to_string());
    }

    /// `url` left the fetcher's queue (started, or resolved without a fetch). Returns true when that
    /// was the last waiting URL of its queue.
    pub(crate) fn left(&mut self, url: &str) -> bool {
        self.shared.remove(url);
        let Some(key) = self.key_of.remove(url) else {
            return false;
        };
        let Some(count) = self.per_key.get_mut(&key) else {
            return false;
        };
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.per_key.remove(&key);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_runs_dry_when_its_last_waiting_url_leaves() {
        let mut waiting = Waiting::default();
        for url in ["a/1", "a/2", "b/1"] {
            waiting.buffered(url);
        }
        waiting.emitted("a/1", "a");
        waiting.emitted("a/2", "a");
        waiting.emitted("b/1", "b");
        assert!(waiting.shared().contains("a/1"));
        assert!(!waiting.left("a/1"));
        assert!(!waiting.shared().contains("a/1"));
        assert!(waiting.left("b/1"));
        assert!(waiting.left("a/2"));
        // Told twice (started, then acked): only the first counts.
        assert!(!waiting.left("a/2"));
        assert!(!waiting.left("never/emitted"));
    }
}
