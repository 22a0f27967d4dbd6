//! Writing one page of the source: every document into urls (as read, with its key added when it
//! had none), in bulks of at most `bulk_bytes`, and one queue update per key whose `nextDue` this run
//! has not yet lowered that far. Several pages are written at once; the writer is shared.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::bulk::{RawBulk, send};
use super::document::{NextFetch, prepare_document, quick_look};
use super::reader::Hit;
use super::{MigrateError, MigrationOptions};
use crate::client::EsClient;
use crate::queue::edit_apply::{EditOutcome, apply_edits};
use crate::queue::edit_rules::KeyedEdit;
use crate::queue::schema::{ensure_queue, lower_next_due};
use crate::status_index::schema::KeyField;

/// What this run saw in the documents it copied.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Stats {
    pub keys_added: u64,
    pub without_key: u64,
    pub without_next_fetch: u64,
    pub unreadable_dates: u64,
    pub queues_created: u64,
}

impl Stats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Stats) {
        self.keys_added += other.keys_added;
        self.without_key += other.without_key;
        self.without_next_fetch += other.without_next_fetch;
        self.unreadable_dates += other.unreadable_dates;
        self.queues_created += other.queues_created;
    }
}

/// What writing a page did.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// Queue updates sent (in a dry run: that would be sent).
    pub queue_updates: u64,
    /// What the page's documents held.
    pub stats: Stats,
}

/// Writes pages into urls and queues, remembering the queue updates sent.
pub(crate) struct PageWriter {
    client: EsClient,
    options: MigrationOptions,
    key_field: KeyField,
    /// Per key, the earliest `nextDue` this run sent (`None`: the queue was only created).
    sent: Mutex<HashMap<String, Option<DateTime<Utc>>>>,
}

/// A page ready to send: the urls bulks, and the earliest due date of each key in it.
struct Prepared {
    bulks: Vec<RawBulk>,
    earliest: HashMap<String, Option<DateTime<Utc>>>,
    stats: Stats,
}

impl PageWriter {
    /// A writer for `options`' urls and queues indices.
    pub fn new(client: EsClient, options: MigrationOptions) -> Self {
        PageWriter {
            key_field: KeyField::parse(&options.bucket_field),
            client,
            options,
            sent: Mutex::new(HashMap::new()),
        }
    }

    /// Distinct keys this run has seen.
    pub fn distinct_keys(&self) -> u64 {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len() as u64
    }

    /// Writes one page: one queue update per key that needs one, then the documents into urls.
    /// A page counts as written only once both are acknowledged; a key's update skipped here was
    /// sent with an earlier page of this run, which is re-read after a crash unless written too.
    pub async fn write(&self, hits: &[Hit]) -> Result<Written, MigrateError> {
        let prepared = self.prepare(hits)?;
        let queues = self.queue_updates(prepared.earliest);
        let mut written = Written {
            queue_updates: queues.len() as u64,
            stats: prepared.stats,
        };
        if self.options.dry_run {
            return Ok(written);
        }
        // Queues first: a queue that is due too early costs a query; one that is missing starves URLs.
        if !queues.is_empty() {
            written.stats.queues_created += self.edit_queues(&queues).await?;
        }
        for raw in prepared.bulks {
            send(&self.client, &self.options.urls, raw).await?;
        }
        Ok(written)
    }

    /// Applies the queue edits of a page; how many queues they created.
    async fn edit_queues(&self, edits: &[KeyedEdit]) -> Result<u64, MigrateError> {
        let outcomes = apply_edits(&self.client, &self.options.queues, edits).await?;
        let created = outcomes
            .iter()
            .filter(|o| **o == EditOutcome::Created)
            .count() as u64;
        let failures: Vec<&str> = outcomes
            .iter()
            .filter_map(|o| match o {
                EditOutcome::Failed { message, .. } => Some(message.as_str()),
                _ => None,
            })
            .collect();
        match failures.first() {
            None => Ok(created),
            Some(first) => Err(MigrateError::Bulk {
                index: self.options.queues.clone(),
                failed: failures.len(),
                total: edits.len(),
                first: first.to_string(),
            }),
        }
    }

    /// The urls bulks of a page, and the earliest due date of each key in it.
    fn prepare(&self, hits: &[Hit]) -> Result<Prepared, MigrateError> {
        let mut prepared = Prepared {
            bulks: vec![RawBulk::default()],
            earliest: HashMap::new(),
            stats: Stats::default(),
        };
        for hit in hits {
            let source = hit.source.get();
            let (key, next_fetch) = match quick_look(source, &self.key_field) {
                Some((key, next_fetch)) => {
                    self.push(&mut prepared.bulks, &hit.id, source);
                    (Some(key), next_fetch)
                }
                None => {
                    let document: Value = serde_json::from_str(source).map_err(|e| {
                        MigrateError::Unexpected(format!("document {} is not JSON: {e}", hit.id))
                    })?;
                    let ready =
                        prepare_document(&document, &self.key_field, self.options.partition_mode);
                    if ready.key_added {
                        prepared.stats.keys_added += 1;
                    }
                    self.push(&mut prepared.bulks, &hit.id, &ready.document.to_string());
                    (ready.key, ready.next_fetch)
                }
            };
            match next_fetch {
                NextFetch::Never => prepared.stats.without_next_fetch += 1,
                NextFetch::Unreadable => prepared.stats.unreadable_dates += 1,
                NextFetch::At(_) => {}
            }
            match key {
                Some(key) => {
                    let due = next_fetch.due();
                    let entry = prepared.earliest.entry(key).or_insert(due);
                    *entry = earlier_of(*entry, due);
                }
                None => prepared.stats.without_key += 1,
            }
        }
        prepared.bulks.retain(|raw| !raw.is_empty());
        Ok(prepared)
    }

    /// Adds a document to the last bulk, or to a new one when the last is full.
    fn push(&self, bulks: &mut Vec<RawBulk>, id: &str, source: &str) {
        let full = bulks.last().is_none_or(|last| {
            !last.is_empty()
                && last.bytes() + source.len() + id.len() + 32 > self.options.bulk_bytes
        });
        if full {
            bulks.push(RawBulk::default());
        }
        if let Some(last) = bulks.last_mut() {
            last.push_index(id, source);
        }
    }

    /// The queue updates a page needs: for each key (in key order), none when this run already
    /// sent an earlier or equal date, else a lowering of `nextDue` (or a creation, for a key with
    /// no due URL).
    fn queue_updates(&self, earliest: HashMap<String, Option<DateTime<Utc>>>) -> Vec<KeyedEdit> {
        let now = Utc::now();
        let mut keys: Vec<(String, Option<DateTime<Utc>>)> = earliest.into_iter().collect();
        keys.sort();
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        let mut updates = Vec::new();
        for (key, due) in keys {
            let known = sent.get(&key).copied();
            let needed = match known {
                None => true,
                Some(known) => due.is_some() && earlier_of(known, due) != known,
            };
            if !needed {
                continue;
            }
            updates.push(match due {
                Some(due) => lower_next_due(&key, due, now),
                None => ensure_queue(&key, now),
            });
            sent.insert(key, known.map_or(due, |known| earlier_of(known, due)));
        }
        updates
    }
}

/// The earlier of two due dates, where `None` means never.
fn earlier_of(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (Some(a), None) => Some(a),
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_is_later_than_any_date() {
        let date = Some(DateTime::<Utc>::UNIX_EPOCH);
        assert_eq!(earlier_of(None, date), date);
        assert_eq!(earlier_of(date, None), date);
        assert_eq!(earlier_of(None, None), None);
    }
}
