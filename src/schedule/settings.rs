//! When URLs are due again, as the configuration says: the `fetchInterval.*` keys and
//! `max.fetch.errors`, read straight from the configuration (each field names its key, and
//! `Default` holds each key's default).

use std::time::Duration;

use super::{DefaultScheduler, ScheduleError};
use crate::settings::units::minutes_or_never::whole_minutes;
use crate::settings::{KeyedSettings, keyed_settings, units};

keyed_settings! {
    /// The fetch intervals, in StormCrawler's whole minutes (a part of a minute set in code counts
    /// as a whole one), and the fetch errors a URL may have.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ScheduleSettings {
        /// `fetchInterval.default`: minutes before a FETCHED or REDIRECTION URL is due again. -1:
        /// never.
        "fetchInterval.default" with "units::minutes_or_never" => default: Option<Duration> =
            Some(Duration::from_secs(1440 * 60)),
        /// `fetchInterval.fetch.error`: minutes before a FETCH_ERROR URL is due again. -1: never.
        "fetchInterval.fetch.error" with "units::minutes_or_never" => fetch_error: Option<Duration> =
            Some(Duration::from_secs(120 * 60)),
        /// `fetchInterval.error`: minutes before an ERROR URL is due again. -1: never.
        "fetchInterval.error" with "units::minutes_or_never" => error: Option<Duration> = None,
        /// `max.fetch.errors`: consecutive fetch errors after which FETCH_ERROR becomes ERROR.
        "max.fetch.errors" => max_fetch_errors: u32 = 3,
        derived {
            /// Custom intervals by metadata, from keys such as `fetchInterval.isFeed=true` or
            /// `fetchInterval.FETCH_ERROR.isFeed=true` (their names are open-ended, so the
            /// configuration gathers them), in the order given; `None`: never.
            custom: Vec<(String, Option<Duration>)> = Vec::new(),
        }
    }
}

impl ScheduleSettings {
    /// The scheduler these intervals describe; an invalid custom key is refused.
    pub fn scheduler(&self) -> Result<DefaultScheduler, ScheduleError> {
        let mut scheduler = self.status_scheduler();
        for (key, interval) in &self.custom {
            scheduler = scheduler.with_custom(key, minutes(*interval))?;
        }
        Ok(scheduler)
    }
}

impl ScheduleSettings {
    /// The scheduler of the intervals by status alone, without the custom ones.
    pub(super) fn status_scheduler(&self) -> DefaultScheduler {
        DefaultScheduler::new(
            minutes(self.default),
            minutes(self.fetch_error),
            minutes(self.error),
        )
    }
}

impl KeyedSettings for ScheduleSettings {}

/// An interval in the scheduler's whole minutes, `-1` for never.
fn minutes(interval: Option<Duration>) -> i64 {
    interval.map_or(-1, |d| i64::try_from(whole_minutes(d)).unwrap_or(i64::MAX))
}
