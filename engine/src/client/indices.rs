//! Index administration every frontier needs: whether an index exists, creating one (the one way
//! this crate creates indices: [`ensure_index`]), its shard count and refresh interval.

use std::time::Duration;

use serde_json::{Value, json};

use super::{EsClient, EsError, Method, RequestBody, truncate};

/// Whether the index was made now or was there already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexState {
    /// Created now, with the body given.
    Created,
    /// Already there; used as it is.
    Existing,
}

/// Why an index the crawl writes beside its frontier (the content index, the metrics index) could
/// not be opened: its keys, or the engine.
#[derive(Debug, thiserror::Error)]
pub enum OpenIndexError {
    /// A key is unknown or invalid.
    #[error(transparent)]
    Config(#[from] squall::config::ConfigError),
    /// The engine could not be reached, or refused to create the index.
    #[error("{index}: {source}")]
    Engine {
        /// Which index (`content index`, `metrics index`).
        index: &'static str,
        /// What the engine said.
        #[source]
        source: EsError,
    },
}

impl OpenIndexError {
    /// Names `index` as the one an engine error was about.
    pub fn engine(index: &'static str) -> impl FnOnce(EsError) -> OpenIndexError {
        move |source| OpenIndexError::Engine { index, source }
    }
}

/// Whether `index` (or an alias of that name) exists.
pub async fn index_exists(client: &EsClient, index: &str) -> Result<bool, EsError> {
    match client
        .request(Method::Head, &format!("/{index}"), &[], None)
        .await
    {
        Ok(_) => Ok(true),
        Err(error) if error.status() == Some(404) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Creates an index with `body` (settings and mappings) unless it exists; one created meanwhile
/// by someone else counts as existing. Nothing here changes an existing index.
pub async fn ensure_index(
    client: &EsClient,
    name: &str,
    body: Value,
) -> Result<IndexState, EsError> {
    if index_exists(client, name).await? {
        return Ok(IndexState::Existing);
    }
    match client
        .request(
            Method::Put,
            &format!("/{name}"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await
    {
        Ok(_) => Ok(IndexState::Created),
        Err(EsError::Status { reason, .. }) if reason.contains("resource_already_exists") => {
            Ok(IndexState::Existing)
        }
        Err(error) => Err(error),
    }
}

/// The number of primary shards of an index.
pub async fn shard_count(client: &EsClient, index: &str) -> Result<u32, EsError> {
    let path = format!("/{index}/_settings");
    let answer = client.request(Method::Get, &path, &[], None).await?;
    answer
        .as_object()
        .and_then(|indices| indices.values().next())
        .and_then(|settings| settings["settings"]["index"]["number_of_shards"].as_str())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| EsError::Decode {
            path,
            message: format!(
                "no number_of_shards in {}",
                truncate(&answer.to_string(), 200)
            ),
        })
}

/// How often an index refreshes (its `refresh_interval`; 1 s when unset, the engines' default).
/// Refresh turned off (`-1`) is reported as `None`.
pub async fn refresh_interval(client: &EsClient, index: &str) -> Result<Option<Duration>, EsError> {
    let path = format!("/{index}/_settings");
    let answer = client
        .request(Method::Get, &path, &[("include_defaults", "true")], None)
        .await?;
    let settings = answer
        .as_object()
        .and_then(|i| i.values().next())
        .cloned()
        .unwrap_or_default();
    let value = settings["settings"]["index"]["refresh_interval"]
        .as_str()
        .or_else(|| settings["defaults"]["index"]["refresh_interval"].as_str())
        .unwrap_or("1s")
        .to_string();
    Ok(parse_time_value(&value))
}

/// Sets an index's `refresh_interval` (`5s`, or `-1` for none).
pub async fn set_refresh_interval(
    client: &EsClient,
    index: &str,
    interval: &str,
) -> Result<(), EsError> {
    client
        .request(
            Method::Put,
            &format!("/{index}/_settings"),
            &[],
            Some(RequestBody::Json(
                json!({ "index": { "refresh_interval": interval } }),
            )),
        )
        .await
        .map(|_| ())
}

/// Refreshes indices (`a` or `a,b`): what was written shows in searches.
pub async fn refresh(client: &EsClient, indices: &str) -> Result<(), EsError> {
    client
        .request(Method::Post, &format!("/{indices}/_refresh"), &[], None)
        .await
        .map(|_| ())
}

/// Parses an engine time value (`500ms`, `5s`, `1m`); `-1` means off.
pub fn parse_time_value(value: &str) -> Option<Duration> {
    let value = value.trim();
    let split = value
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ms" => number / 1000.0,
        "s" | "" => number,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        "d" => number * 86400.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_values() {
        assert_eq!(parse_time_value("5s"), Some(Duration::from_secs(5)));
        assert_eq!(parse_time_value("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_time_value("1m"), Some(Duration::from_secs(60)));
        assert_eq!(parse_time_value("-1"), None);
    }
}
