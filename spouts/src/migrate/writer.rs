//! Writing one page of the source: every document into urls (with its key added when it had none),
//! and one queue update per key whose `nextDue` this run has not yet lowered that far.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::bulk::bulk;
use super::document::{NextFetch, ensure_queue, prepare_document};
use super::reader::Hit;
use super::{MigrateError, MigrationOptions};
use crate::client::{BulkOperation, EsClient};
use crate::queue::schema::lower_next_due;
use crate::status_index::schema::KeyField;

/// What this run saw in the documents it copied.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub keys_added: u64,
    pub without_key: u64,
    pub without_next_fetch: u64,
    pub unreadable_dates: u64,
    pub queues_created: u64,
}

/// Writes pages into urls and queues, remembering the queue updates sent.
pub(crate) struct PageWriter<'a> {
    client: &'a EsClient,
    options: &'a MigrationOptions,
    key_field: KeyField,
    /// Per key, the earliest `nextDue` this run sent (`None`: the queue was only created).
    pub sent: HashMap<String, Option<DateTime<Utc>>>,
    pub stats: Stats,
}

impl<'a> PageWriter<'a> {
    /// A writer for `options`' urls and queues indices.
    pub fn new(client: &'a EsClient, options: &'a MigrationOptions) -> Self {
        PageWriter {
            client,
            options,
            key_field: KeyField::parse(&options.bucket_field),
            sent: HashMap::new(),
            stats: Stats::default(),
        }
    }

    /// Writes one page: the documents into urls, one queue update per key that needs one. Returns
    /// the number of queue updates (sent, or in a dry run, that would be sent).
    pub async fn write(&mut self, hits: &[Hit]) -> Result<u64, MigrateError> {
        let (documents, earliest) = self.prepare(hits);
        let queues = self.queue_updates(earliest);
        let updates = queues.len() as u64;
        if self.options.dry_run {
            return Ok(updates);
        }
        // Queues first: a queue that is due too early costs a query; one that is missing starves URLs.
        let queues = bulk(self.client, &self.options.queues, queues).await?;
        bulk(self.client, &self.options.urls, documents).await?;
        self.stats.queues_created += queues.created;
        Ok(updates)
    }

    /// The urls index's writes of a page, and the earliest due date of each key in it.
    fn prepare(
        &mut self,
        hits: &[Hit],
    ) -> (Vec<BulkOperation>, HashMap<String, Option<DateTime<Utc>>>) {
        let mut documents = Vec::with_capacity(hits.len());
        let mut earliest: HashMap<String, Option<DateTime<Utc>>> = HashMap::new();
        for hit in hits {
            let prepared =
                prepare_document(&hit.source, &self.key_field, self.options.partition_mode);
            match prepared.next_fetch {
                NextFetch::Never => self.stats.without_next_fetch += 1,
                NextFetch::Unreadable => self.stats.unreadable_dates += 1,
                NextFetch::At(_) => {}
            }
            if prepared.key_added {
                self.stats.keys_added += 1;
            }
            match prepared.key {
                Some(key) => {
                    let due = prepared.next_fetch.due();
                    let entry = earliest.entry(key).or_insert(due);
                    *entry = earlier_of(*entry, due);
                }
                None => self.stats.without_key += 1,
            }
            documents.push(
                BulkOperation::index(hit.id.clone(), prepared.document)
                    .in_index(&self.options.urls),
            );
        }
        (documents, earliest)
    }

    /// The queue updates a page needs: for each key (in key order), none when this run already
    /// sent an earlier or equal date, else a lowering of `nextDue` (or a creation, for a key with
    /// no due URL).
    fn queue_updates(
        &mut self,
        earliest: HashMap<String, Option<DateTime<Utc>>>,
    ) -> Vec<BulkOperation> {
        let now = Utc::now();
        let mut keys: Vec<(String, Option<DateTime<Utc>>)> = earliest.into_iter().collect();
        keys.sort();
        let mut updates = Vec::new();
        for (key, due) in keys {
            let known = self.sent.get(&key).copied();
            let needed = match known {
                None => true,
                Some(known) => due.is_some() && earlier_of(known, due) != known,
            };
            if !needed {
                continue;
            }
            updates.push(match due {
                Some(due) => lower_next_due(&self.options.queues, &key, due, now),
                None => ensure_queue(&self.options.queues, &key, now),
            });
            self.sent
                .insert(key, known.map_or(due, |known| earlier_of(known, due)));
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
