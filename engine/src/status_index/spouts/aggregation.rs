//! The aggregation spout: a terms aggregation on the key, ordered by each key's earliest due date,
//! with the first due URLs of each key as top hits.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use squall::frontier::{BusyUrls, DueUrl, Spout, SpoutError};

use super::common::{QueryDate, SpoutQuery, StatusSpoutConfig};
use crate::client::{EsClient, Hits};
use crate::status_index::routes::DocumentRoutes;

/// StormCrawler's `AggregationSpout`, with the "recent date" clamped to now.
#[derive(Debug, Clone)]
pub struct AggregationSpout {
    query: SpoutQuery,
    date: QueryDate,
    /// Keys of the last aggregation, in order, with the sort values of their last hit (used by the
    /// hybrid spout).
    pub(crate) last_buckets: Vec<(String, Option<Value>)>,
}

impl AggregationSpout {
    /// A spout over `settings.index`.
    pub fn new(client: EsClient, settings: StatusSpoutConfig) -> Self {
        let date = QueryDate::new(settings.reset_fetch_date_after);
        AggregationSpout {
            query: SpoutQuery::new(client, settings),
            date,
            last_buckets: Vec::new(),
        }
    }

    /// Records in `routes` how the document of each URL returned was routed, so that the writer
    /// sharing them ([`crate::EsStatusStore::routes`]) updates that document and not a copy on the
    /// key's shard (needed when the index holds documents not routed as the writer routes new ones).
    pub fn with_routes(mut self, routes: DocumentRoutes) -> Self {
        self.query.set_routes(routes);
        self
    }

    /// The query for due URLs up to `date`, less the URLs that were in the topology at the last
    /// [`next_batch`](Spout::next_batch) and the queues whose waiting URLs filled their share then.
    pub fn request_body(&self, date: DateTime<Utc>) -> Value {
        let settings = &self.query.settings;
        let field = settings.key_field.query_field();
        let mut terms = json!({ "field": field, "size": settings.max_buckets });
        let mut sub_aggs = json!({
            "docs": { "top_hits": {
                "size": settings.max_urls_per_bucket,
                "explain": false,
                "sort": self.query.bucket_sort(),
            } }
        });
        if let Some(global) = &settings.global_sort {
            terms["order"] = json!({ "top_hit": "asc" });
            sub_aggs["top_hit"] = json!({ "min": { "field": global } });
        }
        let partition = json!({ "terms": terms, "aggs": sub_aggs });
        let aggs = if settings.sample {
            json!({ "sample": {
                "diversified_sampler": {
                    "field": field,
                    "max_docs_per_value": settings.max_urls_per_bucket,
                    "shard_size": settings.max_urls_per_bucket * settings.max_buckets,
                },
                "aggs": { "partition": partition }
            } })
        } else {
            json!({ "partition": partition })
        };
        json!({
            "size": 0,
            "explain": false,
            "track_total_hits": false,
            "query": self.query.due_query_past_full_queues(date),
            "aggs": aggs,
        })
    }
}

#[async_trait]
impl Spout for AggregationSpout {
    fn visibility_delay(&self) -> std::time::Duration {
        self.query.visibility_delay()
    }

    /// Its queries leave out the URLs in the topology.
    fn reads_past_busy(&self) -> bool {
        true
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        self.query.skip_busy(busy);
        let date = self.date.current();
        let answer = self.query.search(self.request_body(date)).await?;
        let aggregations = &answer.aggregations;
        let partition = if self.query.settings.sample {
            &aggregations["sample"]["partition"]
        } else {
            &aggregations["partition"]
        };
        let buckets = crate::client::buckets(partition);
        let mut batch = Vec::new();
        let mut taken = std::collections::HashMap::new();
        let mut last_first_date = None;
        self.last_buckets.clear();
        for bucket in buckets {
            let key = bucket["key"].as_str().map(str::to_string);
            let hits = Hits::from_json(&bucket["docs"]["hits"]).hits;
            if let Some(first) = hits.first() {
                last_first_date = first
                    .field("nextFetchDate")
                    .as_str()
                    .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
                    .map(|d| d.with_timezone(&Utc));
            }
            if let Some(key) = &key {
                let last_sort = hits.last().map(|h| json!(h.sort));
                self.last_buckets.push((key.clone(), last_sort));
            }
            self.query
                .take_due(&hits, key.as_deref(), busy, &mut taken, &mut batch);
        }
        metrics::counter!("squall_es_docs_total").increment(batch.len() as u64);
        // Nothing new: the next query looks again with "now", so URLs that became due since the
        // reused date are seen (and "nothing due" is never concluded from a stale date).
        if batch.is_empty() {
            self.date.reset();
        } else if let (Some(increase), Some(candidate)) =
            (self.query.settings.recent_date_increase, last_first_date)
        {
            self.date
                .narrow(candidate, increase, self.query.settings.recent_date_min_gap);
        }
        Ok(batch)
    }
}
