//! The embedded frontier as a [`Catalog`]: URLs and queues looked up, listed, counted and deleted.
//!
//! The `urls` table is keyed by URL alone, so a listing in queue order, a count with a filter and
//! the list of queues each read every record once (a queue is any key some record has, whether or
//! not it has a due URL); a listing keeps in memory only the entries up to its page. Deleting a
//! queue removes its records, its schedule entries, its head and its place among the due queues in
//! one transaction, so the spout never sees a deleted URL.

use std::collections::{BTreeSet, BinaryHeap};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use redb::{ReadableDatabase, ReadableTable, ReadableTableMetadata};
use url::Url;

use super::{
    DUE_QUEUES, EmbeddedFrontier, QUEUE_HEADS, Record, SCHEDULE, URLS, from_millis, millis_key,
    move_head, storage_error_kind,
};
use crate::frontier::{Catalog, Census, QueuePage, StoreError, StoredUrl, UrlQuery};
use crate::model::{CrawlUrl, Status};

/// A database failure as a catalog error, of the kind [`storage_error_kind`] says.
fn storage(error: impl Into<redb::Error>) -> StoreError {
    let error = error.into();
    StoreError::of_kind(
        storage_error_kind(&error),
        format!("embedded frontier storage error: {error}"),
    )
}

/// A record read back, or `None` when it cannot be read (such records are left out of listings
/// and counts; [`Catalog::lookup`] reports them).
fn decode(bytes: &[u8]) -> Option<Record> {
    serde_json::from_slice(bytes).ok()
}

/// Whether `query` covers `url` and its record.
fn covers(query: &UrlQuery, url: &str, record: &Record) -> bool {
    query.covers(url, &record.key, record.next_fetch.is_some())
}

/// The [`StoredUrl`] of `url`'s record.
fn stored_url(url: &str, record: Record) -> Result<StoredUrl, StoreError> {
    let parsed = Url::parse(url)
        .map_err(|e| StoreError::rejected(format!("the stored URL {url:?} is invalid: {e}")))?;
    Ok(StoredUrl {
        url: CrawlUrl {
            url: parsed,
            metadata: record.metadata,
        },
        key: record.key,
        status: record.status,
        next_fetch: record.next_fetch.and_then(from_millis),
        created: record
            .created
            .and_then(|secs| chrono::DateTime::from_timestamp(secs, 0)),
    })
}

/// How many entries to skip and keep, as memory sizes (a page past what memory can address is
/// past the end anyway).
fn window(start: u64, size: u64) -> (usize, usize) {
    let start = usize::try_from(start).unwrap_or(usize::MAX);
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    (start, size)
}

