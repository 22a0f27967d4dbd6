//! URLFrontier messages as any client may send them to squall-frontier: a `URLItem` (PutURLs), a
//! `URLInfo` (what GetURLs hands out) or a `GetParams` (GetURLs), picked by the first byte, the
//! rest decoded with prost; then taken into squall's types with `squall_urlfrontier::convert` as
//! the server takes them. Nothing may panic, and each conversion with an inverse gives back what it
//! was given:
//!
//! - metadata proto → squall → proto, and squall → proto → squall;
//! - a URL with its metadata, key and crawl squall → `URLInfo` → squall (`url_info`, then
//!   `parse_url` and `metadata_from_proto`); a URL that does not parse is an error naming it;
//! - a known URL's status squall → `squall.status` → squall (`take_status`), the key taken out of
//!   the metadata, the status it names or FETCHED without one, an error naming any other value;
//! - a date proto (seconds) → squall → proto: 0 is never, a date chrono can hold comes back the
//!   same, a later one is never; squall → proto rounds a fraction of a second up;
//! - a crawl ID accepted exactly when it is `DEFAULT` or 1 to 64 of `a-z`, `0-9`, `-`, `_`.
#![no_main]

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};
use libfuzzer_sys::fuzz_target;
use prost::Message;
use squall::model::{CrawlUrl, Metadata, PartitionMode, Status, partition_key};
use squall_urlfrontier::convert::{
    ItemError, STATUS_KEY, date_from_secs, metadata_from_proto, metadata_to_proto, parse_url,
    secs_from_date, take_status, url_info,
};
use squall_urlfrontier::proto::{GetParams, StringList, UrlInfo, UrlItem, get_params, url_item};
use squall_urlfrontier::server::{Ask, DEFAULT_CRAWL, check_id};
use url::Url;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, message)) = data.split_first() else {
        return;
    };
    match kind % 3 {
        0 => {
            if let Ok(item) = UrlItem::decode(message) {
                put_item(item);
            }
        }
        1 => {
            if let Ok(info) = UrlInfo::decode(message) {
                take_info(info, false);
            }
        }
        _ => {
            if let Ok(params) = GetParams::decode(message) {
                get_urls(params);
            }
        }
    }
});

/// An item of PutURLs, taken as the server takes it.
fn put_item(item: UrlItem) {
    match item.item {
        Some(url_item::Item::Discovered(found)) => {
            if let Some(info) = found.info {
                take_info(info, false);
            }
        }
        Some(url_item::Item::Known(known)) => {
            dates(known.refetchable_from_date);
            if let Some(info) = known.info {
                take_info(info, true);
            }
        }
        None => {}
    }
}

/// A `URLInfo` into squall's types (with the status a known URL's metadata names) and back.
fn take_info(info: UrlInfo, known: bool) {
    let sent = info.metadata.clone();
    let mut metadata = metadata_round_trip(info.metadata);
    let status = if known {
        let Some(status) = known_status(&sent, &mut metadata) else {
            return; // the server skips the item
        };
        Some(status)
    } else {
        None
    };
    let Some(url) = taken_url(&info.url) else {
        return;
    };
    let key = if info.key.is_empty() {
        partition_keys(&url, &metadata)
    } else {
        info.key
    };
    let crawl = if info.crawl_id.is_empty() {
        DEFAULT_CRAWL.to_string()
    } else {
        info.crawl_id
    };
    crawl_id(&crawl);
    let crawl_url = CrawlUrl { url, metadata };
    handed_out(&crawl_url, &key, &crawl, status);
}

/// Metadata proto → squall → proto, and squall → proto → squall; the metadata taken.
fn metadata_round_trip(sent: HashMap<String, StringList>) -> Metadata {
    let metadata = metadata_from_proto(sent.clone());
    assert_eq!(metadata.len(), sent.len());
    assert_eq!(
        metadata_to_proto(&metadata),
        sent,
        "metadata proto → squall → proto"
    );
    assert_eq!(
        metadata_from_proto(metadata_to_proto(&metadata)),
        metadata,
        "metadata squall → proto → squall"
    );
    metadata
}

