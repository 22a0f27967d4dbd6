//! Between URLFrontier's messages and squall's types: metadata, URLs, and the status squall keeps
//! in a metadata key because the API has no field for it.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use squall::model::{CrawlUrl, Metadata, Status};

use crate::proto::{StringList, UrlInfo};

/// The metadata key in which a squall client sends a known URL's status (`FETCHED`, `ERROR`,
/// `REDIRECTION`, `FETCH_ERROR`). URLFrontier has no status field; a known URL put without it is
/// taken as `FETCHED`. The server does not store the key with the URL's metadata.
pub const STATUS_KEY: &str = "squall.status";

/// URLFrontier metadata as squall metadata.
pub fn metadata_from_proto(metadata: HashMap<String, StringList>) -> Metadata {
    let mut out = Metadata::new();
    for (key, list) in metadata {
        out.set_values(key, list.values);
    }
    out
}

/// squall metadata as URLFrontier metadata.
pub fn metadata_to_proto(metadata: &Metadata) -> HashMap<String, StringList> {
    metadata
        .iter()
        .map(|(key, values)| {
            let list = StringList {
                values: values.to_vec(),
            };
            (key.to_string(), list)
        })
        .collect()
}

/// A URL, its queue and crawl as a `URLInfo`.
pub fn url_info(url: &CrawlUrl, key: &str, crawl: &str) -> UrlInfo {
    UrlInfo {
        url: url.url.to_string(),
        key: key.to_string(),
        metadata: metadata_to_proto(&url.metadata),
        crawl_id: crawl.to_string(),
    }
}

/// Why a URL put by a client cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemError {
    /// The item has neither `discovered` nor `known`.
    #[error("the item is neither discovered nor known")]
    Empty,
    /// The URL does not parse.
    #[error("malformed URL {url:?}: {reason}")]
    Url {
        /// The URL as sent.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The `squall.status` metadata names no status.
    #[error("unknown status {0:?} in metadata `squall.status`")]
    Status(String),
}

/// A URL as sent, parsed.
pub fn parse_url(text: &str) -> Result<url::Url, ItemError> {
    url::Url::parse(text).map_err(|error| ItemError::Url {
        url: text.to_string(),
        reason: error.to_string(),
    })
}

/// The status a known URL's metadata names (taken out of it), `FETCHED` when none.
pub fn take_status(metadata: &mut Metadata) -> Result<Status, ItemError> {
    match metadata.remove(STATUS_KEY) {
        None => Ok(Status::Fetched),
        Some(values) => {
            let text = values.first().map(String::as_str).unwrap_or_default();
            text.parse()
                .map_err(|_| ItemError::Status(text.to_string()))
        }
    }
}

/// Seconds since the epoch as a date; 0 means never.
pub fn date_from_secs(secs: u64) -> Option<DateTime<Utc>> {
    if secs == 0 {
        return None;
    }
    DateTime::from_timestamp(i64::try_from(secs).unwrap_or(i64::MAX), 0)
}

/// A date as seconds since the epoch, rounded up; never is 0.
pub fn secs_from_date(date: Option<DateTime<Utc>>) -> u64 {
    date.map_or(0, |date| {
        let secs = date.timestamp() + i64::from(date.timestamp_subsec_nanos() > 0);
        u64::try_from(secs).unwrap_or(1).max(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips() {
        let mut metadata = Metadata::new();
        metadata.set_values("depth", vec!["1".into()]);
        metadata.set_values("tags", vec!["a".into(), "b".into()]);
        assert_eq!(metadata_from_proto(metadata_to_proto(&metadata)), metadata);
    }

    #[test]
    fn the_status_comes_out_of_the_metadata() {
        let mut metadata = Metadata::new();
        assert_eq!(take_status(&mut metadata), Ok(Status::Fetched));
        metadata.set(STATUS_KEY, "FETCH_ERROR");
        metadata.set("depth", "2");
        assert_eq!(take_status(&mut metadata), Ok(Status::FetchError));
        assert!(!metadata.contains(STATUS_KEY));
        metadata.set(STATUS_KEY, "LOST");
        assert!(take_status(&mut metadata).is_err());
    }

    #[test]
    fn dates_are_whole_seconds_and_zero_is_never() {
        assert_eq!(date_from_secs(0), None);
        let date = date_from_secs(1_700_000_000);
        assert_eq!(secs_from_date(date), 1_700_000_000);
        assert_eq!(secs_from_date(None), 0);
    }
}
