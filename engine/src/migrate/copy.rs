//! The copy loop: it starts the slice readers and the writers ([`super::pipeline`]), and from their
//! events keeps, per slice, the position up to which every page is written (pages of a slice may be
//! written out of order), saving the checkpoint whenever one moves and reporting progress.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;
use tokio::sync::{Mutex, Semaphore, mpsc};
use tokio::task::JoinSet;

use super::checkpoint::{Checkpoint, SavedSettings, SlicePosition};
use super::pipeline::{Budget, Event, read_slice, write_pages};
use super::reader::{Access, SliceReader};
use super::writer::{PageWriter, Stats};
use super::{MigrateError, MigrationOptions, MigrationProgress, MigrationStage};
use crate::client::EsClient;
use crate::status_index::schema::format_date;

/// How far the copy is, over all runs and in this one.
#[derive(Debug, Clone, Default)]
pub(crate) struct CopyState {
    /// Where each slice stands (one per shard of the source, in order).
    pub slices: Vec<SlicePosition>,
    pub documents_this_run: u64,
    pub batches: u64,
    pub batches_this_run: u64,
    pub queues_written: u64,
    /// What the documents of this run held.
    pub stats: Stats,
}

impl CopyState {
    /// The state a run over `slices` slices starts from: where `checkpoint` left off, or the
    /// beginning.
    pub fn resuming(checkpoint: Option<&Checkpoint>, slices: u32) -> Self {
        let mut state = CopyState {
            slices: (0..slices)
                .map(|slice| SlicePosition {
                    slice,
                    ..SlicePosition::default()
                })
                .collect(),
            ..CopyState::default()
        };
        if let Some(checkpoint) = checkpoint {
            for position in &checkpoint.slices {
                if let Some(slot) = state.slices.get_mut(position.slice as usize) {
                    *slot = position.clone();
                }
            }
            state.batches = checkpoint.batches;
            state.queues_written = checkpoint.queues_written;
        }
        state
    }

    /// Documents written, over all runs: every slice up to its position.
    pub fn documents_done(&self) -> u64 {
        self.slices.iter().map(|slice| slice.documents).sum()
    }
}

/// Per slice, the pages written out of order, until those before them are written too.
#[derive(Debug, Default)]
struct SliceTrack {
    /// The next page (of this run) the position waits for.
    next: u64,
    /// Pages written beyond it: their last `_seq_no` and documents.
    pending: BTreeMap<u64, (i64, u64)>,
    /// The reader stopped after this many pages, at the end of the slice or not.
    stopped: Option<(u64, bool)>,
}

impl SliceTrack {
    /// Records page `number` as written; returns whether `position` moved.
    fn written(&mut self, number: u64, page: (i64, u64), position: &mut SlicePosition) -> bool {
        self.pending.insert(number, page);
        let mut moved = false;
        while let Some((last_seq_no, documents)) = self.pending.remove(&self.next) {
            position.after = Some(last_seq_no);
            position.documents += documents;
            self.next += 1;
            moved = true;
        }
        self.finish(position) || moved
    }

    /// Records the end of the slice's reader; returns whether `position` moved.
    fn stopped(&mut self, pages: u64, finished: bool, position: &mut SlicePosition) -> bool {
        self.stopped = Some((pages, finished));
        self.finish(position)
    }

    /// Marks the slice done once its reader reached its end and every page is written.
    fn finish(&mut self, position: &mut SlicePosition) -> bool {
        let ended = self.stopped == Some((self.next, true));
        if ended && !position.done {
            position.done = true;
            return true;
        }
        false
    }
}

/// What the copy loop needs to know of its run.
pub(crate) struct CopyRun<'a> {
    pub options: &'a MigrationOptions,
    pub started: Instant,
    pub documents_total: u64,
    pub source_uuid: String,
    /// The target indices' settings to put back at the end.
    pub settings: Vec<SavedSettings>,
}

/// The tasks of a copy and their channels.
struct Tasks {
    set: JoinSet<()>,
    events: mpsc::UnboundedReceiver<Event>,
    readers: usize,
}

