//! Helpers shared by the crate's unit tests.

use chrono::{DateTime, TimeZone, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use squall::config::{ConfigBuilder, ConfigError, CrawlConfig};

use crate::client::ConnectionConfig;

/// The UTC time of that day and second.
pub(crate) fn utc(year: i32, month: u32, day: u32, hour: u32, min: u32, sec: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, month, day, hour, min, sec)
        .single()
        .expect("date")
}

/// The configuration of `keys` (each `key=value`), after `http.agent.name=test`.
pub(crate) fn config_of(keys: &[&str]) -> Result<CrawlConfig, ConfigError> {
    let mut builder = ConfigBuilder::new().set("http.agent.name=test")?;
    for key in keys {
        builder = builder.set(key)?;
    }
    builder.build()
}

/// The node addresses of `connection`, as text.
pub(crate) fn addresses(connection: &ConnectionConfig) -> Vec<&str> {
    connection.addresses.iter().map(|a| a.as_str()).collect()
}

/// Panics, naming the key, unless examples/opensearch-conf.yaml lists every key `T` reads under
/// `prefixes` (the first the one written) at the default `T` holds; `others` are the prefixes of
/// the sections `T` holds.
pub(crate) fn assert_example_lists<T>(prefixes: &[&str], others: &[&str])
where
    T: DeserializeOwned + Serialize + Default,
{
    let text = include_str!("../../examples/opensearch-conf.yaml");
    if let Err(error) = squall::config::check_example::<T>(text, prefixes, others) {
        panic!("examples/opensearch-conf.yaml: {error}");
    }
}

/// Reading `settings` with `read` fails, the error naming `key`; the error's text, for more checks.
pub(crate) fn refused_naming<T, E>(
    read: impl FnOnce(&[&str]) -> Result<T, E>,
    settings: &[&str],
    key: &str,
) -> String
where
    T: std::fmt::Debug,
    E: std::fmt::Display,
{
    let text = read(settings).expect_err(key).to_string();
    assert!(text.contains(key), "{text}");
    text
}
