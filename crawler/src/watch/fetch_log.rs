//! `--fetch-log`: one JSON line per fetch attempt, written as the attempt completes.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use serde_json::json;
use squall::message::{CrawlEvent, CrawlObserver};
use squall::redact;

/// Writes one JSON line per fetch attempt (url, key, started, finished, bytes, protocol, and
/// http_status or error; a password in a URL masked), each with a single unbuffered write as the
/// attempt completes: a process killed at any moment leaves every completed fetch in the file (and
/// no partial line before the last).
#[derive(Clone)]
pub(crate) struct FetchLog {
    out: Arc<Mutex<std::fs::File>>,
}

impl FetchLog {
    /// The log appending to `path` (created when missing).
    pub(crate) fn create(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open fetch log {}", path.display()))?;
        Ok(FetchLog {
            out: Arc::new(Mutex::new(file)),
        })
    }

    /// Flushes what was written (once the crawl has ended).
    pub(crate) fn flush(&self) -> anyhow::Result<()> {
        if let Ok(mut out) = self.out.lock() {
            out.flush().context("cannot write the fetch log")?;
        }
        Ok(())
    }
}

impl CrawlObserver for FetchLog {
    fn on_event(&self, event: &CrawlEvent) {
        let CrawlEvent::Fetched { url, key, fetch } = event else {
            return;
        };
        let time = |t: &chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        let mut line = json!({
            "url": url,
            "key": key,
            "started": time(&fetch.started),
            "finished": time(&fetch.finished),
            "bytes": fetch.bytes,
            "protocol": fetch.protocol,
        });
        match (&fetch.http_status, &fetch.error) {
            (Some(code), _) => line["http_status"] = json!(code),
            (None, Some(error)) => line["error"] = json!(redact::url_text(error)),
            (None, None) => {}
        }
        let mut text = line.to_string();
        text.push('\n');
        if let Ok(mut out) = self.out.lock()
            && let Err(error) = out.write_all(text.as_bytes())
        {
            tracing::warn!(%error, "cannot write the fetch log");
        }
    }
}