impl CopyRun<'_> {
    /// The progress report of `copy` at `stage`.
    pub fn progress(&self, stage: MigrationStage, copy: &CopyState) -> MigrationProgress {
        MigrationProgress {
            stage,
            documents_done: copy.documents_done(),
            documents_total: self.documents_total,
            documents_this_run: copy.documents_this_run,
            batches: copy.batches_this_run,
            elapsed: self.started.elapsed(),
        }
    }

    /// Copies every slice not done yet, saving the checkpoint whenever a slice's position moves;
    /// returns whether everything was copied (false when stopped by `stop_after_batches`: then
    /// every page read is written, and the checkpoint says so).
    pub async fn copy_all(
        &self,
        client: &EsClient,
        access: &Access,
        writer: Arc<PageWriter>,
        copy: &mut CopyState,
        progress: &mut impl FnMut(&MigrationProgress),
    ) -> Result<bool, MigrateError> {
        let mut tasks = self.start(client, access, writer, copy);
        let mut tracks: Vec<SliceTrack> =
            copy.slices.iter().map(|_| SliceTrack::default()).collect();
        let (mut pages_read, mut pages_written, mut finished) = (0, 0, true);
        while tasks.readers > 0 || pages_written < pages_read {
            let event = tokio::select! {
                event = tasks.events.recv() => event,
                Some(joined) = tasks.set.join_next() => match joined {
                    Err(error) if error.is_panic() => {
                        return Err(MigrateError::Unexpected(format!("a copy task failed: {error}")));
                    }
                    _ => continue,
                },
            };
            let Some(event) = event else {
                return Err(MigrateError::Unexpected(
                    "the copy tasks stopped before the end".to_string(),
                ));
            };
            let moved = match event {
                Event::Failed(error) => return Err(error),
                Event::ReaderStopped {
                    slice,
                    pages,
                    finished: at_end,
                } => {
                    tasks.readers -= 1;
                    pages_read += pages;
                    finished &= at_end;
                    let (track, position) = slot(&mut tracks, copy, slice)?;
                    track.stopped(pages, at_end, position)
                }
                Event::Written {
                    slice,
                    number,
                    last_seq_no,
                    documents,
                    written,
                } => {
                    pages_written += 1;
                    copy.documents_this_run += documents;
                    copy.batches += 1;
                    copy.batches_this_run += 1;
                    copy.queues_written += written.queue_updates;
                    copy.stats.add(&written.stats);
                    let (track, position) = slot(&mut tracks, copy, slice)?;
                    let moved = track.written(number, (last_seq_no, documents), position);
                    progress(&self.progress(MigrationStage::Copying, copy));
                    moved
                }
            };
            if moved && !self.options.dry_run {
                self.checkpoint(copy).save(&self.options.checkpoint)?;
            }
        }
        Ok(finished)
    }

    /// Starts a reader per slice not done yet, and the writers.
    fn start(
        &self,
        client: &EsClient,
        access: &Access,
        writer: Arc<PageWriter>,
        copy: &CopyState,
    ) -> Tasks {
        let options = self.options;
        let (pages, queue) = mpsc::channel(options.bulk_concurrency * 2);
        let queue = Arc::new(Mutex::new(queue));
        let (events, received) = mpsc::unbounded_channel();
        let slots = Arc::new(Semaphore::new(options.max_slices));
        let budget = Arc::new(Budget::new(options.stop_after_batches));
        let mut set = JoinSet::new();
        let slices = copy.slices.len() as u32;
        let mut readers = 0;
        for position in copy.slices.iter().filter(|position| !position.done) {
            let reader = SliceReader::new(
                client.clone(),
                access,
                &options.source,
                position.slice,
                slices,
                options.batch_size,
                &options.keep_alive,
                position.after,
            );
            set.spawn(read_slice(
                reader,
                position.slice,
                slots.clone(),
                budget.clone(),
                pages.clone(),
                events.clone(),
            ));
            readers += 1;
        }
        for _ in 0..options.bulk_concurrency {
            set.spawn(write_pages(writer.clone(), queue.clone(), events.clone()));
        }
        Tasks {
            set,
            events: received,
            readers,
        }
    }

    /// The checkpoint of `copy`.
    pub fn checkpoint(&self, copy: &CopyState) -> Checkpoint {
        let options = self.options;
        Checkpoint {
            version: Checkpoint::VERSION,
            source: options.source.clone(),
            source_uuid: self.source_uuid.clone(),
            urls: options.urls.clone(),
            queues: options.queues.clone(),
            bucket_field: options.bucket_field.clone(),
            partition_mode: options.partition_mode.as_str().to_string(),
            slices: copy.slices.clone(),
            documents_done: copy.documents_done(),
            queues_written: copy.queues_written,
            batches: copy.batches,
            settings: self.settings.clone(),
            updated: format_date(Utc::now()),
        }
    }
}

/// The track and position of `slice`; a slice the run does not have is an error.
fn slot<'a>(
    tracks: &'a mut [SliceTrack],
    copy: &'a mut CopyState,
    slice: u32,
) -> Result<(&'a mut SliceTrack, &'a mut SlicePosition), MigrateError> {
    match (
        tracks.get_mut(slice as usize),
        copy.slices.get_mut(slice as usize),
    ) {
        (Some(track), Some(position)) => Ok((track, position)),
        _ => Err(MigrateError::Unexpected(format!("no slice {slice}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_position_moves_only_over_pages_all_written() {
        let mut track = SliceTrack::default();
        let mut position = SlicePosition::default();
        assert!(!track.written(1, (20, 10), &mut position));
        assert_eq!((position.after, position.documents), (None, 0));
        assert!(track.written(0, (9, 10), &mut position));
        assert_eq!((position.after, position.documents), (Some(20), 20));
        assert!(!track.stopped(3, true, &mut position));
        assert!(!position.done);
        assert!(track.written(2, (25, 4), &mut position));
        assert!(position.done);
        assert_eq!((position.after, position.documents), (Some(25), 24));

        let mut stopped = SliceTrack::default();
        let mut position = SlicePosition::default();
        stopped.written(0, (5, 10), &mut position);
        assert!(!stopped.stopped(1, false, &mut position));
        assert!(
            !position.done,
            "a reader out of budget has not finished its slice"
        );
    }
}