impl EmbeddedFrontier {
    /// Runs `work` on the blocking pool (redb's calls block on the file).
    async fn catalog_work<T, F>(&self, what: &'static str, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&EmbeddedFrontier) -> Result<T, StoreError> + Send + 'static,
    {
        let frontier = self.clone();
        tokio::task::spawn_blocking(move || work(&frontier))
            .await
            .map_err(|join| {
                StoreError::rejected(format!("embedded frontier {what} panicked: {join}"))
            })?
    }

    fn stored_blocking(&self, url: &str) -> Result<Option<StoredUrl>, StoreError> {
        let txn = self.db.begin_read().map_err(storage)?;
        let urls = txn.open_table(URLS).map_err(storage)?;
        let Some(value) = urls.get(url).map_err(storage)? else {
            return Ok(None);
        };
        let record = serde_json::from_slice::<Record>(value.value()).map_err(|e| {
            StoreError::rejected(format!("the stored record of {url} is unreadable: {e}"))
        })?;
        stored_url(url, record).map(Some)
    }

    fn count_blocking(&self, query: &UrlQuery) -> Result<u64, StoreError> {
        let txn = self.db.begin_read().map_err(storage)?;
        let urls = txn.open_table(URLS).map_err(storage)?;
        if query.key.is_none() && query.contains.is_none() && query.scheduled.is_none() {
            return urls.len().map_err(storage);
        }
        let mut count = 0;
        for entry in urls.iter().map_err(storage)? {
            let (url, value) = entry.map_err(storage)?;
            if decode(value.value()).is_some_and(|r| covers(query, url.value(), &r)) {
                count += 1;
            }
        }
        Ok(count)
    }

    /// One pass over the records, keeping the `start + size` first (key, URL) pairs `query`
    /// covers; then the records of the page.
    fn list_blocking(
        &self,
        query: &UrlQuery,
        start: u64,
        size: u64,
    ) -> Result<Vec<StoredUrl>, StoreError> {
        let (start, size) = window(start, size);
        let keep = start.saturating_add(size);
        if size == 0 {
            return Ok(Vec::new());
        }
        let txn = self.db.begin_read().map_err(storage)?;
        let urls = txn.open_table(URLS).map_err(storage)?;
        // A max-heap: its top is the last of the entries kept, dropped when a smaller one comes.
        let mut first: BinaryHeap<(String, String)> = BinaryHeap::new();
        for entry in urls.iter().map_err(storage)? {
            let (url, value) = entry.map_err(storage)?;
            let url = url.value();
            let Some(record) = decode(value.value()) else {
                continue;
            };
            if !covers(query, url, &record) {
                continue;
            }
            if first.len() >= keep {
                match first.peek() {
                    Some((key, last))
                        if (record.key.as_str(), url) < (key.as_str(), last.as_str()) =>
                    {
                        first.pop();
                    }
                    _ => continue,
                }
            }
            first.push((record.key, url.to_string()));
        }
        let mut page = Vec::with_capacity(size.min(first.len()));
        for (_, url) in first.into_sorted_vec().into_iter().skip(start) {
            let Some(value) = urls.get(url.as_str()).map_err(storage)? else {
                continue;
            };
            if let Some(record) = decode(value.value()) {
                page.push(stored_url(&url, record)?);
            }
        }
        Ok(page)
    }

    /// One pass over the records, collecting the keys of those `query` covers.
    fn count_queues_blocking(&self, query: &UrlQuery) -> Result<u64, StoreError> {
        let txn = self.db.begin_read().map_err(storage)?;
        let urls = txn.open_table(URLS).map_err(storage)?;
        let mut keys = std::collections::HashSet::new();
        for entry in urls.iter().map_err(storage)? {
            let (url, value) = entry.map_err(storage)?;
            if let Some(record) = decode(value.value()).filter(|r| covers(query, url.value(), r)) {
                keys.insert(record.key);
            }
        }
        Ok(keys.len() as u64)
    }

    fn queues_blocking(&self, start: u64, size: u64) -> Result<QueuePage, StoreError> {
        let txn = self.db.begin_read().map_err(storage)?;
        let urls = txn.open_table(URLS).map_err(storage)?;
        let mut keys = BTreeSet::new();
        for entry in urls.iter().map_err(storage)? {
            let (_, value) = entry.map_err(storage)?;
            if let Some(record) = decode(value.value()) {
                keys.insert(record.key);
            }
        }
        let (start, size) = window(start, size);
        Ok(QueuePage {
            total: keys.len() as u64,
            keys: keys.into_iter().skip(start).take(size).collect(),
        })
    }

    /// Removes the records of queue `key`, its schedule entries, its head and its place among the
    /// due queues, in one transaction.
    fn delete_queue_blocking(&self, key: &str) -> Result<u64, StoreError> {
        let txn = self.db.begin_write().map_err(storage)?;
        let mut deleted = 0;
        {
            let mut urls = txn.open_table(URLS).map_err(storage)?;
            urls.retain(|_, value| {
                let of_queue = decode(value).is_some_and(|record| record.key == key);
                if of_queue {
                    deleted += 1;
                }
                !of_queue
            })
            .map_err(storage)?;
            let mut schedule = txn.open_table(SCHEDULE).map_err(storage)?;
            schedule
                .retain_in((key, 0u64, "")..=(key, u64::MAX, "\u{10FFFF}"), |_, _| {
                    false
                })
                .map_err(storage)?;
            let mut heads = txn.open_table(QUEUE_HEADS).map_err(storage)?;
            let head = heads.remove(key).map_err(storage)?.map(|v| v.value());
            if let Some(head) = head {
                let mut due_queues = txn.open_table(DUE_QUEUES).map_err(storage)?;
                due_queues.remove((head, key)).map_err(storage)?;
            }
        }
        txn.commit().map_err(storage)?;
        Ok(deleted)
    }

    /// Removes the records of queue `key` (every queue: `None`) first stored before `cutoff` (an
    /// undated record stays), with their schedule entries, in one transaction; then moves the heads
    /// of the queues that lost a due URL.
    fn purge_blocking(&self, key: Option<&str>, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        // A date to the second is before the cutoff when its second began before it.
        let cutoff = cutoff.timestamp_millis();
        let txn = self.db.begin_write().map_err(storage)?;
        let mut purged = Vec::new();
        {
            let mut urls = txn.open_table(URLS).map_err(storage)?;
            urls.retain(|url, value| {
                let Some(record) = decode(value) else {
                    return true; // unreadable records are reported by lookup, never guessed at
                };
                let old = key.is_none_or(|key| record.key == key)
                    && record
                        .created
                        .is_some_and(|created| created.saturating_mul(1000) < cutoff);
                if old {
                    purged.push((url.to_string(), record));
                }
                !old
            })
            .map_err(storage)?;
            let mut schedule = txn.open_table(SCHEDULE).map_err(storage)?;
            let mut touched = BTreeSet::new();
            for (url, record) in &purged {
                if let Some(due) = record.next_fetch {
                    schedule
                        .remove((record.key.as_str(), millis_key(due), url.as_str()))
                        .map_err(storage)?;
                    touched.insert(record.key.clone());
                }
            }
            let mut heads = txn.open_table(QUEUE_HEADS).map_err(storage)?;
            let mut due_queues = txn.open_table(DUE_QUEUES).map_err(storage)?;
            for key in touched {
                move_head(&schedule, &mut heads, &mut due_queues, &key).map_err(storage)?;
            }
        }
        txn.commit().map_err(storage)?;
        Ok(purged.len() as u64)
    }

    /// Empties the four tables in one transaction.
    fn delete_all_blocking(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_write().map_err(storage)?;
        let deleted = txn
            .open_table(URLS)
            .map_err(storage)?
            .len()
            .map_err(storage)?;
        txn.delete_table(URLS).map_err(storage)?;
        txn.delete_table(SCHEDULE).map_err(storage)?;
        txn.delete_table(QUEUE_HEADS).map_err(storage)?;
        txn.delete_table(DUE_QUEUES).map_err(storage)?;
        txn.open_table(URLS).map_err(storage)?;
        txn.open_table(SCHEDULE).map_err(storage)?;
        txn.open_table(QUEUE_HEADS).map_err(storage)?;
        txn.open_table(DUE_QUEUES).map_err(storage)?;
        txn.commit().map_err(storage)?;
        Ok(deleted)
    }
}

#[async_trait]
impl Catalog for EmbeddedFrontier {
    async fn lookup(&self, url: &str) -> Result<Option<StoredUrl>, StoreError> {
        let url = url.to_string();
        self.catalog_work("lookup", move |f| f.stored_blocking(&url))
            .await
    }

