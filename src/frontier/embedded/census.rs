//! The embedded frontier's census for live views, in one pass: the statuses are read from each
//! record without decoding its metadata, the rest from the schedule's own tables (their lengths,
//! and the queues whose earliest URL is due by now).

use chrono::{DateTime, Utc};
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};
use serde::Deserialize;

use super::{DUE_QUEUES, EmbeddedFrontier, QUEUE_HEADS, SCHEDULE, URLS, millis_key};
use crate::frontier::Census;
use crate::model::Status;

/// A record read for its status alone (serde skips the rest without keeping it).
#[derive(Deserialize)]
struct StatusOnly {
    status: Status,
}

impl EmbeddedFrontier {
    /// URLs by status, scheduled URLs, queues holding them and queues due at `now`.
    pub(super) fn census_blocking(&self, now: DateTime<Utc>) -> Result<Census, redb::Error> {
        let txn = self.db.begin_read()?;
        let urls = txn.open_table(URLS)?;
        let mut counts = [0u64; 5];
        for entry in urls.iter()? {
            let (_, value) = entry?;
            if let Ok(record) = serde_json::from_slice::<StatusOnly>(value.value())
                && let Some(i) = Status::ALL.iter().position(|s| *s == record.status)
            {
                counts[i] += 1;
            }
        }
        let scheduled = txn.open_table(SCHEDULE)?.len()?;
        let queues_scheduled = txn.open_table(QUEUE_HEADS)?.len()?;
        let due = txn.open_table(DUE_QUEUES)?;
        let mut queues_due_now = 0;
        for entry in due.range(..(millis_key(now.timestamp_millis()) + 1, ""))? {
            entry?;
            queues_due_now += 1;
        }
        Ok(Census {
            by_status: Status::ALL
                .into_iter()
                .zip(counts)
                .filter(|(_, n)| *n > 0)
                .collect(),
            scheduled,
            queues_scheduled,
            queues_due_now: Some(queues_due_now),
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use url::Url;

    use super::*;
    use crate::frontier::{Catalog, QueueReport, StatusStore, StatusWrite, UrlQuery};
    use crate::model::CrawlUrl;

    fn write(url: &str, status: Status, next_fetch: Option<DateTime<Utc>>) -> StatusWrite {
        let url = Url::parse(url).expect("url");
        StatusWrite {
            key: url.host_str().unwrap_or_default().to_string(),
            url: CrawlUrl::new(url),
            status,
            next_fetch,
            queue: QueueReport::default(),
        }
    }

    #[tokio::test]
    async fn the_census_agrees_with_the_separate_counts() {
        let dir = tempfile::tempdir().expect("temp dir");
        let frontier = EmbeddedFrontier::open(&dir.path().join("f")).expect("open");
        let now = Utc::now();
        let (past, later) = (now - TimeDelta::minutes(5), now + TimeDelta::hours(1));
        let writes = vec![
            write("http://a.test/1", Status::Discovered, Some(past)),
            write("http://a.test/2", Status::Fetched, Some(later)),
            write("http://b.test/1", Status::Fetched, Some(later)),
            write("http://b.test/2", Status::Error, None),
            write("http://c.test/1", Status::FetchError, Some(past)),
        ];
        assert!(frontier.store(writes).await.iter().all(Result::is_ok));
        let census = frontier.census().await.expect("census");
        let scheduled = UrlQuery {
            scheduled: Some(true),
            ..UrlQuery::default()
        };
        let by_status = Catalog::count_by_status(&frontier)
            .await
            .expect("by status");
        assert_eq!(census.by_status, by_status);
        assert_eq!(
            census.scheduled,
            frontier.count(&scheduled).await.expect("count")
        );
        assert_eq!(census.scheduled, 4);
        assert_eq!(
            census.queues_scheduled,
            frontier.count_queues(&scheduled).await.expect("queues")
        );
        assert_eq!(
            census.queues_due_now,
            Some(2),
            "a.test and c.test are due, b.test later"
        );
    }
}
