//! The tasks of the copy: one reader per slice (at most `max_slices` reading at once) feeding a
//! bounded channel of pages, and `bulk_concurrency` writers taking pages from it. They report to
//! the copy loop ([`super::copy`]) by events; it alone keeps the checkpoint.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{Mutex, Semaphore, mpsc};

use super::MigrateError;
use super::reader::{Hit, SliceReader};
use super::writer::{PageWriter, Written};

/// A page on its way from a slice reader to a writer.
#[derive(Debug)]
pub(crate) struct Page {
    pub slice: u32,
    /// Its place in the slice's pages of this run (0, 1, ...).
    pub number: u64,
    pub hits: Vec<Hit>,
    pub last_seq_no: i64,
}

/// What the tasks tell the copy loop.
#[derive(Debug)]
pub(crate) enum Event {
    /// A page is written.
    Written {
        slice: u32,
        number: u64,
        last_seq_no: i64,
        documents: u64,
        written: Written,
    },
    /// A slice's reader stopped after `pages` pages: at the end of the slice (`finished`), or
    /// because the run's page budget was spent.
    ReaderStopped {
        slice: u32,
        pages: u64,
        finished: bool,
    },
    /// A task failed; the run stops.
    Failed(MigrateError),
}

/// How many pages this run may still read (`stop_after_batches`); unlimited when `None`.
#[derive(Debug)]
pub(crate) struct Budget(Option<AtomicU64>);

impl Budget {
    /// A budget of `pages` pages, or none.
    pub fn new(pages: Option<usize>) -> Self {
        Budget(pages.map(|pages| AtomicU64::new(pages as u64)))
    }

    /// Takes one page; false when none is left.
    fn take(&self) -> bool {
        match &self.0 {
            None => true,
            Some(left) => left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok(),
        }
    }

    /// Gives back a page taken but not read (the slice had ended).
    fn give_back(&self) {
        if let Some(left) = &self.0 {
            left.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Reads a slice into `pages`, once a slot among the slices reading at once is free.
pub(crate) async fn read_slice(
    mut reader: SliceReader,
    slice: u32,
    slots: Arc<Semaphore>,
    budget: Arc<Budget>,
    pages: mpsc::Sender<Page>,
    events: mpsc::UnboundedSender<Event>,
) {
    let Ok(_slot) = slots.acquire_owned().await else {
        return;
    };
    let mut number = 0;
    let finished = loop {
        if !budget.take() {
            break false;
        }
        match reader.next_page().await {
            Ok(Some(page)) => {
                let page = Page {
                    slice,
                    number,
                    hits: page.hits,
                    last_seq_no: page.last_seq_no,
                };
                number += 1;
                if pages.send(page).await.is_err() {
                    reader.close().await;
                    return;
                }
            }
            Ok(None) => {
                budget.give_back();
                break true;
            }
            Err(error) => {
                reader.close().await;
                let _ = events.send(Event::Failed(error));
                return;
            }
        }
    };
    reader.close().await;
    let _ = events.send(Event::ReaderStopped {
        slice,
        pages: number,
        finished,
    });
}

/// Writes pages taken from `pages` until it is closed and empty.
pub(crate) async fn write_pages(
    writer: Arc<PageWriter>,
    pages: Arc<Mutex<mpsc::Receiver<Page>>>,
    events: mpsc::UnboundedSender<Event>,
) {
    loop {
        let page = pages.lock().await.recv().await;
        let Some(page) = page else {
            return;
        };
        let event = match writer.write(&page.hits).await {
            Ok(written) => Event::Written {
                slice: page.slice,
                number: page.number,
                last_seq_no: page.last_seq_no,
                documents: page.hits.len() as u64,
                written,
            },
            Err(error) => Event::Failed(error),
        };
        let failed = matches!(event, Event::Failed(_));
        if events.send(event).is_err() || failed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_is_spent_and_given_back() {
        let budget = Budget::new(Some(2));
        assert!(budget.take() && budget.take());
        assert!(!budget.take());
        budget.give_back();
        assert!(budget.take());
        let unlimited = Budget::new(None);
        assert!((0..1000).all(|_| unlimited.take()));
    }
}
