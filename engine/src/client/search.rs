//! Search answers, typed: the hits (`_id`, `_source`, `_routing`, `sort`, versions, inner hits), the
//! shards that answered, and the aggregations left as JSON (their shape is the query's).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{EsClient, EsError, Method, RequestBody};

/// One hit of a search.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SearchHit {
    /// The index the document is in (one of several, for an alias or a pattern).
    #[serde(rename = "_index", default)]
    pub index: Option<String>,
    /// The document's id.
    #[serde(rename = "_id", default)]
    pub id: String,
    /// The document, unless the search left it out.
    #[serde(rename = "_source", default)]
    pub source: Option<Value>,
    /// The document's routing, when it was written routed.
    #[serde(rename = "_routing", default)]
    pub routing: Option<String>,
    /// The hit's sort values (for `search_after`), when the search was sorted.
    #[serde(default)]
    pub sort: Option<Vec<Value>>,
    /// Requested `fields`, as the engine gave them.
    #[serde(default)]
    pub fields: Option<Value>,
    /// The document's sequence number (`seq_no_primary_term: true`).
    #[serde(rename = "_seq_no", default)]
    pub seq_no: Option<i64>,
    /// The document's primary term (`seq_no_primary_term: true`).
    #[serde(rename = "_primary_term", default)]
    pub primary_term: Option<i64>,
    /// Inner hits by name (field collapsing).
    #[serde(default)]
    pub inner_hits: BTreeMap<String, InnerHits>,
}

impl SearchHit {
    /// The document, or JSON `null` when the search left it out.
    pub fn source_or_null(&self) -> &Value {
        self.source.as_ref().unwrap_or(&Value::Null)
    }

    /// A field of the document (`null` when absent).
    pub fn field(&self, name: &str) -> &Value {
        self.source
            .as_ref()
            .and_then(|s| s.get(name))
            .unwrap_or(&Value::Null)
    }
}

/// The hits of one named inner hit.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct InnerHits {
    /// Its hits.
    #[serde(default)]
    pub hits: Hits,
}

/// The hits of a search (or of a `top_hits` aggregation).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Hits {
    /// The hits, in order.
    #[serde(default)]
    pub hits: Vec<SearchHit>,
    /// The total, when tracked (`{"value": n, "relation": ..}`).
    #[serde(default)]
    pub total: Option<Value>,
}

impl Hits {
    /// Reads the `hits` object of a `top_hits` aggregation: absent, no hits; a hit that cannot be
    /// read is left out on its own, without the others.
    pub fn from_json(value: &Value) -> Hits {
        let hits = value["hits"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|hit| SearchHit::deserialize(hit).ok())
                    .collect()
            })
            .unwrap_or_default();
        Hits {
            hits,
            total: value.get("total").cloned(),
        }
    }
}

/// Which shards answered a search.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Shards {
    /// Shards that failed.
    #[serde(default)]
    pub failed: u64,
    /// Their failures, as the engine gave them.
    #[serde(default)]
    pub failures: Value,
}

/// The buckets of one aggregation of an answer (`aggregations["name"]`); none when it has none.
pub fn buckets(aggregation: &Value) -> &[Value] {
    aggregation["buckets"].as_array().map_or(&[], Vec::as_slice)
}

/// The answer to a search.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct SearchResponse {
    /// The hits. Under a `filter_path`, an answer without hits has none.
    #[serde(default)]
    pub hits: Hits,
    /// The aggregations, as the engine gave them (`null` when none).
    #[serde(default)]
    pub aggregations: Value,
    /// Which shards answered.
    #[serde(rename = "_shards", default)]
    pub shards: Shards,
    /// Whether the search ran out of time (its hits may be partial).
    #[serde(default)]
    pub timed_out: bool,
    /// Milliseconds the engine spent.
    #[serde(default)]
    pub took: Option<u64>,
    /// The scroll to continue with, for a scroll search.
    #[serde(rename = "_scroll_id", default)]
    pub scroll_id: Option<String>,
    /// The point in time to continue with (it may change from page to page).
    #[serde(default)]
    pub pit_id: Option<String>,
}

impl SearchResponse {
    /// Reads a search answer.
    pub fn parse(answer: Value, path: &str) -> Result<Self, EsError> {
        serde_json::from_value(answer).map_err(|e| EsError::Decode {
            path: path.to_string(),
            message: format!("search answer: {e}"),
        })
    }

    /// Whether some shards did not answer, or the search timed out (a partial answer).
    pub fn is_partial(&self) -> bool {
        self.shards.failed > 0 || self.timed_out
    }
}

/// The answer to an `_msearch`: one search answer per search, in order.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct MultiSearchResponse {
    /// The answers.
    #[serde(default)]
    pub responses: Vec<SearchResponse>,
}

impl EsClient {
    /// Runs a search: `POST path` (`/{index}/_search`, `/_search` with a point in time,
    /// `/_search/scroll`) with `body`, and reads the answer.
    pub async fn search(
        &self,
        path: &str,
        query: &[(&str, &str)],
        body: Value,
    ) -> Result<SearchResponse, EsError> {
        let answer = self
            .request(Method::Post, path, query, Some(RequestBody::Json(body)))
            .await?;
        SearchResponse::parse(answer, path)
    }

    /// How many documents of `index` match `query` (`POST /{index}/_count`).
    pub async fn count(&self, index: &str, query: Value) -> Result<u64, EsError> {
        let path = format!("/{index}/_count");
        let body = RequestBody::Json(serde_json::json!({ "query": query }));
        let answer = self.request(Method::Post, &path, &[], Some(body)).await?;
        answer["count"].as_u64().ok_or_else(|| EsError::Decode {
            path,
            message: format!("no count in {answer}"),
        })
    }

    /// Runs several searches in one `_msearch` (`lines`: a header and a body per search).
    pub async fn multi_search(&self, lines: Vec<Value>) -> Result<MultiSearchResponse, EsError> {
        let path = "/_msearch";
        let answer = self
            .request(Method::Post, path, &[], Some(RequestBody::NdJson(lines)))
            .await?;
        serde_json::from_value(answer).map_err(|e| EsError::Decode {
            path: path.to_string(),
            message: format!("multi-search answer: {e}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hits_are_typed() {
        let answer = json!({ "took": 3, "timed_out": false,
            "_shards": { "total": 2, "failed": 0 },
            "hits": { "hits": [
                { "_id": "a", "_routing": "k", "_source": { "url": "u" }, "sort": ["x", 1],
                  "_seq_no": 5, "_primary_term": 1,
                  "inner_hits": { "urls": { "hits": { "hits": [ { "_id": "b" } ] } } } }
            ] },
            "aggregations": { "partition": { "buckets": [] } } });
        let response = SearchResponse::parse(answer, "/s/_search").expect("typed");
        assert!(!response.is_partial());
        let hit = &response.hits.hits[0];
        assert_eq!(hit.routing.as_deref(), Some("k"));
        assert_eq!(hit.field("url"), "u");
        assert_eq!(hit.sort, Some(vec![json!("x"), json!(1)]));
        assert_eq!(hit.inner_hits["urls"].hits.hits[0].id, "b");
        assert_eq!(response.aggregations["partition"]["buckets"], json!([]));
        let empty = SearchResponse::parse(json!({}), "/s/_search").expect("filtered");
        assert!(empty.hits.hits.is_empty());
    }
}
