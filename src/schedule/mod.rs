//! When a URL is due again: StormCrawler's `DefaultScheduler`.

mod settings;

pub use settings::ScheduleSettings;

use std::sync::LazyLock;

use chrono::{DateTime, Duration, Timelike, Utc};
use regex::Regex;

use crate::model::{Metadata, Status, keys};

/// Decides when a URL should be fetched next.
pub trait Scheduler: Send + Sync {
    /// When `url` with this `status` and `metadata` should be fetched next; None means never.
    fn schedule(
        &self,
        status: Status,
        metadata: &Metadata,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>>;
}

/// The configuration key of the default interval (FETCHED and REDIRECTION).
pub const DEFAULT_INTERVAL_KEY: &str = "fetchInterval.default";
/// The configuration key of the FETCH_ERROR interval.
pub const FETCH_ERROR_INTERVAL_KEY: &str = "fetchInterval.fetch.error";
/// The configuration key of the ERROR interval.
pub const ERROR_INTERVAL_KEY: &str = "fetchInterval.error";

/// StormCrawler's pattern of custom interval keys: `fetchInterval[.STATUS].mdKey=mdValue`.
static CUSTOM_KEY: LazyLock<Result<Regex, regex::Error>> =
    LazyLock::new(|| Regex::new(r"^fetchInterval(\.(.+?))?\.(.+)=(.+)$"));

/// An invalid custom interval key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// The key is not of the form `fetchInterval[.STATUS].mdKey=mdValue`.
    #[error(
        "invalid custom fetch interval key {key:?} (expected fetchInterval.<metadata key>=<value> \
         or fetchInterval.<STATUS>.<metadata key>=<value>)"
    )]
    InvalidKey {
        /// The offending key.
        key: String,
    },
    /// The key names a status that does not exist.
    #[error(
        "unknown status {status:?} in custom fetch interval key {key:?} (expected DISCOVERED, \
         FETCHED, FETCH_ERROR, REDIRECTION or ERROR)"
    )]
    UnknownStatus {
        /// The offending key.
        key: String,
        /// The status name it contains.
        status: String,
    },
}

impl ScheduleError {
    /// The custom interval key refused.
    pub fn key(&self) -> &str {
        match self {
            ScheduleError::InvalidKey { key } | ScheduleError::UnknownStatus { key, .. } => key,
        }
    }
}

/// Whether a configuration key is a custom interval key (`fetchInterval[.STATUS].mdKey=mdValue`),
/// as opposed to one of the three fixed interval keys or anything else.
pub fn is_custom_interval_key(key: &str) -> bool {
    ![
        DEFAULT_INTERVAL_KEY,
        FETCH_ERROR_INTERVAL_KEY,
        ERROR_INTERVAL_KEY,
    ]
    .contains(&key)
        && CUSTOM_KEY.as_ref().is_ok_and(|re| re.is_match(key))
}

/// A custom interval: applies when the metadata key has the value (and the status matches, if set).
#[derive(Debug, Clone, PartialEq, Eq)]
struct CustomInterval {
    status: Option<Status>,
    key: String,
    value: String,
    minutes: i64,
}

impl CustomInterval {
    fn matches(&self, metadata: &Metadata) -> bool {
        metadata.values(&self.key).contains(&self.value)
    }
}

/// StormCrawler's `DefaultScheduler`.
///
/// The next fetch is `now` plus an interval in minutes, truncated to the second; a negative
/// interval means never. The interval is, in order of precedence:
///
/// 1. the URL's own `scheduler.delay.mins` metadata ([`keys::SCHEDULER_DELAY_MINS`]), when it is
///    an integer;
/// 2. the first matching custom interval for this status (`fetchInterval.FETCH_ERROR.isFeed=true`);
/// 3. the first matching custom interval for any status (`fetchInterval.isFeed=true`);
/// 4. by status: the default interval for FETCHED and REDIRECTION, the fetch error interval for
///    FETCH_ERROR, the error interval for ERROR, and 0 (due now) for DISCOVERED.
///
/// A custom interval matches when its metadata key has its value among its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultScheduler {
    default_mins: i64,
    fetch_error_mins: i64,
    error_mins: i64,
    custom: Vec<CustomInterval>,
}

