//! The frontier in an index as a [`Catalog`]: its URLs and queues looked up, listed, counted and
//! deleted, for a StormCrawler status index and for the queue frontier's two indices alike.
//!
//! URLs are StormCrawler-shaped documents (`url`, `status`, the key in its field, `nextFetchDate`,
//! `metadata` with escaped keys), read with searches: a write shows once the index refreshed
//! (the writers' `flush` refreshes at once). Listings are sorted by key, then URL; pages deeper
//! than the engine's result window are reached with `search_after`. A text filter is a wildcard
//! query on `url` (`case_insensitive` when case is ignored, which Elasticsearch 7.10+ and
//! OpenSearch 2 support). Documents the spouts could not read either (no URL, no known status)
//! are left out of listings, with a warning.
//!
//! Queues are the queues index's documents for the queue frontier (a key gets one with its first
//! due URL), and the distinct values of the key field for a status index. Deletions are
//! `_delete_by_query` after a refresh, with `refresh=true`, so that they show at once, and
//! `conflicts=proceed`, run again for documents changed meanwhile (leases are renewed all the
//! time); on an engine without `_delete_by_query` (an Elasticsearch node without its reindex
//! module), searches and bulk deletes conditional on the versions found. The queue frontier's queue
//! documents go first, so that no URL written meanwhile is left without its queue.

mod deletion;
mod query;
mod queues;
mod rules;

use crate::status_index::schema::{CREATION_DATE, format_date};
use async_trait::async_trait;
use serde_json::json;
use squall::frontier::{Catalog, QueuePage, StoreError, StoredUrl, UrlQuery};
use squall::model::Status;

use crate::client::{EsClient, EsError, Method, SearchResponse};
use crate::queue::schema::queue_id;
use crate::status_index::schema::KeyField;
use query::{sorted_hits, stored_url, url_query, url_sort};

/// A [`Catalog`] over an index of status documents (and the queue frontier's queues index).
#[derive(Debug, Clone)]
pub struct EsCatalog {
    client: EsClient,
    index: String,
    key_field: KeyField,
    queues_index: Option<String>,
}

impl EsCatalog {
    /// A search of the index with `body`.
    async fn search(&self, body: serde_json::Value) -> Result<SearchResponse, StoreError> {
        let path = format!("/{}/_search", self.index);
        let answer = self.client.search(&path, &[], body).await;
        answer.map_err(reading(&self.index))
    }

    /// The catalog of a StormCrawler status index, the key in `key_field`.
    pub fn status_index(client: EsClient, index: &str, key_field: KeyField) -> Self {
        EsCatalog {
            client,
            index: index.to_string(),
            key_field,
            queues_index: None,
        }
    }

    /// The catalog of the queue frontier: its urls index, the key in `key_field`, and its queues
    /// index.
    pub fn queue_frontier(
        client: EsClient,
        urls_index: &str,
        queues_index: &str,
        key_field: KeyField,
    ) -> Self {
        EsCatalog {
            client,
            index: urls_index.to_string(),
            key_field,
            queues_index: Some(queues_index.to_string()),
        }
    }

    /// Deletes the queue document of `key` from the queues index (none is fine).
    async fn delete_queue_document(&self, queues_index: &str, key: &str) -> Result<(), StoreError> {
        let path = format!("/{queues_index}/_doc/{}", queue_id(key));
        match self
            .client
            .request(Method::Delete, &path, &[("refresh", "true")], None)
            .await
        {
            Ok(_) => Ok(()),
            Err(error) if error.status() == Some(404) => Ok(()),
            Err(error) => Err(error.for_store(&format!("deleting queue {key}"))),
        }
    }
}

/// `error` as the catalog's, saying what was read.
fn reading(index: &str) -> impl Fn(EsError) -> StoreError + '_ {
    move |error| error.for_store(&format!("reading {index}"))
}

#[async_trait]
impl Catalog for EsCatalog {
    async fn lookup(&self, url: &str) -> Result<Option<StoredUrl>, StoreError> {
        // A search on `url` rather than a get by id: documents may be routed by a key not known here.
        let body = json!({ "query": { "term": { "url": url } }, "size": 1 });
        let answer = self.search(body).await?;
        Ok(answer
            .hits
            .hits
            .first()
            .and_then(|hit| stored_url(hit, &self.key_field)))
    }

    async fn count(&self, query: &UrlQuery) -> Result<u64, StoreError> {
        self.client
            .count(&self.index, url_query(query, &self.key_field))
            .await
            .map_err(reading(&self.index))
    }

