//! The rules of the programs serving a frontier in the engine (a URLFrontier server's), in an index
//! of their own beside its URLs: `<urls index>.rules` (a crawl ID has no `.`, so no crawl's index
//! is named so), made on the first rule kept. One document per rule holder: `crawl` (the crawl's
//! own rules) and `queue/<key>` (a queue's), each with its rules in `_source` and the time it was
//! kept. Every write is refreshed before it returns, so that any server reading the rules back sees
//! it; a queue whose rules are all lifted has its document deleted.

use serde_json::json;
use squall::frontier::{CrawlRules, QueueRules, RuleChange, ServedRules, StoreError};

use super::EsCatalog;
use super::query::sorted_hits;
use crate::client::{EsError, Method, RequestBody};
use crate::status_index::schema::format_date;

const CRAWL: &str = "crawl";
const QUEUE: &str = "queue/";

impl EsCatalog {
    /// The index that keeps the rules of this catalog's crawl.
    pub(super) fn rules_index(&self) -> String {
        format!("{}.rules", self.index)
    }

    pub(super) async fn read_rules(&self) -> Result<ServedRules, StoreError> {
        let index = self.rules_index();
        let body = json!({ "query": { "match_all": {} }, "sort": [{ "name": "asc" }] });
        let hits = match sorted_hits(&self.client, &index, body, 0, u64::MAX).await {
            Ok(hits) => hits,
            Err(error) if error.status() == Some(404) => return Ok(ServedRules::default()),
            Err(error) => return Err(error.for_store(&format!("reading {index}"))),
        };
        let mut rules = ServedRules::default();
        for hit in hits {
            let source = hit.source_or_null();
            let name = source["name"].as_str().unwrap_or_default();
            let kept = source["rules"].clone();
            let unreadable =
                |e: serde_json::Error| StoreError::rejected(format!("{index}: rule {name:?}: {e}"));
            if name == CRAWL {
                rules.crawl = serde_json::from_value::<CrawlRules>(kept).map_err(unreadable)?;
            } else if let Some(key) = name.strip_prefix(QUEUE) {
                let queue = serde_json::from_value::<QueueRules>(kept).map_err(unreadable)?;
                rules.queues.insert(key.to_string(), queue);
            }
        }
        Ok(rules)
    }

    pub(super) async fn write_rule(&self, change: RuleChange) -> Result<(), StoreError> {
        let index = self.rules_index();
        let (name, rules) = match &change {
            RuleChange::Crawl(crawl) => (CRAWL.to_string(), serde_json::to_value(crawl)),
            RuleChange::Queue(key, queue) => (format!("{QUEUE}{key}"), serde_json::to_value(queue)),
        };
        let rules = rules.map_err(|e| StoreError::rejected(format!("rule {name:?}: {e}")))?;
        let path = format!(
            "/{index}/_doc/{}",
            crate::status_index::schema::document_id(&name)
        );
        let refreshed = [("refresh", "true")];
        if let RuleChange::Queue(_, queue) = &change
            && queue.is_empty()
        {
            return match self
                .client
                .request(Method::Delete, &path, &refreshed, None)
                .await
            {
                Ok(_) => Ok(()),
                Err(error) if error.status() == Some(404) => Ok(()),
                Err(error) => Err(error.for_store(&format!("deleting rule {name:?}"))),
            };
        }
        self.make_rules_index(&index).await?;
        let document = json!({
            "name": name,
            "updated": format_date(chrono::Utc::now()),
            "rules": rules,
        });
        let body = Some(RequestBody::Json(document));
        let written = self
            .client
            .request(Method::Put, &path, &refreshed, body)
            .await;
        written
            .map(|_| ())
            .map_err(|e| e.for_store(&format!("keeping rule {name:?} in {index}")))
    }

    /// Makes the rules index unless it is there: its names and times mapped, the rules kept as
    /// they are in `_source`.
    async fn make_rules_index(&self, index: &str) -> Result<(), StoreError> {
        let body = json!({
            "settings": { "index": { "number_of_shards": 1 } },
            "mappings": {
                "dynamic": false,
                "properties": {
                    "name": { "type": "keyword" },
                    "updated": { "type": "date", "format": "date_optional_time" }
                }
            }
        });
        let made = self
            .client
            .request(
                Method::Put,
                &format!("/{index}"),
                &[],
                Some(RequestBody::Json(body)),
            )
            .await;
        match made {
            Ok(_) => Ok(()),
            Err(error) if already_there(&error) => Ok(()),
            Err(error) => Err(error.for_store(&format!("making {index}"))),
        }
    }

    /// Deletes the rules index (DeleteCrawl); gone already is fine.
    pub(super) async fn delete_rules(&self) -> Result<(), StoreError> {
        let index = self.rules_index();
        match self
            .client
            .request(Method::Delete, &format!("/{index}"), &[], None)
            .await
        {
            Ok(_) => Ok(()),
            Err(error) if error.status() == Some(404) => Ok(()),
            Err(error) => Err(error.for_store(&format!("deleting {index}"))),
        }
    }
}

fn already_there(error: &EsError) -> bool {
    error.status() == Some(400) && error.to_string().contains("resource_already_exists")
}