impl DefaultScheduler {
    /// A scheduler with the intervals, in minutes, of `fetchInterval.default`,
    /// `fetchInterval.fetch.error` and `fetchInterval.error` (negative means never).
    pub fn new(default_mins: i64, fetch_error_mins: i64, error_mins: i64) -> Self {
        DefaultScheduler {
            default_mins,
            fetch_error_mins,
            error_mins,
            custom: Vec::new(),
        }
    }

    /// Adds a custom interval from its full configuration key, e.g.
    /// `fetchInterval.FETCH_ERROR.isFeed=true` or `fetchInterval.isFeed=true`. Among custom
    /// intervals of the same kind (with or without a status), the first added wins.
    pub fn with_custom(mut self, key: &str, minutes: i64) -> Result<Self, ScheduleError> {
        let invalid = || ScheduleError::InvalidKey {
            key: key.to_string(),
        };
        if !is_custom_interval_key(key) {
            return Err(invalid());
        }
        let re = CUSTOM_KEY.as_ref().map_err(|_| invalid())?;
        let caps = re.captures(key).ok_or_else(invalid)?;
        let status =
            match caps.get(2) {
                None => None,
                Some(name) => Some(name.as_str().parse::<Status>().map_err(|_| {
                    ScheduleError::UnknownStatus {
                        key: key.to_string(),
                        status: name.as_str().to_string(),
                    }
                })?),
            };
        let (Some(md_key), Some(md_value)) = (caps.get(3), caps.get(4)) else {
            return Err(invalid());
        };
        self.custom.push(CustomInterval {
            status,
            key: md_key.as_str().to_string(),
            value: md_value.as_str().to_string(),
            minutes,
        });
        Ok(self)
    }

    /// The interval in minutes for a URL (negative means never).
    pub fn interval_mins(&self, status: Status, metadata: &Metadata) -> i64 {
        if let Some(mins) = metadata
            .first(keys::SCHEDULER_DELAY_MINS)
            .and_then(|m| m.trim().parse::<i64>().ok())
        {
            return mins;
        }
        let specific = self
            .custom
            .iter()
            .filter(|c| c.status == Some(status))
            .find(|c| c.matches(metadata));
        let custom = specific.or_else(|| {
            self.custom
                .iter()
                .filter(|c| c.status.is_none())
                .find(|c| c.matches(metadata))
        });
        if let Some(c) = custom {
            return c.minutes;
        }
        match status {
            Status::Fetched | Status::Redirection => self.default_mins,
            Status::FetchError => self.fetch_error_mins,
            Status::Error => self.error_mins,
            Status::Discovered => 0,
        }
    }
}

impl Default for DefaultScheduler {
    /// The defaults of the `fetchInterval.*` keys ([`ScheduleSettings`]), StormCrawler's: 1440
    /// minutes (one day), 120 for fetch errors, never for errors.
    fn default() -> Self {
        ScheduleSettings::default().status_scheduler()
    }
}