    async fn count(&self, query: &UrlQuery) -> Result<u64, StoreError> {
        let query = query.clone();
        self.catalog_work("count", move |f| f.count_blocking(&query))
            .await
    }

    async fn list(
        &self,
        query: &UrlQuery,
        start: u64,
        size: u64,
    ) -> Result<Vec<StoredUrl>, StoreError> {
        let query = query.clone();
        self.catalog_work("listing", move |f| f.list_blocking(&query, start, size))
            .await
    }

    async fn count_queues(&self, query: &UrlQuery) -> Result<u64, StoreError> {
        let query = query.clone();
        self.catalog_work("queue count", move |f| f.count_queues_blocking(&query))
            .await
    }

    async fn count_by_status(&self) -> Result<Vec<(Status, u64)>, StoreError> {
        let counts = self
            .catalog_work("count by status", |f| {
                EmbeddedFrontier::count_by_status(f).map_err(|e| {
                    StoreError::of_kind(e.kind(), format!("embedded frontier count failed: {e}"))
                })
            })
            .await?;
        Ok(counts.into_iter().filter(|(_, n)| *n > 0).collect())
    }

    async fn census(&self) -> Result<Census, StoreError> {
        self.catalog_work("census", |f| f.census_blocking(Utc::now()).map_err(storage))
            .await
    }

