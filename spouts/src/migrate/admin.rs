//! The target indices of a migration: creating urls and queues when missing (urls with refresh off
//! during the copy), and their settings and refreshes at the end.

use crate::client::EsClient;
use crate::client::indices::{IndexState, ensure_index, index_exists};
use crate::queue::schema::queues_index_body;
use crate::status_index::schema::urls_index_body;

use super::{MigrateError, MigrationOptions};

/// The refresh interval the urls index gets back after the copy, when the migration created it.
pub const URLS_REFRESH_INTERVAL: &str = "5s";

/// The refresh interval of a queues index the migration creates.
pub const QUEUES_REFRESH_INTERVAL: &str = "1s";

/// The indices a run created (in a dry run: would create), and whether the urls index's refresh
/// interval is to be restored at the end (it was created by this run or an earlier one).
#[derive(Debug, Default)]
pub(crate) struct Targets {
    pub created: Vec<String>,
    pub restore_urls_refresh: bool,
}

/// Creates the urls and queues indices when missing (in a dry run, only tells which would be);
/// `restore_urls_refresh` is what the checkpoint says of earlier runs.
pub(crate) async fn prepare_targets(
    client: &EsClient,
    options: &MigrationOptions,
    restore_urls_refresh: bool,
) -> Result<Targets, MigrateError> {
    let mut targets = Targets {
        created: Vec::new(),
        restore_urls_refresh,
    };
    if options.dry_run {
        for index in [&options.urls, &options.queues] {
            if !index_exists(client, index).await? {
                targets.created.push(index.clone());
            }
        }
        return Ok(targets);
    }
    let urls_body = urls_index_body(options.urls_shards, options.replicas, "-1");
    if ensure_index(client, &options.urls, urls_body).await? == IndexState::Created {
        targets.created.push(options.urls.clone());
        targets.restore_urls_refresh = true;
    }
    let queues_body = queues_index_body(
        options.queues_shards,
        options.replicas,
        QUEUES_REFRESH_INTERVAL,
    );
    if ensure_index(client, &options.queues, queues_body).await? == IndexState::Created {
        targets.created.push(options.queues.clone());
    }
    Ok(targets)
}
