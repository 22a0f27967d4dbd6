//! The last status document made, handed out again while it is fresh: however many ask, one is
//! made at most every half second, each with the next sequence number.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::document::StatusDocument;

/// How long a document is handed out again before the next is made.
const DOCUMENT_AGE: Duration = Duration::from_millis(500);

/// The last document made, and how many were made.
#[derive(Debug, Default)]
pub struct DocumentCache {
    cached: Mutex<Option<(Instant, Arc<StatusDocument>)>>,
    sequence: AtomicU64,
}

impl DocumentCache {
    /// The last document while it is younger than half a second, else a new one from `make`
    /// (given the new document's sequence number).
    pub fn get(&self, make: impl FnOnce(u64) -> StatusDocument) -> Arc<StatusDocument> {
        let next = || self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        let Ok(mut cached) = self.cached.lock() else {
            return Arc::new(make(next()));
        };
        if let Some((made, document)) = cached.as_ref()
            && made.elapsed() < DOCUMENT_AGE
        {
            return Arc::clone(document);
        }
        let fresh = Arc::new(make(next()));
        *cached = Some((Instant::now(), Arc::clone(&fresh)));
        fresh
    }
}