    async fn queues(&self, start: u64, size: u64) -> Result<QueuePage, StoreError> {
        self.catalog_work("queue listing", move |f| f.queues_blocking(start, size))
            .await
    }

    async fn delete_queue(&self, key: &str) -> Result<u64, StoreError> {
        let key = key.to_string();
        self.catalog_work("queue deletion", move |f| f.delete_queue_blocking(&key))
            .await
    }

    async fn delete_all(&self) -> Result<u64, StoreError> {
        self.catalog_work("deletion", |f| f.delete_all_blocking())
            .await
    }

    fn keeps_creation_dates(&self) -> bool {
        true
    }

    fn keeps_rules(&self) -> bool {
        true
    }

    async fn rules(&self) -> Result<crate::frontier::ServedRules, StoreError> {
        self.catalog_work("rules", |f| f.rules_blocking()).await
    }

    async fn keep_rule(&self, change: crate::frontier::RuleChange) -> Result<(), StoreError> {
        self.catalog_work("rule", move |f| f.keep_rule_blocking(&change))
            .await
    }

    async fn purge_created_before(
        &self,
        key: Option<&str>,
        cutoff: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let key = key.map(str::to_string);
        self.catalog_work("purge", move |f| f.purge_blocking(key.as_deref(), cutoff))
            .await
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};

    use super::*;
    use crate::frontier::{QueueReport, StatusStore, StatusWrite};

    fn due(url: &str, key: &str) -> StatusWrite {
        StatusWrite {
            url: CrawlUrl::new(Url::parse(url).expect("url")),
            key: key.to_string(),
            status: Status::Discovered,
            next_fetch: Some(Utc::now() - TimeDelta::minutes(1)),
            queue: QueueReport::default(),
        }
    }

    /// The keys each table holds: of the schedule, the queue heads and the due queues.
    fn table_keys(frontier: &EmbeddedFrontier) -> [BTreeSet<String>; 3] {
        let txn = frontier.db.begin_read().expect("read");
        let schedule = txn.open_table(SCHEDULE).expect("schedule");
        let heads = txn.open_table(QUEUE_HEADS).expect("heads");
        let due_queues = txn.open_table(DUE_QUEUES).expect("due queues");
        let keys = |entries: Vec<String>| entries.into_iter().collect::<BTreeSet<_>>();
        [
            keys(
                schedule
                    .iter()
                    .expect("iter")
                    .map(|e| e.expect("entry").0.value().0.to_string())
                    .collect(),
            ),
            keys(
                heads
                    .iter()
                    .expect("iter")
                    .map(|e| e.expect("entry").0.value().to_string())
                    .collect(),
            ),
            keys(
                due_queues
                    .iter()
                    .expect("iter")
                    .map(|e| e.expect("entry").0.value().1.to_string())
                    .collect(),
            ),
        ]
    }

    #[tokio::test]
    async fn deletions_leave_no_trace_of_a_queue_in_any_table() {
        let dir = tempfile::tempdir().expect("temp dir");
        let frontier = EmbeddedFrontier::open(dir.path()).expect("open");
        let writes = vec![
            due("http://a.test/1", "a.test"),
            due("http://b.test/1", "b.test"),
            due("http://b.test/2", "b.test"),
        ];
        assert!(frontier.store(writes).await.iter().all(Result::is_ok));
        let both: BTreeSet<String> = ["a.test".to_string(), "b.test".to_string()].into();
        assert_eq!(table_keys(&frontier), [both.clone(), both.clone(), both]);
        assert_eq!(Catalog::delete_queue(&frontier, "b.test").await, Ok(2));
        let a: BTreeSet<String> = ["a.test".to_string()].into();
        assert_eq!(table_keys(&frontier), [a.clone(), a.clone(), a]);
        assert_eq!(Catalog::delete_all(&frontier).await, Ok(1));
        assert_eq!(
            table_keys(&frontier),
            [BTreeSet::new(), BTreeSet::new(), BTreeSet::new()]
        );
        let counts = Catalog::count_by_status(&frontier).await;
        assert_eq!(counts, Ok(Vec::new()));
    }

