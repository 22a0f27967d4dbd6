//! One migration run from start to end: check the options and the source, load the checkpoint,
//! prepare the target indices, copy, then refresh and verify, and report.

use std::time::Instant;

use serde_json::json;

use super::admin::{Targets, URLS_REFRESH_INTERVAL, prepare_targets};
use super::checkpoint::Checkpoint;
use super::copy::{CopyRun, CopyState};
use super::reader::Reader;
use super::verify::{Verification, count, status_counts, verify};
use super::writer::PageWriter;
use super::{MigrateError, MigrationOptions, MigrationReport, Progress, ResumedFrom, Stage};
use crate::client::EsClient;
use crate::client::indices::{refresh, set_refresh_interval};
use crate::status_index::schema::KeyField;

/// Migrates `options.source` into `options.urls` and `options.queues`; see the module documentation.
pub async fn migrate(
    client: &EsClient,
    options: &MigrationOptions,
) -> Result<MigrationReport, MigrateError> {
    migrate_with_progress(client, options, |_| {}).await
}

/// [`migrate`], calling `progress` after every batch and before the checks.
pub async fn migrate_with_progress(
    client: &EsClient,
    options: &MigrationOptions,
    mut progress: impl FnMut(&Progress),
) -> Result<MigrationReport, MigrateError> {
    options.validate()?;
    let started = Instant::now();
    client.engine().await?;
    let (documents_total, without_url) = count_source(client, options).await?;
    let checkpoint = load_checkpoint(options)?;
    let restore = checkpoint.as_ref().is_some_and(|c| c.restore_urls_refresh);
    let targets = prepare_targets(client, options, restore).await?;
    let run = CopyRun {
        options,
        started,
        documents_total,
        restore_urls_refresh: targets.restore_urls_refresh,
    };
    let mut copy = CopyState::resuming(checkpoint.as_ref());
    let mut reader = Reader::new(
        client,
        &options.source,
        options.batch_size,
        &options.keep_alive,
        copy.start.clone(),
        copy.documents_done,
        without_url,
    );
    let mut writer = PageWriter::new(client, options);
    let copied = run
        .copy_all(&mut reader, &mut writer, &mut copy, &mut progress)
        .await;
    reader.close().await;
    let completed = copied?;
    let verification = if completed {
        progress(&run.progress(Stage::Verifying, &copy));
        finish(client, &run, &writer).await?
    } else {
        Verification::default()
    };
    let resumed_from = checkpoint.as_ref().map(resumed_from);
    Ok(report(
        &run,
        &copy,
        &writer,
        targets,
        completed,
        resumed_from,
        verification,
    ))
}

/// The documents of the source, and those of them without a `url`; a missing source is named.
async fn count_source(
    client: &EsClient,
    options: &MigrationOptions,
) -> Result<(u64, u64), MigrateError> {
    let documents_total = match count(client, &options.source, json!({ "match_all": {} })).await {
        Err(MigrateError::Engine(error)) if error.status() == Some(404) => {
            return Err(MigrateError::SourceMissing {
                index: options.source.clone(),
                address: client.addresses(),
            });
        }
        other => other?,
    };
    let without_url = count(
        client,
        &options.source,
        json!({ "bool": { "must_not": { "exists": { "field": "url" } } } }),
    )
    .await?;
    Ok((documents_total, without_url))
}

/// The checkpoint of an earlier run of this very migration (none in a dry run); one of another
/// migration is an error.
fn load_checkpoint(options: &MigrationOptions) -> Result<Option<Checkpoint>, MigrateError> {
    if options.dry_run {
        return Ok(None);
    }
    let checkpoint = Checkpoint::load(&options.checkpoint)?;
    if let Some(checkpoint) = &checkpoint
        && let Some(difference) = checkpoint.mismatch(
            &options.source,
            &options.urls,
            &options.queues,
            &options.bucket_field,
            options.partition_mode.as_str(),
        )
    {
        return Err(MigrateError::CheckpointMismatch {
            path: options.checkpoint.display().to_string(),
            difference,
        });
    }
    Ok(checkpoint)
}

fn resumed_from(checkpoint: &Checkpoint) -> ResumedFrom {
    ResumedFrom {
        documents: checkpoint.documents_done,
        batches: checkpoint.batches,
        position: checkpoint.position.clone(),
        checkpoint_written: checkpoint.updated.clone(),
    }
}

/// After a complete copy: the urls index's refresh interval back, the checkpoint removed, both
/// indices refreshed, and the checks (in a dry run, only the source's counts).
async fn finish(
    client: &EsClient,
    run: &CopyRun<'_>,
    writer: &PageWriter<'_>,
) -> Result<Verification, MigrateError> {
    let options = run.options;
    if options.dry_run {
        return Ok(Verification {
            status_counts_source: status_counts(client, &options.source).await?,
            distinct_keys: writer.sent.len() as u64,
            ok: true,
            ..Verification::default()
        });
    }
    if run.restore_urls_refresh {
        set_refresh_interval(client, &options.urls, URLS_REFRESH_INTERVAL).await?;
    }
    Checkpoint::remove(&options.checkpoint)?;
    refresh(client, &options.urls).await?;
    refresh(client, &options.queues).await?;
    let key_field = KeyField::parse(&options.bucket_field);
    verify(
        client,
        &options.source,
        &options.urls,
        &options.queues,
        &key_field,
    )
    .await
}

/// The report of a run.
fn report(
    run: &CopyRun<'_>,
    copy: &CopyState,
    writer: &PageWriter<'_>,
    targets: Targets,
    completed: bool,
    resumed_from: Option<ResumedFrom>,
    verification: Verification,
) -> MigrationReport {
    let options = run.options;
    let seconds = run.started.elapsed().as_secs_f64();
    MigrationReport {
        source: options.source.clone(),
        urls: options.urls.clone(),
        queues: options.queues.clone(),
        dry_run: options.dry_run,
        completed,
        documents_total: run.documents_total,
        documents: copy.documents_done,
        documents_this_run: copy.documents_this_run,
        keys_added: writer.stats.keys_added,
        documents_without_key: writer.stats.without_key,
        documents_without_next_fetch_date: writer.stats.without_next_fetch,
        unreadable_dates: writer.stats.unreadable_dates,
        distinct_keys_seen: writer.sent.len() as u64,
        queues_written: copy.queues_written,
        queues_created: writer.stats.queues_created,
        batches: copy.batches,
        seconds,
        docs_per_second: if seconds > 0.0 {
            copy.documents_this_run as f64 / seconds
        } else {
            0.0
        },
        resumed_from,
        indices_created: targets.created,
        verification,
    }
}
