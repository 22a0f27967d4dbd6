//! How StormCrawler's keys write their values, read straight into the types the stages use: serde
//! adapters for the fields of a settings type (`#[serde(with = "crate::settings::units::seconds")]`),
//! each refusing a value it cannot take with a message that, through the configuration, names the
//! key.

/// A number of seconds (`1.5`) as a [`Duration`](std::time::Duration): finite, from 0 to a year.
pub mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// A year: far beyond any sensible setting, well within what timers hold.
    const YEAR: f64 = 365.0 * 24.0 * 3600.0;

    /// Reads seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let value = f64::deserialize(deserializer)?;
        if !value.is_finite() || !(0.0..=YEAR).contains(&value) {
            return Err(serde::de::Error::custom(
                "must be a number of seconds from 0 to one year",
            ));
        }
        Ok(Duration::from_secs_f64(value))
    }

    /// Writes seconds.
    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_secs_f64())
    }
}

/// A count where a negative number (StormCrawler writes `-1`) means no limit: `usize::MAX`.
pub mod count_or_unlimited {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads the count.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
        let value = i64::deserialize(deserializer)?;
        Ok(usize::try_from(value).unwrap_or(usize::MAX))
    }

    /// Writes the count, `-1` for no limit.
    pub fn serialize<S: Serializer>(value: &usize, serializer: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(*value) {
            Ok(count) if *value != usize::MAX => serializer.serialize_i64(count),
            _ => serializer.serialize_i64(-1),
        }
    }
}

/// A rate where 0 means none: `Option<NonZeroU32>`.
pub mod zero_is_none {
    use std::num::NonZeroU32;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads the rate.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<NonZeroU32>, D::Error> {
        Ok(NonZeroU32::new(u32::deserialize(deserializer)?))
    }

    /// Writes the rate, 0 for none.
    pub fn serialize<S: Serializer>(
        value: &Option<NonZeroU32>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(value.map_or(0, NonZeroU32::get))
    }
}