    /// Writes `record` for `url` as it is, bypassing the store (a record of an older squall).
    fn put_raw(frontier: &EmbeddedFrontier, url: &str, record: &serde_json::Value) {
        let txn = frontier.db.begin_write().expect("write");
        {
            let mut urls = txn.open_table(URLS).expect("urls");
            let bytes = serde_json::to_vec(record).expect("json");
            urls.insert(url, bytes.as_slice()).expect("insert");
        }
        txn.commit().expect("commit");
    }

    #[tokio::test]
    async fn a_url_is_dated_when_first_stored_and_keeps_its_date() {
        let dir = tempfile::tempdir().expect("temp dir");
        let frontier = EmbeddedFrontier::open(dir.path()).expect("open");
        let before = Utc::now().timestamp();
        let written = frontier
            .store_telling(vec![due("http://a.test/1", "a.test")])
            .await;
        assert_eq!(written, [Ok(crate::frontier::Written::Created)]);
        let stored = Catalog::lookup(&frontier, "http://a.test/1")
            .await
            .expect("lookup");
        let created = stored.and_then(|s| s.created).expect("dated");
        assert!((before..=Utc::now().timestamp()).contains(&created.timestamp()));
        let again = frontier
            .store_telling(vec![due("http://a.test/1", "a.test")])
            .await;
        assert_eq!(again, [Ok(crate::frontier::Written::Known)]);
        let mut fetched = due("http://a.test/1", "a.test");
        fetched.status = Status::Fetched;
        fetched.next_fetch = None;
        let replaced = frontier.store_telling(vec![fetched]).await;
        assert_eq!(replaced, [Ok(crate::frontier::Written::Replaced)]);
        let stored = Catalog::lookup(&frontier, "http://a.test/1")
            .await
            .expect("lookup");
        assert_eq!(stored.and_then(|s| s.created), Some(created), "kept");
        // A record of an older squall has no date, and reads as such.
        let old = serde_json::json!({ "status": "DISCOVERED", "key": "a.test",
            "next_fetch": null, "metadata": {} });
        put_raw(&frontier, "http://a.test/old", &old);
        let stored = Catalog::lookup(&frontier, "http://a.test/old")
            .await
            .expect("lookup");
        assert_eq!(stored.map(|s| s.created), Some(None));
    }

    #[tokio::test]
    async fn a_purge_takes_the_old_urls_of_its_queues_from_every_table_and_keeps_undated_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let frontier = EmbeddedFrontier::open(dir.path()).expect("open");
        let writes = vec![
            due("http://a.test/1", "a.test"),
            due("http://b.test/1", "b.test"),
            due("http://b.test/2", "b.test"),
        ];
        assert!(frontier.store(writes).await.iter().all(Result::is_ok));
        let old = serde_json::json!({ "status": "FETCHED", "key": "c.test",
            "next_fetch": null, "metadata": {} });
        put_raw(&frontier, "http://c.test/old", &old);
        let an_hour_ago = Utc::now() - TimeDelta::hours(1);
        let purged = frontier.purge_created_before(None, an_hour_ago).await;
        assert_eq!(purged, Ok(0), "none is older, and the undated one stays");
        assert!(frontier.keeps_creation_dates());
        let in_an_hour = Utc::now() + TimeDelta::hours(1);
        let purged = frontier
            .purge_created_before(Some("b.test"), in_an_hour)
            .await;
        assert_eq!(purged, Ok(2), "the queue named, whatever the URLs' age");
        let a: BTreeSet<String> = ["a.test".to_string()].into();
        assert_eq!(table_keys(&frontier), [a.clone(), a.clone(), a]);
        let queues = frontier.queues(0, 10).await.expect("queues");
        assert_eq!(queues.keys, ["a.test", "c.test"], "the undated URL's queue");
        let purged = frontier.purge_created_before(None, in_an_hour).await;
        assert_eq!(purged, Ok(1), "a.test's; c.test's undated URL stays");
    }
}
