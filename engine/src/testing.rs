//! Helpers shared by the crate's unit tests.

use chrono::{DateTime, TimeZone, Utc};

/// The UTC time of that day and second.
pub(crate) fn utc(year: i32, month: u32, day: u32, hour: u32, min: u32, sec: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, month, day, hour, min, sec)
        .single()
        .expect("date")
}
