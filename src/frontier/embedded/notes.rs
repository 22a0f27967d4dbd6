//! What the embedded frontier remembers of each queue for politeness across restarts: the end of
//! its last fetch that reached the server, the server's Retry-After hold (or the pace's block),
//! its robots.txt Crawl-delay and the pace the fetcher learned from the server's answers
//! ([`LearnedPace`]). A crawl resumed on the same frontier hands these to the fetcher with the
//! queue's URLs ([`QueueHints`]), so that its first fetch of a host keeps the delay from the last
//! one, at the pace last learned. Deleting a queue's URLs keeps its note: the host was still
//! fetched when it says. Notes written before the pace was kept read without one; a pace whose
//! cause this version does not know is left out, the rest of the note kept.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use redb::{ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::frontier::{LearnedPace, QueueHints, QueueReport};

/// Table `queue_notes`: key → [`QueueNote`] as JSON.
pub(super) const QUEUE_NOTES: TableDefinition<'_, &str, &[u8]> =
    TableDefinition::new("queue_notes");

/// One queue's note, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct QueueNote {
    last_fetch: Option<i64>,
    blocked_until: Option<i64>,
    crawl_delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pace: Option<PaceNote>,
}

/// The pace learned for a queue, in milliseconds; its cause as the word the status page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct PaceNote {
    delay_ms: u64,
    cause: String,
    strikes: u32,
    limit_ms: Option<u64>,
    at: i64,
}

impl PaceNote {
    fn of(pace: &LearnedPace) -> Self {
        PaceNote {
            delay_ms: millis(pace.delay),
            cause: pace.cause.to_string(),
            strikes: pace.strikes,
            limit_ms: pace.limit.map(millis),
            at: pace.at.timestamp_millis(),
        }
    }

    /// The pace noted; none when its cause or date does not read.
    fn pace(&self) -> Option<LearnedPace> {
        Some(LearnedPace {
            delay: Duration::from_millis(self.delay_ms),
            cause: self.cause.parse().ok()?,
            strikes: self.strikes,
            limit: self.limit_ms.map(Duration::from_millis),
            at: Utc.timestamp_millis_opt(self.at).single()?,
        })
    }
}

/// `duration` in whole milliseconds, saturating.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl QueueNote {
    fn of(report: &QueueReport) -> Self {
        QueueNote {
            last_fetch: report.last_fetch.map(|t| t.timestamp_millis()),
            blocked_until: report.blocked_until.map(|t| t.timestamp_millis()),
            crawl_delay_ms: report.crawl_delay.map(millis),
            pace: report.pace.as_ref().map(PaceNote::of),
        }
    }

    fn report(&self) -> QueueReport {
        let date = |millis: Option<i64>| -> Option<DateTime<Utc>> {
            Utc.timestamp_millis_opt(millis?).single()
        };
        QueueReport {
            last_fetch: date(self.last_fetch),
            blocked_until: date(self.blocked_until),
            crawl_delay: self.crawl_delay_ms.map(Duration::from_millis),
            pace: self.pace.as_ref().and_then(PaceNote::pace),
        }
    }
}

/// Adds `report` to the note of queue `key` (the later times, the newer delay).
pub(super) fn remember(
    notes: &mut redb::Table<'_, &str, &[u8]>,
    key: &str,
    report: &QueueReport,
) -> Result<(), redb::Error> {
    if report.is_empty() || key.is_empty() {
        return Ok(());
    }
    let merged = read(notes, key)?.unwrap_or_default().merged(report);
    if let Ok(bytes) = serde_json::to_vec(&QueueNote::of(&merged)) {
        notes.insert(key, bytes.as_slice())?;
    }
    Ok(())
}

