//! squall's frontier types to URLFrontier messages and back, for the client: a handed-out
//! `URLInfo` as a [`DueUrl`], a [`StatusWrite`] as a `URLItem`, and the queue reports of a batch of
//! writes.

use std::collections::BTreeMap;

use squall::frontier::{DueUrl, LearnedPace, QueueReport, StatusWrite};
use squall::model::{CrawlUrl, PartitionMode, Status, partition_key};
use url::Url;

use crate::convert::{STATUS_KEY, metadata_from_proto, metadata_to_proto, secs_from_date};
use crate::proto::url_item::Item;
use crate::proto::{DiscoveredUrlItem, KnownUrlItem, StringList, UrlInfo, UrlItem};

/// A URL the server handed out, as a due URL: its metadata lists as squall metadata (without
/// [`STATUS_KEY`]), its queue the server's key, or the key `partition` gives when the server sent
/// none. Fails when the server's URL does not parse.
pub(crate) fn due_url(info: UrlInfo, partition: PartitionMode) -> Result<DueUrl, url::ParseError> {
    let url = Url::parse(&info.url)?;
    let mut metadata = metadata_from_proto(info.metadata);
    metadata.remove(STATUS_KEY);
    let key = if info.key.is_empty() {
        partition_key(&url, &metadata, partition)
    } else {
        info.key
    };
    Ok(DueUrl::new(CrawlUrl { url, metadata }, key))
}

/// A status write as the item PutURLs sends, with `id` as its ID: DISCOVERED as a discovered item
/// (the server adds it unless it knows it), any other status as a known item due at `next_fetch`
/// (0, never, when `None`) with the status under [`STATUS_KEY`].
pub(crate) fn url_item(write: &StatusWrite, id: String, crawl_id: &str) -> UrlItem {
    let item = if write.status == Status::Discovered {
        Item::Discovered(DiscoveredUrlItem {
            info: Some(discovered_info(write, crawl_id)),
        })
    } else {
        let mut metadata = metadata_to_proto(&write.url.metadata);
        let status = StringList {
            values: vec![write.status.as_str().to_string()],
        };
        metadata.insert(STATUS_KEY.to_string(), status);
        Item::Known(KnownUrlItem {
            info: Some(url_info(write, metadata, crawl_id)),
            refetchable_from_date: secs_from_date(write.next_fetch),
        })
    };
    UrlItem {
        id,
        item: Some(item),
        creation_date: 0, // set by the server; a client's is ignored
    }
}

/// A DISCOVERED write as the URL a discovered item (or a PutDiscovered batch) carries: its
/// metadata without [`STATUS_KEY`].
pub(crate) fn discovered_info(write: &StatusWrite, crawl_id: &str) -> UrlInfo {
    let mut metadata = metadata_to_proto(&write.url.metadata);
    metadata.remove(STATUS_KEY);
    url_info(write, metadata, crawl_id)
}

fn url_info(
    write: &StatusWrite,
    metadata: std::collections::HashMap<String, StringList>,
    crawl_id: &str,
) -> UrlInfo {
    UrlInfo {
        url: write.url.url.as_str().to_string(),
        key: write.key.clone(),
        metadata,
        crawl_id: crawl_id.to_string(),
    }
}

