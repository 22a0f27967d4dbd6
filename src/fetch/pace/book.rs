//! The paces of queues the fetcher no longer holds: a queue forgotten while idle takes its pace
//! back when it comes again. Bounded: beyond its capacity, the pace learned longest ago goes.

use std::collections::HashMap;

use super::{QueuePace, Rules};

/// Paces kept at most, by default.
pub const BOOK_CAPACITY: usize = 10_000;

/// The learned paces of forgotten queues, by queue key.
#[derive(Debug, Clone)]
pub struct PaceBook {
    paces: HashMap<String, QueuePace>,
    capacity: usize,
}

impl Default for PaceBook {
    fn default() -> Self {
        PaceBook::with_capacity(BOOK_CAPACITY)
    }
}

impl PaceBook {
    /// A book keeping at most `capacity` paces.
    pub fn with_capacity(capacity: usize) -> Self {
        PaceBook {
            paces: HashMap::new(),
            capacity,
        }
    }

    /// Keeps the pace of the forgotten queue `key`, unless it is settled at its configured
    /// delay with nothing learned; the oldest learned pace goes when the book is full.
    pub fn keep(&mut self, key: String, pace: QueuePace, rules: &Rules<'_>) {
        if pace.is_settled(rules) {
            self.paces.remove(&key);
            return;
        }
        self.paces.insert(key, pace);
        while self.paces.len() > self.capacity {
            let Some(oldest) = self.oldest() else { break };
            self.paces.remove(&oldest);
        }
    }

    /// The key of the pace learned longest ago.
    fn oldest(&self) -> Option<String> {
        self.paces
            .iter()
            .min_by_key(|(_, pace)| pace.at())
            .map(|(key, _)| key.clone())
    }

    /// The pace kept for `key`, taken out of the book (its queue is back).
    pub fn take(&mut self, key: &str) -> Option<QueuePace> {
        self.paces.remove(key)
    }

    /// The paces kept, by queue key (for the status page).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &QueuePace)> {
        self.paces.iter().map(|(key, pace)| (key.as_str(), pace))
    }

    /// How many paces it keeps at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many paces are kept.
    pub fn len(&self) -> usize {
        self.paces.len()
    }

    /// Whether no pace is kept.
    pub fn is_empty(&self) -> bool {
        self.paces.is_empty()
    }
}