/// A known URL's status taken out of its metadata (`sent` as the client sent it): the status it
/// names, FETCHED without one; `None` for a name that is no status (the server skips the item).
fn known_status(sent: &HashMap<String, StringList>, metadata: &mut Metadata) -> Option<Status> {
    let named = sent
        .get(STATUS_KEY)
        .map(|list| list.values.first().cloned().unwrap_or_default());
    let taken = take_status(metadata);
    assert!(
        !metadata.contains(STATUS_KEY),
        "the status key stays in the metadata"
    );
    assert_eq!(metadata.len(), sent.len() - usize::from(named.is_some()));
    match (&named, &taken) {
        (None, Ok(status)) => assert_eq!(*status, Status::Fetched),
        (Some(name), Ok(status)) => assert_eq!(status.as_str(), name),
        (Some(name), Err(ItemError::Status(text))) => {
            assert_eq!(text, name);
            assert!(Status::ALL.iter().all(|status| status.as_str() != name));
        }
        (named, taken) => panic!("status {named:?} taken as {taken:?}"),
    }
    let status = taken.ok()?;
    // squall → metadata → squall.
    let mut again = metadata.clone();
    again.set(STATUS_KEY, status.as_str());
    assert_eq!(take_status(&mut again), Ok(status));
    assert_eq!(&again, metadata);
    Some(status)
}

/// The URL sent, parsed; `None` when it does not parse (the error names it).
fn taken_url(sent: &str) -> Option<Url> {
    match parse_url(sent) {
        Ok(url) => Some(url),
        Err(ItemError::Url { url, .. }) => {
            assert_eq!(url, sent, "the error names the URL sent");
            None
        }
        Err(error) => panic!("{sent:?} refused as {error:?}"),
    }
}

/// The URL's partition key in every mode (the last one's kept, as the server's default).
fn partition_keys(url: &Url, metadata: &Metadata) -> String {
    let mut key = String::new();
    for mode in [
        PartitionMode::ByHost,
        PartitionMode::ByDomain,
        PartitionMode::ByIp,
    ] {
        key = partition_key(url, metadata, mode);
    }
    key
}

/// squall → URLInfo → squall, as the server hands a URL out and a client takes it; and a known
/// URL's status as the server shows it (under `squall.status`), taken back.
fn handed_out(crawl_url: &CrawlUrl, key: &str, crawl: &str, status: Option<Status>) {
    let CrawlUrl { url, metadata } = crawl_url;
    let mut out = url_info(crawl_url, key, crawl);
    assert_eq!(out.key, key);
    assert_eq!(out.crawl_id, crawl);
    assert_eq!(
        parse_url(&out.url),
        Ok(url.clone()),
        "the URL {url} as sent back"
    );
    assert_eq!(&metadata_from_proto(out.metadata.clone()), metadata);

    if let Some(status) = status {
        out.metadata.insert(
            STATUS_KEY.to_string(),
            StringList {
                values: vec![status.as_str().to_string()],
            },
        );
        let mut back = metadata_from_proto(out.metadata);
        assert_eq!(take_status(&mut back), Ok(status));
        assert_eq!(&back, metadata);
    }
}

/// `refetchable_from_date` as a date and back.
fn dates(secs: u64) {
    let date = date_from_secs(secs);
    let latest = u64::try_from(DateTime::<Utc>::MAX_UTC.timestamp()).unwrap_or(u64::MAX);
    match date {
        None => assert!(secs == 0 || secs > latest, "{secs} s taken as never"),
        Some(date) => {
            assert!(secs != 0 && secs <= latest);
            assert_eq!(date.timestamp_subsec_nanos(), 0);
            assert_eq!(secs_from_date(Some(date)), secs, "{date} back as seconds");
            if let Some(later) = date.checked_add_signed(TimeDelta::nanoseconds(1)) {
                assert_eq!(secs_from_date(Some(later)), secs + 1, "{later} rounded up");
            }
        }
    }
    assert_eq!(secs_from_date(None), 0);
}

/// GetParams as the server reads them: the crawl or crawls named, and what is asked of them.
fn get_urls(params: GetParams) {
    let _ask = Ask {
        max_queues: params.max_queues as usize,
        max_urls_per_queue: params.max_urls_per_queue as usize,
        key: Some(params.key).filter(|key| !key.is_empty()),
        hold: std::time::Duration::from_secs(u64::from(params.delay_requestable)),
    };
    match params.item {
        Some(get_params::Item::CrawlId(id)) if !id.is_empty() => crawl_id(&id),
        Some(get_params::Item::CrawlId(_)) | None => crawl_id(DEFAULT_CRAWL),
        Some(get_params::Item::AnyCrawlId(_)) => {}
    }
}

/// A crawl ID is accepted exactly when it can name a frontier.
fn crawl_id(id: &str) {
    let usable = id == DEFAULT_CRAWL
        || ((1..=64).contains(&id.len())
            && id
                .chars()
                .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-' | '_')));
    assert_eq!(check_id(id).is_ok(), usable, "crawl ID {id:?}");
}
