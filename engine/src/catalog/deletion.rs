//! Deleting what a query matches, visible on return: `_delete_by_query` where the engine serves it,
//! and otherwise searches and bulk deletes, each conditional on the version the search found.

use serde_json::{Value, json};
use squall::frontier::StoreError;

use super::EsCatalog;
use crate::client::indices::refresh;
use crate::client::{
    BulkOperation, BulkRequest, EsError, Method, RequestBody, SearchHit, is_transient_status,
};

/// How many times a deletion runs again for the documents changed while it ran.
const DELETE_ATTEMPTS: usize = 5;

/// Documents deleted per search and bulk on the path without `_delete_by_query`.
const PAGE: usize = 1000;

impl EsCatalog {
    /// Deletes what `query` matches in `index`, visible on return; how many documents went. The
    /// index is refreshed first, so that every write made before shows; a document changed between
    /// the search and its deletion (a lease renewed, a status written) is a version conflict, and
    /// the deletion runs again for what is left, a few times at most.
    pub(super) async fn delete_by_query(
        &self,
        index: &str,
        query: Value,
    ) -> Result<u64, StoreError> {
        let context = format!("deleting from {index}");
        let mut deleted = 0;
        for _ in 0..DELETE_ATTEMPTS {
            refresh(&self.client, index)
                .await
                .map_err(|e| e.for_store(&context))?;
            let round = match self.delete_by_query_once(index, &query, &context).await {
                Err(error) if no_handler(&error) => {
                    self.delete_found(index, &query, &context).await
                }
                other => other
                    .map_err(|e| e.for_store(&context))
                    .and_then(|answer| answer),
            }?;
            deleted += round.deleted;
            if !round.conflicts {
                return Ok(deleted);
            }
        }
        Err(StoreError::unavailable(format!(
            "{context}: documents kept changing during the deletion ({deleted} deleted); \
             deleting again may finish it"
        )))
    }

    /// One `_delete_by_query` with `conflicts=proceed`.
    async fn delete_by_query_once(
        &self,
        index: &str,
        query: &Value,
        context: &str,
    ) -> Result<Result<Round, StoreError>, EsError> {
        let answer = self
            .client
            .request(
                Method::Post,
                &format!("/{index}/_delete_by_query"),
                &[("refresh", "true"), ("conflicts", "proceed")],
                Some(RequestBody::Json(json!({ "query": query }))),
            )
            .await?;
        Ok(deletion_outcome(context, &answer).map(|deleted| Round {
            deleted,
            conflicts: answer["version_conflicts"].as_u64().unwrap_or(0) > 0,
        }))
    }

    /// Deletes what `query` matches by pages: a search for ids, routings and versions, then one bulk
    /// of deletes conditional on those versions, until a search finds nothing (conflicts aside).
    async fn delete_found(
        &self,
        index: &str,
        query: &Value,
        context: &str,
    ) -> Result<Round, StoreError> {
        let mut round = Round::default();
        loop {
            let body = json!({ "query": query, "size": PAGE, "_source": false,
                               "seq_no_primary_term": true, "sort": ["_doc"] });
            let answer = self
                .client
                .search(&format!("/{index}/_search"), &[], body)
                .await
                .map_err(|e| e.for_store(context))?;
            // A partial answer would pass for "nothing left" while documents remain.
            if answer.is_partial() {
                return Err(StoreError::unavailable(format!(
                    "{context}: the search for what to delete was partial ({} shards failed{})",
                    answer.shards.failed,
                    if answer.timed_out { ", timed out" } else { "" }
                )));
            }
            let hits = answer.hits.hits;
            let request: BulkRequest = hits.iter().map(conditional_delete).collect();
            if request.is_empty() {
                return Ok(round);
            }
            let items = self
                .client
                .bulk(Some(index), &request, None)
                .await
                .map_err(|e| e.for_store(context))?
                .items;
            let mut progressed = false;
            for item in &items {
                if item.is_success() {
                    round.deleted += 1;
                    progressed = true;
                } else if item.is_conflict() {
                    round.conflicts = true;
                } else if !item.is_not_found() {
                    return Err(StoreError::of_kind(
                        item.error_kind(),
                        format!(
                            "{context}: HTTP {} {}",
                            item.status,
                            item.reason().unwrap_or("")
                        ),
                    ));
                }
            }
            refresh(&self.client, index)
                .await
                .map_err(|e| e.for_store(context))?;
            // Only documents that changed meanwhile are left to this page: the caller runs again.
            if !progressed || hits.len() < PAGE {
                return Ok(round);
            }
        }
    }
}

/// What one deletion pass did.
#[derive(Debug, Default)]
struct Round {
    deleted: u64,
    conflicts: bool,
}

/// A delete of a search hit, only if it is still the version found.
fn conditional_delete(hit: &SearchHit) -> BulkOperation {
    let mut operation = BulkOperation::delete(&hit.id).routed(hit.routing.clone());
    // The index the hit is in, for an alias or a pattern naming several.
    if let Some(index) = &hit.index {
        operation = operation.in_index(index);
    }
    match (hit.seq_no, hit.primary_term) {
        (Some(seq_no), Some(term)) => operation.if_version(seq_no, term),
        _ => operation,
    }
}

/// Whether the engine answered that it has no such endpoint (400 "no handler found", 405).
fn no_handler(error: &EsError) -> bool {
    match error.status() {
        Some(405) => true,
        Some(400) => error.to_string().contains("no handler found"),
        _ => false,
    }
}

/// How many documents a `_delete_by_query` answer says went, or why it failed.
fn deletion_outcome(context: &str, answer: &Value) -> Result<u64, StoreError> {
    if let Some(failure) = answer["failures"].as_array().and_then(|f| f.first()) {
        let status = failure["status"].as_u64().unwrap_or(500);
        let transient = u16::try_from(status).is_ok_and(is_transient_status);
        let message = format!("{context}: {failure}");
        return Err(if transient {
            StoreError::unavailable(message)
        } else {
            StoreError::rejected(message)
        });
    }
    if answer["timed_out"].as_bool() == Some(true) {
        return Err(StoreError::unavailable(format!("{context}: timed out")));
    }
    Ok(answer["deleted"].as_u64().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_becomes_a_delete_with_its_routing_and_version() {
        let hit: SearchHit = serde_json::from_value(json!({ "_index": "status", "_id": "x",
            "_routing": "a.test", "_seq_no": 4, "_primary_term": 2 }))
        .expect("a hit");
        let delete = conditional_delete(&hit);
        assert_eq!(delete.routing.as_deref(), Some("a.test"));
        assert_eq!(delete.index.as_deref(), Some("status"));
        assert_eq!(delete.if_version, Some((4, 2)));
    }
}
