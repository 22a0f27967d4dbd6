//! The copy loop: page after page from the reader to the writer (the next page is read while the
//! current one is written), with a checkpoint and a progress report after each.

use std::time::Instant;

use chrono::Utc;

use super::checkpoint::{Checkpoint, Position};
use super::reader::Reader;
use super::writer::PageWriter;
use super::{MigrateError, MigrationOptions, Progress, Stage};
use crate::status_index::schema::format_date;

/// How far the copy is, over all runs and in this one.
#[derive(Debug, Clone, Default)]
pub(crate) struct CopyState {
    /// Where reading starts (from the checkpoint, or the beginning).
    pub start: Position,
    pub documents_done: u64,
    pub documents_this_run: u64,
    pub batches: u64,
    pub batches_this_run: u64,
    pub queues_written: u64,
}

impl CopyState {
    /// The state a run starts from: where `checkpoint` left off, or the beginning.
    pub fn resuming(checkpoint: Option<&Checkpoint>) -> Self {
        match checkpoint {
            Some(c) => CopyState {
                start: c.position.clone(),
                documents_done: c.documents_done,
                batches: c.batches,
                queues_written: c.queues_written,
                ..CopyState::default()
            },
            None => CopyState::default(),
        }
    }
}

/// What the copy loop needs to know of its run.
pub(crate) struct CopyRun<'a> {
    pub options: &'a MigrationOptions,
    pub started: Instant,
    pub documents_total: u64,
    pub restore_urls_refresh: bool,
}

impl CopyRun<'_> {
    /// The progress report of `copy` at `stage`.
    pub fn progress(&self, stage: Stage, copy: &CopyState) -> Progress {
        Progress {
            stage,
            documents_done: copy.documents_done,
            documents_total: self.documents_total,
            documents_this_run: copy.documents_this_run,
            batches: copy.batches_this_run,
            elapsed: self.started.elapsed(),
        }
    }

    /// Copies page after page and writes the checkpoint after each; returns whether everything
    /// was copied (false when stopped by `stop_after_batches`).
    pub async fn copy_all(
        &self,
        reader: &mut Reader<'_>,
        writer: &mut PageWriter<'_>,
        copy: &mut CopyState,
        progress: &mut impl FnMut(&Progress),
    ) -> Result<bool, MigrateError> {
        let mut current = reader.next_page().await?;
        while let Some(page) = current {
            let (written, next) = tokio::join!(writer.write(&page.hits), reader.next_page());
            copy.queues_written += written?;
            copy.documents_done = page.read;
            copy.documents_this_run += page.hits.len() as u64;
            copy.batches += 1;
            copy.batches_this_run += 1;
            if !self.options.dry_run {
                self.checkpoint(copy, page.position)
                    .save(&self.options.checkpoint)?;
            }
            progress(&self.progress(Stage::Copying, copy));
            if self
                .options
                .stop_after_batches
                .is_some_and(|stop| copy.batches_this_run >= stop as u64)
            {
                return Ok(false);
            }
            current = next?;
        }
        Ok(true)
    }

    /// The checkpoint once `copy` is written up to `position`.
    fn checkpoint(&self, copy: &CopyState, position: Position) -> Checkpoint {
        let options = self.options;
        Checkpoint {
            version: Checkpoint::VERSION,
            source: options.source.clone(),
            urls: options.urls.clone(),
            queues: options.queues.clone(),
            bucket_field: options.bucket_field.clone(),
            partition_mode: options.partition_mode.as_str().to_string(),
            position,
            documents_done: copy.documents_done,
            queues_written: copy.queues_written,
            batches: copy.batches,
            restore_urls_refresh: self.restore_urls_refresh,
            updated: format_date(Utc::now()),
        }
    }
}