/// What a batch of writes reports about its queues, one report per queue (key), in key order:
/// the longest crawl delay, the latest hold and the pace learned last reported for it. Writes without a key are left out
/// (the server would take an empty key for every queue).
pub(crate) fn queue_reports(batch: &[StatusWrite]) -> BTreeMap<String, QueueReport> {
    let mut reports: BTreeMap<String, QueueReport> = BTreeMap::new();
    for write in batch {
        let told = write.queue.crawl_delay.is_some()
            || write.queue.blocked_until.is_some()
            || write.queue.pace.is_some();
        if !told || write.key.is_empty() {
            continue;
        }
        let report = reports.entry(write.key.clone()).or_default();
        report.crawl_delay = report.crawl_delay.max(write.queue.crawl_delay);
        report.blocked_until = report.blocked_until.max(write.queue.blocked_until);
        report.pace = LearnedPace::newer(report.pace, write.queue.pace);
    }
    reports
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::{TimeZone, Utc};

    use super::*;

    fn write(url: &str, status: Status) -> StatusWrite {
        let mut crawl_url = CrawlUrl::new(Url::parse(url).expect("url"));
        crawl_url
            .metadata
            .set_values("depth", vec!["2".to_string()]);
        StatusWrite {
            url: crawl_url,
            key: "example.com".to_string(),
            status,
            next_fetch: None,
            queue: QueueReport::default(),
        }
    }

    fn info(url: &str, key: &str, metadata: &[(&str, &[&str])]) -> UrlInfo {
        UrlInfo {
            url: url.to_string(),
            key: key.to_string(),
            metadata: metadata
                .iter()
                .map(|(k, values)| {
                    let values = values.iter().map(|v| v.to_string()).collect();
                    (k.to_string(), StringList { values })
                })
                .collect(),
            crawl_id: "DEFAULT".to_string(),
        }
    }

    #[test]
    fn a_handed_out_url_becomes_a_due_url_with_its_metadata_and_key() {
        let handed = info(
            "https://example.com/a?b=1",
            "example.com",
            &[
                ("depth", &["1"]),
                ("tag", &["x", "y"]),
                (STATUS_KEY, &["FETCH_ERROR"]),
            ],
        );
        let due = due_url(handed, PartitionMode::ByHost).expect("valid URL");
        assert_eq!(due.url.url.as_str(), "https://example.com/a?b=1");
        assert_eq!(due.key, "example.com");
        assert_eq!(due.url.metadata.values("tag"), ["x", "y"]);
        assert_eq!(due.url.depth(), 1);
        assert!(
            !due.url.metadata.contains(STATUS_KEY),
            "the status is not metadata"
        );
        assert_eq!(due.hints, Default::default());
    }

    #[test]
    fn a_url_without_a_key_gets_squalls_partition_key() {
        let handed = info("http://news.example.co.uk/x", "", &[]);
        let due = due_url(handed, PartitionMode::ByDomain).expect("valid URL");
        assert_eq!(due.key, "example.co.uk");
    }

    #[test]
    fn a_malformed_url_is_an_error() {
        assert!(due_url(info("not a url", "k", &[]), PartitionMode::ByHost).is_err());
    }

    #[test]
    fn a_discovered_write_is_a_discovered_item() {
        let item = url_item(
            &write("http://example.com/", Status::Discovered),
            "7".into(),
            "c1",
        );
        assert_eq!(item.id, "7");
        let Some(Item::Discovered(DiscoveredUrlItem { info: Some(info) })) = item.item else {
            panic!("not a discovered item: {item:?}");
        };
        assert_eq!(info.url, "http://example.com/");
        assert_eq!(
            (info.key.as_str(), info.crawl_id.as_str()),
            ("example.com", "c1")
        );
        assert_eq!(info.metadata["depth"].values, ["2"]);
        assert!(!info.metadata.contains_key(STATUS_KEY));
    }

    #[test]
    fn other_writes_are_known_items_with_their_status_and_due_date() {
        let mut fetched = write("http://example.com/", Status::Fetched);
        fetched.next_fetch = Some(Utc.timestamp_opt(1_700_000_000, 1).single().expect("date"));
        let item = url_item(&fetched, "0".into(), "c1");
        let Some(Item::Known(known)) = item.item else {
            panic!("not a known item");
        };
        assert_eq!(known.refetchable_from_date, 1_700_000_001, "rounded up");
        let info = known.info.expect("info");
        assert_eq!(info.metadata[STATUS_KEY].values, ["FETCHED"]);
        assert_eq!(info.metadata["depth"].values, ["2"]);

        for (status, name) in [
            (Status::Error, "ERROR"),
            (Status::FetchError, "FETCH_ERROR"),
            (Status::Redirection, "REDIRECTION"),
        ] {
            let item = url_item(&write("http://example.com/", status), "1".into(), "c1");
            let Some(Item::Known(known)) = item.item else {
                panic!("not a known item");
            };
            assert_eq!(known.refetchable_from_date, 0, "never due again");
            let info = known.info.expect("info");
            assert_eq!(info.metadata[STATUS_KEY].values, [name]);
        }
    }

    #[test]
    fn a_due_date_at_or_before_the_epoch_is_not_never() {
        let mut write = write("http://example.com/", Status::FetchError);
        write.next_fetch = Utc.timestamp_opt(0, 0).single();
        let Some(Item::Known(known)) = url_item(&write, "0".into(), "c1").item else {
            panic!("not a known item");
        };
        assert_eq!(known.refetchable_from_date, 1);
    }

    #[test]
    fn queue_reports_keep_one_per_key_the_longest_delay_and_latest_hold() {
        let hold = |secs| Utc.timestamp_opt(secs, 0).single();
        let mut a = write("http://a.test/1", Status::Fetched);
        a.key = "a.test".into();
        a.queue.crawl_delay = Some(Duration::from_secs(2));
        let mut b = a.clone();
        b.queue = QueueReport {
            crawl_delay: Some(Duration::from_secs(5)),
            blocked_until: hold(100),
            last_fetch: None,
            pace: None,
        };
        let mut c = a.clone();
        c.queue = QueueReport {
            blocked_until: hold(50),
            ..QueueReport::default()
        };
        let mut keyless = a.clone();
        keyless.key = String::new();
        let quiet = write("http://example.com/", Status::Fetched);
        let reports = queue_reports(&[a, b, c, keyless, quiet]);
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(
            reports["a.test"],
            QueueReport {
                crawl_delay: Some(Duration::from_secs(5)),
                blocked_until: hold(100),
                last_fetch: None,
                pace: None,
            }
        );
    }

    #[test]
    fn queue_reports_keep_the_pace_learned_last() {
        let pace = |secs, at| LearnedPace {
            delay: Duration::from_secs(secs),
            cause: squall::frontier::PaceCause::Http(429),
            strikes: 1,
            limit: None,
            at: Utc.timestamp_opt(at, 0).single().unwrap_or_default(),
        };
        let paced = |secs, at| {
            let mut w = write("http://p.test/1", Status::FetchError);
            w.key = "p.test".into();
            w.queue.pace = Some(pace(secs, at));
            w
        };
        let reports = queue_reports(&[paced(8, 20), paced(2, 30), paced(16, 10)]);
        assert_eq!(
            reports["p.test"].pace,
            Some(pace(2, 30)),
            "the newest, not the longest"
        );
    }
}
