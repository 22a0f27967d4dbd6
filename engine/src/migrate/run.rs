//! One migration run from start to end: check the options and the source, load the checkpoint,
//! prepare the target indices, copy, then refresh and verify, and report.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::admin::{
    SourceIndex, inspect_source, plan_targets, prepare_for_copy, restore_settings,
    restore_settings_quietly,
};
use super::checkpoint::Checkpoint;
use super::copy::{CopyRun, CopyState};
use super::reader::Access;
use super::verify::{Verification, count, status_counts, verify};
use super::writer::PageWriter;
use super::{
    MigrateError, MigrationOptions, MigrationProgress, MigrationReport, MigrationStage, ResumedFrom,
};
use crate::client::EsClient;
use crate::client::indices::refresh;
use crate::status_index::schema::KeyField;

/// Migrates `options.source` into `options.urls` and `options.queues`; see the module documentation.
pub async fn migrate(
    client: &EsClient,
    options: &MigrationOptions,
) -> Result<MigrationReport, MigrateError> {
    migrate_with_progress(client, options, |_| {}).await
}

/// [`migrate`], calling `progress` after every page written and before the checks.
pub async fn migrate_with_progress(
    client: &EsClient,
    options: &MigrationOptions,
    mut progress: impl FnMut(&MigrationProgress),
) -> Result<MigrationReport, MigrateError> {
    options.validate()?;
    let started = Instant::now();
    client.engine().await?;
    let documents_total = count_source(client, options).await?;
    let source = inspect_source(client, &options.source).await?;
    let checkpoint = load_checkpoint(options, &source)?;
    let targets = plan_targets(client, options).await?;
    // The settings to put back are those recorded before any run changed them.
    let settings = match &checkpoint {
        Some(checkpoint) => checkpoint.settings.clone(),
        None => targets.settings,
    };
    let run = CopyRun {
        options,
        started,
        documents_total,
        source_uuid: source.uuid.clone(),
        settings,
    };
    let mut copy = CopyState::resuming(checkpoint.as_ref(), source.shards);
    let created = if options.dry_run {
        targets.missing
    } else {
        // Saved before the targets change, so that a crash from here on still knows them.
        run.checkpoint(&copy).save(&options.checkpoint)?;
        match prepare_for_copy(client, options).await {
            Ok(created) => created,
            Err(error) => return Err(restored(client, &run, error).await),
        }
    };
    let writer = Arc::new(PageWriter::new(client.clone(), options.clone()));
    let copied = match Access::open(
        client,
        &options.source,
        &options.keep_alive,
        options.point_in_time,
    )
    .await
    {
        Ok(access) => {
            let copied = run
                .copy_all(client, &access, writer.clone(), &mut copy, &mut progress)
                .await;
            access.close(client).await;
            copied
        }
        Err(error) => Err(error),
    };
    let completed = match copied {
        Ok(completed) => completed,
        Err(error) => return Err(restored(client, &run, error).await),
    };
    let verification = if completed {
        progress(&run.progress(MigrationStage::Verifying, &copy));
        finish(client, &run, &writer).await?
    } else {
        if !options.dry_run {
            restore_settings(client, &run.settings).await?;
        }
        Verification::default()
    };
    let resumed_from = checkpoint.as_ref().map(resumed_from);
    let mut report = report(&run, &copy, &writer, completed, resumed_from, verification);
    report.indices_created = created;
    Ok(report)
}

/// `error`, once the targets' settings are put back (as far as possible) after a failed run.
async fn restored(client: &EsClient, run: &CopyRun<'_>, error: MigrateError) -> MigrateError {
    if !run.options.dry_run {
        restore_settings_quietly(client, &run.settings).await;
    }
    error
}

/// The documents of the source; a missing source is named.
async fn count_source(client: &EsClient, options: &MigrationOptions) -> Result<u64, MigrateError> {
    let documents_total = match count(client, &options.source, json!({ "match_all": {} })).await {
        Err(MigrateError::Engine(error)) if error.status() == Some(404) => {
            return Err(MigrateError::SourceMissing {
                index: options.source.clone(),
                address: client.addresses(),
            });
        }
        other => other?,
    };
    Ok(documents_total)
}

/// The checkpoint of an earlier run of this very migration (none in a dry run); one of another
/// migration (or of another index of the same name) is an error.
fn load_checkpoint(
    options: &MigrationOptions,
    source: &SourceIndex,
) -> Result<Option<Checkpoint>, MigrateError> {
    if options.dry_run {
        return Ok(None);
    }
    let checkpoint = Checkpoint::load(&options.checkpoint)?;
    if let Some(checkpoint) = &checkpoint
        && let Some(difference) = checkpoint.mismatch(
            &options.source,
            &source.uuid,
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
        slices: checkpoint.slices.clone(),
        checkpoint_written: checkpoint.updated.clone(),
    }
}

/// After a complete copy: the targets' settings back, the checkpoint removed, both indices
/// refreshed, and the checks (in a dry run, only the source's counts).
async fn finish(
    client: &EsClient,
    run: &CopyRun<'_>,
    writer: &PageWriter,
) -> Result<Verification, MigrateError> {
    let options = run.options;
    if options.dry_run {
        return Ok(Verification {
            status_counts_source: status_counts(client, &options.source).await?,
            distinct_keys: writer.distinct_keys(),
            ok: true,
            ..Verification::default()
        });
    }
    restore_settings(client, &run.settings).await?;
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
    writer: &PageWriter,
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
        documents: copy.documents_done(),
        documents_this_run: copy.documents_this_run,
        keys_added: copy.stats.keys_added,
        documents_without_key: copy.stats.without_key,
        documents_without_next_fetch_date: copy.stats.without_next_fetch,
        unreadable_dates: copy.stats.unreadable_dates,
        distinct_keys_seen: writer.distinct_keys(),
        queues_written: copy.queues_written,
        queues_created: copy.stats.queues_created,
        batches: copy.batches,
        seconds,
        docs_per_second: if seconds > 0.0 {
            copy.documents_this_run as f64 / seconds
        } else {
            0.0
        },
        resumed_from,
        indices_created: Vec::new(),
        verification,
    }
}
