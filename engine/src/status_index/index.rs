//! Creating the status index when it is missing (through [`ensure_index`], the one way indices are
//! created), and reading how an existing one was written. An existing index is used as it is:
//! nothing here deletes or rewrites one.

use serde_json::json;

use crate::client::indices::{IndexState, ensure_index};
use crate::client::{EsClient, EsError};
use crate::status_index::schema::{STATUS_INDEX_SHARDS, status_index_body, urls_index_body};

/// How a new status index is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusIndexConfig {
    /// Its name (StormCrawler's `es.status.index.name`, `status` by default).
    pub name: String,
    /// Primary shards.
    pub shards: u32,
    /// Replicas.
    pub replicas: u32,
    /// Refresh interval, e.g. `5s`.
    pub refresh_interval: String,
}

impl Default for StatusIndexConfig {
    fn default() -> Self {
        StatusIndexConfig {
            name: "status".to_string(),
            shards: STATUS_INDEX_SHARDS,
            replicas: 1,
            refresh_interval: "5s".to_string(),
        }
    }
}

/// Creates the status index unless it exists.
pub async fn ensure_status_index(
    client: &EsClient,
    settings: &StatusIndexConfig,
) -> Result<IndexState, EsError> {
    ensure_with(client, settings, status_index_body).await
}

/// Creates the urls index of the queue frontier unless it exists: the status index's mapping, sorted
/// on disk by due date ([`urls_index_body`]).
pub async fn ensure_urls_index(
    client: &EsClient,
    settings: &StatusIndexConfig,
) -> Result<IndexState, EsError> {
    ensure_with(client, settings, urls_index_body).await
}

/// Creates the index `settings` name unless it exists, its body made by `body` from the settings'
/// shards, replicas and refresh interval.
async fn ensure_with(
    client: &EsClient,
    settings: &StatusIndexConfig,
    body: fn(u32, u32, &str) -> serde_json::Value,
) -> Result<IndexState, EsError> {
    let body = body(
        settings.shards,
        settings.replicas,
        &settings.refresh_interval,
    );
    ensure_index(client, &settings.name, body).await
}

/// How the documents of a sample of an index were routed when written (see [`sample_routing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoutingSample {
    /// Documents sampled that carry a `_routing`.
    pub routed: usize,
    /// Documents sampled without one (they live on the shard of their `_id`).
    pub unrouted: usize,
}

impl RoutingSample {
    /// The number of documents sampled.
    pub fn sampled(&self) -> usize {
        self.routed + self.unrouted
    }

    /// Whether the sample is empty (an empty or missing index).
    pub fn is_empty(&self) -> bool {
        self.sampled() == 0
    }

    /// Whether the index holds routed documents and unrouted ones.
    pub fn is_mixed(&self) -> bool {
        self.routed > 0 && self.unrouted > 0
    }

    /// The routing the sample shows: that of most of its documents; routed (StormCrawler's
    /// default) for an empty sample and on a tie.
    pub fn majority(&self) -> bool {
        self.routed >= self.unrouted
    }
}

/// The writer's routing setting contradicts how an existing index was written: squall's writes of
/// known URLs would create second documents with their ids on other shards.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "status index `{index}` holds documents written {written} ({count} of {sampled} sampled) but \
     es.status.routing is {setting}: squall's updates would create second copies; set \
     es.status.routing (--es-routing) {fix}",
    written = if self.setting { "without routing" } else { "with routing" },
    count = if self.setting { self.sample.unrouted } else { self.sample.routed },
    sampled = self.sample.sampled(),
    fix = !self.setting,
)]
pub struct RoutingMismatch {
    /// The status index.
    pub index: String,
    /// The writer's setting (`es.status.routing`): route new documents by key.
    pub setting: bool,
    /// What the sample of the index showed.
    pub sample: RoutingSample,
}