    async fn settle(&self) -> Result<(), StoreError> {
        let indices = match &self.queues_index {
            Some(queues) => format!("{},{queues}", self.index),
            None => self.index.clone(),
        };
        crate::client::indices::refresh(&self.client, &indices)
            .await
            .map_err(|error| error.for_store(&format!("refreshing {indices}")))
    }

    async fn list(
        &self,
        query: &UrlQuery,
        start: u64,
        size: u64,
    ) -> Result<Vec<StoredUrl>, StoreError> {
        let body = json!({
            "query": url_query(query, &self.key_field),
            "sort": url_sort(&self.key_field)
        });
        let hits = sorted_hits(&self.client, &self.index, body, start, size)
            .await
            .map_err(reading(&self.index))?;
        Ok(hits
            .iter()
            .filter_map(|hit| stored_url(hit, &self.key_field))
            .collect())
    }

    /// A cardinality aggregation on the key: exact up to its precision threshold (40,000 queues),
    /// within a few percent beyond.
    async fn count_queues(&self, query: &UrlQuery) -> Result<u64, StoreError> {
        let body = json!({
            "size": 0,
            "track_total_hits": false,
            "query": url_query(query, &self.key_field),
            "aggs": { "queues": { "cardinality": {
                "field": self.key_field.query_field(),
                "precision_threshold": 40000
            } } }
        });
        let answer = self.search(body).await?;
        Ok(answer.aggregations["queues"]["value"].as_u64().unwrap_or(0))
    }

    async fn count_by_status(&self) -> Result<Vec<(Status, u64)>, StoreError> {
        let body = json!({
            "size": 0,
            "track_total_hits": false,
            "aggs": { "statuses": { "terms": { "field": "status", "size": 20 } } }
        });
        let answer = self.search(body).await?;
        let buckets = crate::client::buckets(&answer.aggregations["statuses"]);
        let counted = |status: Status| {
            buckets
                .iter()
                .filter(|b| b["key"].as_str() == Some(status.as_str()))
                .filter_map(|b| b["doc_count"].as_u64())
                .sum::<u64>()
        };
        Ok(Status::ALL
            .into_iter()
            .map(|status| (status, counted(status)))
            .filter(|(_, n)| *n > 0)
            .collect())
    }

    async fn queues(&self, start: u64, size: u64) -> Result<QueuePage, StoreError> {
        match &self.queues_index {
            Some(queues_index) => queues::indexed_queues(&self.client, queues_index, start, size)
                .await
                .map_err(reading(queues_index)),
            None => {
                queues::aggregated_queues(&self.client, &self.index, &self.key_field, start, size)
                    .await
                    .map_err(reading(&self.index))
            }
        }
    }

    async fn delete_queue(&self, key: &str) -> Result<u64, StoreError> {
        if let Some(queues_index) = &self.queues_index {
            self.delete_queue_document(queues_index, key).await?;
        }
        let query = url_query(
            &UrlQuery {
                key: Some(key.to_string()),
                ..UrlQuery::default()
            },
            &self.key_field,
        );
        self.delete_by_query(&self.index, query).await
    }

    fn keeps_creation_dates(&self) -> bool {
        true
    }

    fn keeps_rules(&self) -> bool {
        true
    }

    async fn rules(&self) -> Result<squall::frontier::ServedRules, StoreError> {
        self.read_rules().await
    }

    async fn keep_rule(&self, change: squall::frontier::RuleChange) -> Result<(), StoreError> {
        self.write_rule(change).await
    }

    /// A `_delete_by_query` of the dated documents older than `cutoff` (an undated one, which
    /// StormCrawler or an earlier squall wrote, does not match the range and stays).
    async fn purge_created_before(
        &self,
        key: Option<&str>,
        cutoff: chrono::DateTime<chrono::Utc>,
    ) -> Result<u64, StoreError> {
        let older = json!({ "range": { CREATION_DATE: { "lt": format_date(cutoff) } } });
        let mut filters = vec![older];
        if let Some(key) = key {
            filters.push(json!({ "term": { self.key_field.query_field(): key } }));
        }
        let query = json!({ "bool": { "filter": filters } });
        self.delete_by_query(&self.index, query).await
    }

    async fn delete_all(&self) -> Result<u64, StoreError> {
        self.delete_rules().await?;
        if let Some(queues_index) = &self.queues_index {
            self.delete_by_query(queues_index, json!({ "match_all": {} }))
                .await?;
        }
        self.delete_by_query(&self.index, json!({ "match_all": {} }))
            .await
    }
}
