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

/// A limit where a negative number (StormCrawler writes `-1`) means none: `Option<u32>`,
/// `Option<usize>`, ...
pub mod negative_is_none {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads the limit.
    pub fn deserialize<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: TryFrom<i64>,
    {
        let value = i64::deserialize(deserializer)?;
        if value < 0 {
            return Ok(None);
        }
        T::try_from(value)
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("{value} is too large")))
    }

    /// Writes the limit, `-1` for none.
    pub fn serialize<S, T>(value: &Option<T>, serializer: S) -> Result<S::Ok, S::Error>
    where
        S: Serializer,
        T: Copy + TryInto<i64>,
    {
        let value = value.and_then(|v| v.try_into().ok()).unwrap_or(-1);
        serializer.serialize_i64(value)
    }
}

/// A text where empty (or only spaces) means none: `Option<String>`.
pub mod empty_is_none {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads the text, trimmed.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<String>, D::Error> {
        let text = String::deserialize(deserializer)?;
        let text = text.trim();
        Ok((!text.is_empty()).then(|| text.to_string()))
    }

    /// Writes the text, empty for none.
    pub fn serialize<S: Serializer>(
        value: &Option<String>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(value.as_deref().unwrap_or_default())
    }
}

/// A number of milliseconds (`2000`) as a [`Duration`](std::time::Duration).
pub mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads milliseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(deserializer)?))
    }

    /// Writes milliseconds.
    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
    }
}

/// Whole seconds where a negative number (StormCrawler writes `-1`) means never:
/// `Option<Duration>`.
pub mod seconds_or_never {
    use std::time::Duration;

    use serde::{Deserializer, Serializer};

    /// Reads the seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        let seconds: Option<u64> = super::negative_is_none::deserialize(deserializer)?;
        Ok(seconds.map(Duration::from_secs))
    }

    /// Writes the seconds, `-1` for never.
    pub fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        super::negative_is_none::serialize(&value.map(|d| d.as_secs()), serializer)
    }
}

/// Whole minutes, as StormCrawler's fetch intervals count them, where a negative number (`-1`)
/// means never: `Option<Duration>`. Written back, a part of a minute counts as a whole one.
pub mod minutes_or_never {
    use std::time::Duration;

    use serde::{Deserializer, Serializer};

    /// Reads the minutes.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        let minutes: Option<u64> = super::negative_is_none::deserialize(deserializer)?;
        Ok(minutes.map(|m| Duration::from_secs(m.saturating_mul(60))))
    }

    /// Writes the minutes, `-1` for never.
    pub fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        super::negative_is_none::serialize(&value.map(whole_minutes), serializer)
    }

    /// A duration in whole minutes, a part of a minute counting as one.
    pub fn whole_minutes(duration: Duration) -> u64 {
        let seconds = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
        seconds.div_ceil(60)
    }
}

/// A whole number of seconds (`30`) as a [`Duration`](std::time::Duration).
pub mod whole_seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads whole seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs(u64::deserialize(deserializer)?))
    }

    /// Writes whole seconds.
    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(value.as_secs())
    }
}

/// Seconds (`1.5`, as [`seconds`] reads them) where a negative number (StormCrawler writes `-1`)
/// means none: `Option<Duration>`.
pub mod seconds_or_none {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Reads the seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        let value = f64::deserialize(deserializer)?;
        if value < 0.0 {
            return Ok(None);
        }
        let value = serde::de::value::F64Deserializer::<D::Error>::new(value);
        super::seconds::deserialize(value).map(Some)
    }

    /// Writes the seconds, `-1` for none.
    pub fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(duration) => serializer.serialize_f64(duration.as_secs_f64()),
            None => serializer.serialize_i64(-1),
        }
    }
}

/// HTTP status codes: one or a list, each a number or a string of one (StormCrawler's files write
/// `[429, 503]`, `["429", "503"]` or `"429,503"`, and it reads them all).
pub mod status_codes {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// One code as a file writes it.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Code {
        Number(u16),
        Text(String),
    }

    /// The codes as a file writes them.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        One(Code),
        List(Vec<Code>),
    }

    /// The codes a written code stands for: a number, or a string of them separated by commas.
    fn codes_of(code: Code) -> Result<Vec<u16>, String> {
        match code {
            Code::Number(number) => Ok(vec![number]),
            Code::Text(text) => text
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .map(|part| {
                    part.parse::<u16>()
                        .map_err(|_| format!("'{part}' is not an HTTP status code"))
                })
                .collect(),
        }
    }

    /// Reads the codes.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u16>, D::Error> {
        let written = match Written::deserialize(deserializer)? {
            Written::One(code) => vec![code],
            Written::List(codes) => codes,
        };
        let mut codes = Vec::new();
        for code in written {
            codes.extend(codes_of(code).map_err(D::Error::custom)?);
        }
        Ok(codes)
    }

    /// Writes the codes as a list of numbers.
    pub fn serialize<S: Serializer>(codes: &[u16], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(codes)
    }
}
