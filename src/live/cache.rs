//! The last status document made, handed out again while it is fresh: however many ask, one is
//! made at most every half second, each with the next sequence number, and written out as JSON
//! at most once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::document::StatusDocument;

/// How long a document is handed out again before the next is made.
const DOCUMENT_AGE: Duration = Duration::from_millis(500);

/// The last document made, and how many were made.
#[derive(Debug, Default)]
pub struct DocumentCache {
    cached: Mutex<Option<Cached>>,
    sequence: AtomicU64,
}

#[derive(Debug)]
struct Cached {
    made: Instant,
    document: Arc<StatusDocument>,
    /// The document as JSON, once someone asked for it.
    json: Option<Bytes>,
}

impl DocumentCache {
    /// The last document while it is younger than half a second, else a new one from `make`
    /// (given the new document's sequence number).
    pub fn get(&self, make: impl FnOnce(u64) -> StatusDocument) -> Arc<StatusDocument> {
        let Ok(mut cached) = self.cached.lock() else {
            return Arc::new(make(self.next()));
        };
        Arc::clone(&self.fresh(&mut cached, make).document)
    }

    /// The same document as JSON (written once per document made).
    pub fn json(
        &self,
        make: impl FnOnce(u64) -> StatusDocument,
    ) -> Result<Bytes, serde_json::Error> {
        let Ok(mut cached) = self.cached.lock() else {
            return serde_json::to_vec(&make(self.next())).map(Bytes::from);
        };
        let fresh = self.fresh(&mut cached, make);
        if let Some(json) = &fresh.json {
            return Ok(json.clone());
        }
        let json = Bytes::from(serde_json::to_vec(fresh.document.as_ref())?);
        fresh.json = Some(json.clone());
        Ok(json)
    }

    /// Whether the last document made would be handed out again now.
    pub fn is_fresh(&self) -> bool {
        self.cached
            .lock()
            .ok()
            .and_then(|cached| cached.as_ref().map(|c| c.made.elapsed() < DOCUMENT_AGE))
            .unwrap_or(false)
    }

    fn next(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The cached document, made again first when it is missing or too old.
    fn fresh<'a>(
        &self,
        cached: &'a mut Option<Cached>,
        make: impl FnOnce(u64) -> StatusDocument,
    ) -> &'a mut Cached {
        if cached
            .as_ref()
            .is_none_or(|c| c.made.elapsed() >= DOCUMENT_AGE)
        {
            *cached = None;
        }
        cached.get_or_insert_with(|| Cached {
            made: Instant::now(),
            document: Arc::new(make(self.next())),
            json: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(sequence: u64) -> StatusDocument {
        StatusDocument {
            title: "t".into(),
            subtitle: String::new(),
            sequence,
            generated_at: chrono::Utc::now(),
            uptime_seconds: 0.0,
            activity: String::new(),
            figures: Vec::new(),
            charts: Vec::new(),
            tables: Vec::new(),
        }
    }

    #[test]
    fn a_fresh_document_and_its_json_are_handed_out_again() {
        let cache = DocumentCache::default();
        let first = cache.get(document);
        let json = cache
            .json(|_| panic!("made again while fresh"))
            .expect("json");
        let written: serde_json::Value = serde_json::from_slice(&json).expect("valid JSON");
        assert_eq!(written["sequence"], first.sequence);
        let again = cache
            .json(|_| panic!("made again while fresh"))
            .expect("json");
        assert_eq!(json.as_ptr(), again.as_ptr(), "written once");
        std::thread::sleep(DOCUMENT_AGE);
        assert_eq!(cache.get(document).sequence, first.sequence + 1);
    }
}