/// Samples up to `sample_size` documents of `index` (spread over its shards by a random score, no
/// source) and counts those written with and without routing. A missing index is an empty sample.
pub async fn sample_routing(
    client: &EsClient,
    index: &str,
    sample_size: usize,
) -> Result<RoutingSample, EsError> {
    let path = format!("/{index}/_search");
    let body = json!({
        "size": sample_size,
        "_source": false,
        "track_total_hits": false,
        // A plain match_all would return the first shard's documents first.
        "query": { "function_score": { "query": { "match_all": {} }, "random_score": {} } },
    });
    let filter = [("filter_path", "hits.hits._routing,hits.hits._id")];
    let answer = match client.search(&path, &filter, body).await {
        Ok(answer) => answer,
        Err(error) if error.status() == Some(404) => return Ok(RoutingSample::default()),
        Err(error) => return Err(error),
    };
    let mut sample = RoutingSample::default();
    // An empty answer (no hits) leaves out `hits` altogether under filter_path.
    for hit in &answer.hits.hits {
        if hit.routing.is_some() {
            sample.routed += 1;
        } else {
            sample.unrouted += 1;
        }
    }
    Ok(sample)
}

/// Checks the writer's routing `setting` against a sample of `index`: it must agree with most of
/// the sampled documents (see [`RoutingSample::majority`]); an empty sample agrees with anything.
pub fn check_routing(
    index: &str,
    setting: bool,
    sample: RoutingSample,
) -> Result<(), RoutingMismatch> {
    if sample.is_empty() || sample.majority() == setting {
        Ok(())
    } else {
        Err(RoutingMismatch {
            index: index.to_string(),
            setting,
            sample,
        })
    }
}

/// The writer's routing for `index`: `requested` when given (checked with [`check_routing`]),
/// else what the sample shows (routed for an empty index, StormCrawler's default).
pub fn routing_for(
    index: &str,
    requested: Option<bool>,
    sample: RoutingSample,
) -> Result<bool, RoutingMismatch> {
    match requested {
        Some(setting) => check_routing(index, setting, sample).map(|()| setting),
        None => Ok(sample.majority()),
    }
}

/// Which shards instance `instance` of `instances` reads: every `instances`-th shard from
/// `instance`, as a search `preference` (`_shards:0,2,4`).
pub fn shard_preference(shards: u32, instance: u32, instances: u32) -> Option<String> {
    if instances <= 1 {
        return None;
    }
    let mine: Vec<String> = (0..shards)
        .filter(|s| s % instances == instance % instances)
        .map(|s| s.to_string())
        .collect();
    Some(format!("_shards:{}", mine.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_must_agree_with_the_sample() {
        let unrouted = RoutingSample {
            routed: 0,
            unrouted: 100,
        };
        let error = check_routing("status", true, unrouted).expect_err("mismatch");
        assert_eq!(
            error.to_string(),
            "status index `status` holds documents written without routing (100 of 100 sampled) \
             but es.status.routing is true: squall's updates would create second copies; set \
             es.status.routing (--es-routing) false"
        );
        assert_eq!(check_routing("status", false, unrouted), Ok(()));
        let routed = RoutingSample {
            routed: 7,
            unrouted: 0,
        };
        assert!(check_routing("status", false, routed).is_err());
        assert_eq!(routing_for("status", None, unrouted), Ok(false));
        assert_eq!(routing_for("status", None, routed), Ok(true));
        let empty = RoutingSample::default();
        assert_eq!(routing_for("status", None, empty), Ok(true));
        assert_eq!(routing_for("status", Some(false), empty), Ok(false));
    }

    #[test]
    fn instances_split_the_shards() {
        assert_eq!(shard_preference(10, 0, 1), None);
        assert_eq!(
            shard_preference(10, 0, 3).as_deref(),
            Some("_shards:0,3,6,9")
        );
        assert_eq!(shard_preference(10, 2, 3).as_deref(), Some("_shards:2,5,8"));
        assert_eq!(shard_preference(4, 1, 2).as_deref(), Some("_shards:1,3"));
    }
}