/// What queue `key`'s note tells the fetcher (nothing when there is no note).
pub(super) fn hints(
    notes: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<QueueHints, redb::Error> {
    Ok(read(notes, key)?
        .map(|report| report.hints())
        .unwrap_or_default())
}

fn read(
    notes: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<QueueReport>, redb::Error> {
    let Some(value) = notes.get(key)? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice::<QueueNote>(value.value())
        .ok()
        .map(|note| note.report()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::embedded::{EmbeddedFrontier, QueryLimits};
    use crate::frontier::{BusyUrls, Spout, StatusStore, StatusWrite};
    use crate::model::{CrawlUrl, Status};

    fn write(url: &str, status: Status, queue: QueueReport) -> StatusWrite {
        StatusWrite {
            url: CrawlUrl::new(url::Url::parse(url).expect("url")),
            key: "a.test".to_string(),
            status,
            next_fetch: Some(Utc::now() - chrono::TimeDelta::seconds(1)),
            queue,
        }
    }

    #[tokio::test]
    async fn a_reopened_frontier_hands_out_what_it_remembers_of_the_queue() {
        let dir = tempfile::tempdir().expect("temp dir");
        let ended = Utc
            .timestamp_millis_opt(Utc::now().timestamp_millis())
            .single();
        let report = QueueReport {
            last_fetch: ended,
            blocked_until: None,
            crawl_delay: Some(Duration::from_millis(1500)),
            pace: ended.map(|at| pace(4_000, at)),
        };
        {
            let frontier = EmbeddedFrontier::open(dir.path()).expect("open");
            let written = frontier
                .store(vec![
                    write("http://a.test/1", Status::Fetched, report),
                    write(
                        "http://a.test/2",
                        Status::Discovered,
                        QueueReport::default(),
                    ),
                ])
                .await;
            assert!(written.iter().all(Result::is_ok), "{written:?}");
        }
        let reopened = EmbeddedFrontier::open(dir.path()).expect("reopen");
        let batch = reopened
            .spout(QueryLimits::default())
            .next_batch(&BusyUrls::none())
            .await
            .expect("due URLs");
        assert!(!batch.is_empty());
        for due in &batch {
            assert_eq!(due.hints.last_fetch, ended, "{}", due.url.url);
            assert_eq!(due.hints.crawl_delay, Some(Duration::from_millis(1500)));
            assert_eq!(due.hints.pace, report.pace, "the pace last learned");
        }
    }

    fn pace(delay_ms: u64, at: DateTime<Utc>) -> LearnedPace {
        LearnedPace {
            delay: Duration::from_millis(delay_ms),
            cause: crate::frontier::PaceCause::Http(429),
            strikes: 2,
            limit: Some(Duration::from_millis(1000)),
            at,
        }
    }

    #[test]
    fn a_note_keeps_the_pace_learned_last_and_older_notes_read() {
        let at = |millis| {
            Utc.timestamp_millis_opt(millis)
                .single()
                .unwrap_or_default()
        };
        let first = QueueReport {
            pace: Some(pace(4_000, at(5_000))),
            ..QueueReport::default()
        };
        let second = QueueReport {
            last_fetch: Some(at(6_000)),
            pace: Some(pace(8_000, at(4_000))),
            ..QueueReport::default()
        };
        let merged = first.merged(&second);
        assert_eq!(merged.pace, first.pace, "learned later, kept");
        assert_eq!(QueueNote::of(&merged).report(), merged);

        let older = br#"{"last_fetch":6000,"blocked_until":null,"crawl_delay_ms":1500}"#;
        let note: QueueNote = serde_json::from_slice(older).expect("a note without a pace");
        assert_eq!(note.report().crawl_delay, Some(Duration::from_millis(1500)));
        assert_eq!(note.report().pace, None);

        let newer = br#"{"last_fetch":6000,"blocked_until":null,"crawl_delay_ms":null,
            "pace":{"delay_ms":2000,"cause":"sunspots","strikes":1,"limit_ms":null,"at":6000}}"#;
        let note: QueueNote = serde_json::from_slice(newer).expect("a cause unknown here");
        assert_eq!(
            (note.report().last_fetch, note.report().pace),
            (Some(at(6_000)), None)
        );
    }

    #[test]
    fn a_note_keeps_the_later_times_and_the_newer_delay() {
        let at = |millis| Utc.timestamp_millis_opt(millis).single();
        let first = QueueReport {
            last_fetch: at(2_000),
            blocked_until: at(9_000),
            crawl_delay: Some(Duration::from_millis(2500)),
            pace: None,
        };
        let second = QueueReport {
            last_fetch: at(3_000),
            blocked_until: None,
            crawl_delay: None,
            pace: None,
        };
        let merged = first.merged(&second);
        assert_eq!(merged.last_fetch, at(3_000));
        assert_eq!(merged.blocked_until, at(9_000));
        assert_eq!(merged.crawl_delay, Some(Duration::from_millis(2500)));
        assert_eq!(QueueNote::of(&merged).report(), merged);
    }
}
