//! The rules of the programs serving the embedded frontier (a URLFrontier server's), in table
//! `served_rules`: the crawl's under `crawl`, each queue's under `queue/<key>`, as JSON; each change
//! one durable transaction.

use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use super::EmbeddedFrontier;
use crate::frontier::{CrawlRules, QueueRules, RuleChange, ServedRules, StoreError};

const RULES: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("served_rules");
const CRAWL: &str = "crawl";
const QUEUE: &str = "queue/";

fn storage(error: impl Into<redb::Error>) -> StoreError {
    let error = error.into();
    StoreError::of_kind(
        super::storage_error_kind(&error),
        format!("embedded frontier rules: {error}"),
    )
}

fn unreadable(entry: &str, error: serde_json::Error) -> StoreError {
    StoreError::rejected(format!(
        "embedded frontier rule {entry:?} is unreadable: {error}"
    ))
}

impl EmbeddedFrontier {
    pub(super) fn rules_blocking(&self) -> Result<ServedRules, StoreError> {
        let txn = self.db.begin_read().map_err(storage)?;
        let table = match txn.open_table(RULES) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(ServedRules::default()),
            Err(error) => return Err(storage(error)),
        };
        let mut rules = ServedRules::default();
        for entry in table.iter().map_err(storage)? {
            let (name, value) = entry.map_err(storage)?;
            let name = name.value();
            if name == CRAWL {
                rules.crawl = serde_json::from_slice::<CrawlRules>(value.value())
                    .map_err(|e| unreadable(name, e))?;
            } else if let Some(key) = name.strip_prefix(QUEUE) {
                let queue = serde_json::from_slice::<QueueRules>(value.value())
                    .map_err(|e| unreadable(name, e))?;
                rules.queues.insert(key.to_string(), queue);
            }
        }
        Ok(rules)
    }

    pub(super) fn keep_rule_blocking(&self, change: &RuleChange) -> Result<(), StoreError> {
        let (name, value) = match change {
            RuleChange::Crawl(crawl) => (CRAWL.to_string(), serde_json::to_vec(crawl)),
            RuleChange::Queue(key, queue) => (format!("{QUEUE}{key}"), serde_json::to_vec(queue)),
        };
        let value = value.map_err(|e| StoreError::rejected(format!("rule {name:?}: {e}")))?;
        let txn = self.db.begin_write().map_err(storage)?;
        {
            let mut table = txn.open_table(RULES).map_err(storage)?;
            match change {
                RuleChange::Queue(_, queue) if queue.is_empty() => {
                    table.remove(name.as_str()).map_err(storage)?;
                }
                _ => {
                    table
                        .insert(name.as_str(), value.as_slice())
                        .map_err(storage)?;
                }
            }
        }
        txn.commit().map_err(storage)
    }
}
