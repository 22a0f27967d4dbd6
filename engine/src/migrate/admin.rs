//! The indices of a migration: the source's identity and shards, and the targets: created when
//! missing, their refresh turned off and replicas dropped during the copy, and their settings put
//! back afterwards (those they had, or those they should have when the migration created them).

use serde_json::{Value, json};
use tracing::warn;

use crate::client::indices::{IndexState, ensure_index, index_exists};
use crate::client::{EsClient, Method, RequestBody, truncate};
use crate::queue::schema::queues_index_body;
use crate::status_index::schema::urls_index_body;

use super::checkpoint::SavedSettings;
use super::{MigrateError, MigrationOptions};

/// The refresh interval the urls index gets after the copy, when the migration created it.
pub const URLS_REFRESH_INTERVAL: &str = "5s";

/// The refresh interval the queues index gets after the copy, when the migration created it.
pub const QUEUES_REFRESH_INTERVAL: &str = "1s";

/// The source index: what identifies it, and how it is sliced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceIndex {
    /// Its UUID.
    pub uuid: String,
    /// Its primary shards (= slices).
    pub shards: u32,
}

/// The source's UUID and shards; a name that stands for several indices (an alias) is refused.
pub(crate) async fn inspect_source(
    client: &EsClient,
    source: &str,
) -> Result<SourceIndex, MigrateError> {
    let path = format!("/{source}/_settings");
    let answer = client.request(Method::Get, &path, &[], None).await?;
    let indices = answer.as_object().cloned().unwrap_or_default();
    if indices.len() != 1 {
        return Err(MigrateError::Options(format!(
            "the source {source} stands for {} indices; migrate them one at a time",
            indices.len()
        )));
    }
    let settings = indices
        .values()
        .next()
        .map(|index| index["settings"]["index"].clone())
        .unwrap_or_default();
    let uuid = settings["uuid"].as_str().map(str::to_string);
    let shards = settings["number_of_shards"]
        .as_str()
        .and_then(|n| n.parse::<u32>().ok());
    match (uuid, shards) {
        (Some(uuid), Some(shards)) if shards > 0 => Ok(SourceIndex { uuid, shards }),
        _ => Err(MigrateError::Unexpected(format!(
            "no uuid or number_of_shards in {}",
            truncate(&answer.to_string(), 300)
        ))),
    }
}

/// The target indices of a run: those missing (to create; in a dry run, that would be created),
/// and the settings each is to have after the copy.
#[derive(Debug, Default)]
pub(crate) struct Targets {
    pub missing: Vec<String>,
    pub settings: Vec<SavedSettings>,
}

/// Reads the targets' settings (for a missing index, those it should have), changing nothing.
pub(crate) async fn plan_targets(
    client: &EsClient,
    options: &MigrationOptions,
) -> Result<Targets, MigrateError> {
    let mut targets = Targets::default();
    let planned = [
        (&options.urls, URLS_REFRESH_INTERVAL),
        (&options.queues, QUEUES_REFRESH_INTERVAL),
    ];
    for (index, refresh) in planned {
        if index_exists(client, index).await? {
            targets
                .settings
                .push(current_settings(client, index).await?);
        } else {
            targets.missing.push(index.clone());
            targets.settings.push(SavedSettings {
                index: index.clone(),
                refresh_interval: Some(refresh.to_string()),
                replicas: Some(options.replicas.to_string()),
            });
        }
    }
    Ok(targets)
}

/// An index's refresh interval and replicas, as set on it.
async fn current_settings(client: &EsClient, index: &str) -> Result<SavedSettings, MigrateError> {
    let path = format!("/{index}/_settings");
    let answer = client.request(Method::Get, &path, &[], None).await?;
    let settings = answer
        .as_object()
        .and_then(|indices| indices.values().next())
        .map(|index| index["settings"]["index"].clone())
        .unwrap_or_default();
    let text = |value: &Value| match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    Ok(SavedSettings {
        index: index.to_string(),
        refresh_interval: text(&settings["refresh_interval"]),
        replicas: text(&settings["number_of_replicas"]),
    })
}

/// Prepares the targets for the copy: the missing ones created with refresh off and no replicas,
/// the others switched to that; returns the indices created.
pub(crate) async fn prepare_for_copy(
    client: &EsClient,
    options: &MigrationOptions,
) -> Result<Vec<String>, MigrateError> {
    let mut created = Vec::new();
    let bodies = [
        (&options.urls, urls_index_body(options.urls_shards, 0, "-1")),
        (
            &options.queues,
            queues_index_body(options.queues_shards, 0, "-1"),
        ),
    ];
    for (index, body) in bodies {
        match ensure_index(client, index, body).await? {
            IndexState::Created => created.push(index.clone()),
            IndexState::Existing => {
                let copy =
                    json!({ "index": { "refresh_interval": "-1", "number_of_replicas": 0 } });
                put_settings(client, index, copy).await?;
            }
        }
    }
    Ok(created)
}

/// Puts the targets' settings back as saved.
pub(crate) async fn restore_settings(
    client: &EsClient,
    saved: &[SavedSettings],
) -> Result<(), MigrateError> {
    for settings in saved {
        let body = json!({ "index": {
            "refresh_interval": settings.refresh_interval,
            "number_of_replicas": settings.replicas,
        } });
        put_settings(client, &settings.index, body).await?;
    }
    Ok(())
}

/// [`restore_settings`] after a failed or stopped run: a failure is only logged (the run's own
/// outcome is what matters; a resumed run puts them back at its end).
pub(crate) async fn restore_settings_quietly(client: &EsClient, saved: &[SavedSettings]) {
    if let Err(error) = restore_settings(client, saved).await {
        warn!(%error, "the target indices' settings could not be put back; the next run will");
    }
}

async fn put_settings(client: &EsClient, index: &str, body: Value) -> Result<(), MigrateError> {
    client
        .request(
            Method::Put,
            &format!("/{index}/_settings"),
            &[],
            Some(RequestBody::Json(body)),
        )
        .await?;
    Ok(())
}