impl Scheduler for DefaultScheduler {
    /// `now` plus the interval, truncated to the second; `None` when the interval is negative or
    /// the date would overflow.
    fn schedule(
        &self,
        status: Status,
        metadata: &Metadata,
        now: DateTime<Utc>,
    ) -> Option<DateTime<Utc>> {
        let mins = self.interval_mins(status, metadata);
        if mins < 0 {
            return None;
        }
        let due = now.checked_add_signed(Duration::try_minutes(mins)?)?;
        due.with_nanosecond(0)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 5, 17, 10, 30, 15)
            .single()
            .expect("date")
            + Duration::milliseconds(789)
    }

    fn at(mins: i64) -> Option<DateTime<Utc>> {
        Some(
            Utc.with_ymd_and_hms(2024, 5, 17, 10, 30, 15)
                .single()
                .expect("date")
                + Duration::minutes(mins),
        )
    }

    /// The default scheduler with the custom intervals `rules` (key, minutes), in their order.
    fn custom(rules: &[(&str, i64)]) -> DefaultScheduler {
        let with = |s: DefaultScheduler, (key, minutes): &(&str, i64)| s.with_custom(key, *minutes);
        let rules = rules.iter().try_fold(DefaultScheduler::default(), with);
        rules.expect("key")
    }

    fn md(pairs: &[(&str, &str)]) -> Metadata {
        pairs.iter().copied().collect()
    }

    /// Checks, for each `(status, metadata, due)`, that `s` schedules a URL of that status and
    /// metadata at `due`.
    #[track_caller]
    fn check(s: &DefaultScheduler, cases: &[(Status, &Metadata, Option<DateTime<Utc>>)]) {
        for (status, metadata, due) in cases {
            let scheduled = s.schedule(*status, metadata, now());
            assert_eq!(scheduled, *due, "{status} {metadata:?}");
        }
    }

    #[test]
    fn default_intervals_by_status() {
        let s = DefaultScheduler::default();
        let m = Metadata::new();
        assert_eq!(s.schedule(Status::Fetched, &m, now()), at(1440));
        assert_eq!(s.schedule(Status::Redirection, &m, now()), at(1440));
        assert_eq!(s.schedule(Status::FetchError, &m, now()), at(120));
        assert_eq!(s.schedule(Status::Error, &m, now()), None);
        assert_eq!(s.schedule(Status::Discovered, &m, now()), at(0));
    }

    #[test]
    fn configured_intervals_and_negative_means_never() {
        let s = DefaultScheduler::new(60, -5, 30);
        let m = Metadata::new();
        assert_eq!(s.schedule(Status::Fetched, &m, now()), at(60));
        assert_eq!(s.schedule(Status::FetchError, &m, now()), None);
        assert_eq!(s.schedule(Status::Error, &m, now()), at(30));
        let never = DefaultScheduler::new(-1, 10, 10);
        assert_eq!(never.schedule(Status::Fetched, &m, now()), None);
        assert_eq!(never.schedule(Status::Redirection, &m, now()), None);
    }

    #[test]
    fn result_is_truncated_to_the_second() {
        let s = DefaultScheduler::default();
        let due = s
            .schedule(Status::Discovered, &Metadata::new(), now())
            .expect("due");
        assert_eq!(due.nanosecond(), 0);
        assert!(due <= now());
    }

    #[test]
    fn generic_custom_interval_applies_to_every_status() {
        let s = custom(&[("fetchInterval.isFeed=true", 10)]);
        let feed = md(&[("isFeed", "true")]);
        for status in Status::ALL {
            assert_eq!(s.schedule(status, &feed, now()), at(10), "{status}");
        }
        let not_feed = md(&[("isFeed", "false")]);
        assert_eq!(s.schedule(Status::Fetched, &not_feed, now()), at(1440));
    }

    #[test]
    fn status_specific_custom_interval_only_for_that_status_and_takes_precedence() {
        let s = custom(&[
            ("fetchInterval.isFeed=true", 10),
            ("fetchInterval.FETCH_ERROR.isFeed=true", 60),
        ]);
        let feed = md(&[("isFeed", "true")]);
        check(
            &s,
            &[
                (Status::FetchError, &feed, at(60)),
                (Status::Fetched, &feed, at(10)),
                (Status::FetchError, &Metadata::new(), at(120)),
            ],
        );
    }

    #[test]
    fn first_matching_custom_interval_wins_and_multi_values_match() {
        let s = custom(&[
            ("fetchInterval.lang=fr", 30),
            ("fetchInterval.type=news", 5),
            ("fetchInterval.FETCHED.type=news", 7),
            ("fetchInterval.FETCHED.lang=fr", 8),
        ]);
        let both = md(&[("type", "blog"), ("type", "news"), ("lang", "fr")]);
        let news = md(&[("type", "blog"), ("type", "news")]);
        check(
            &s,
            &[
                (Status::Redirection, &both, at(30)),
                (Status::Fetched, &both, at(7)),
                (Status::Redirection, &news, at(5)),
                (Status::Fetched, &news, at(7)),
            ],
        );
    }

    #[test]
    fn custom_interval_can_mean_never() {
        let s = custom(&[
            ("fetchInterval.ERROR.retry=yes", 600),
            ("fetchInterval.FETCHED.static=true", -1),
        ]);
        assert_eq!(
            s.schedule(Status::Error, &md(&[("retry", "yes")]), now()),
            at(600)
        );
        assert_eq!(
            s.schedule(Status::Fetched, &md(&[("static", "true")]), now()),
            None
        );
    }

    #[test]
    fn dotted_status_and_metadata_keys() {
        // The status is the part before the first dot; the metadata key may contain dots and '='.
        let s = custom(&[
            ("fetchInterval.FETCHED.parse.title=Home", 3),
            ("fetchInterval.a=b=c", 4),
        ]);
        assert_eq!(
            s.schedule(Status::Fetched, &md(&[("parse.title", "Home")]), now()),
            at(3)
        );
        assert_eq!(
            s.schedule(Status::Fetched, &md(&[("a=b", "c")]), now()),
            at(4)
        );
    }

    #[test]
    fn metadata_delay_overrides_everything() {
        let s = custom(&[("fetchInterval.FETCHED.isFeed=true", 10)]);
        let m = md(&[(keys::SCHEDULER_DELAY_MINS, "45"), ("isFeed", "true")]);
        for status in Status::ALL {
            assert_eq!(s.schedule(status, &m, now()), at(45), "{status}");
        }
        let never = md(&[(keys::SCHEDULER_DELAY_MINS, "-1")]);
        assert_eq!(s.schedule(Status::Discovered, &never, now()), None);
        // An unreadable override is ignored.
        let bad = md(&[(keys::SCHEDULER_DELAY_MINS, "soon")]);
        assert_eq!(s.schedule(Status::Fetched, &bad, now()), at(1440));
        assert_eq!(s.interval_mins(Status::Fetched, &m), 45);
    }

    #[test]
    fn overflow_means_never() {
        let s = DefaultScheduler::new(i64::MAX, 0, 0);
        assert_eq!(s.schedule(Status::Fetched, &Metadata::new(), now()), None);
    }

    #[test]
    fn custom_key_recognition() {
        assert!(is_custom_interval_key("fetchInterval.isFeed=true"));
        assert!(is_custom_interval_key(
            "fetchInterval.FETCH_ERROR.isFeed=true"
        ));
        assert!(!is_custom_interval_key("fetchInterval.default"));
        assert!(!is_custom_interval_key("fetchInterval.fetch.error"));
        assert!(!is_custom_interval_key("fetchInterval.error"));
        assert!(!is_custom_interval_key("fetchInterval.isFeed="));
        assert!(!is_custom_interval_key("fetchInterval=true"));
        assert!(!is_custom_interval_key("fetcher.threads"));
    }

    #[test]
    fn bad_keys_are_errors_naming_the_key() {
        let err = DefaultScheduler::default()
            .with_custom("fetchInterval.isFeed", 10)
            .expect_err("invalid");
        assert_eq!(
            err,
            ScheduleError::InvalidKey {
                key: "fetchInterval.isFeed".into()
            }
        );
        assert!(err.to_string().contains("fetchInterval.isFeed"));
        let err = DefaultScheduler::default()
            .with_custom("fetchInterval.default", 10)
            .expect_err("fixed key");
        assert!(matches!(err, ScheduleError::InvalidKey { .. }));
        let err = DefaultScheduler::default()
            .with_custom("fetchInterval.FETCHING.isFeed=true", 10)
            .expect_err("unknown status");
        assert_eq!(
            err,
            ScheduleError::UnknownStatus {
                key: "fetchInterval.FETCHING.isFeed=true".into(),
                status: "FETCHING".into()
            }
        );
        assert!(
            err.to_string()
                .contains("fetchInterval.FETCHING.isFeed=true")
        );
    }
}
