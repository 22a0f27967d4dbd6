//! The hybrid spout: an aggregation learns which keys have due URLs, then light per-key queries with
//! `search_after` refill a key as soon as the fetcher has started every URL of it that waited (as
//! StormCrawler's refills a key when its buffer queue empties). When no key needs a refill, or every
//! known key is exhausted, or the aggregation is older than `spout.reset.fetchdate.after`, the
//! aggregation runs again: the spout never does less than the aggregation spout it extends.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use squall::frontier::{BusyUrls, DueUrl, Spout, SpoutError};

use super::aggregation::AggregationSpout;
use super::common::{QueryDate, SpoutQuery, StatusSpoutConfig};
use crate::client::EsClient;
use crate::status_index::routes::DocumentRoutes;

/// One key learned from the aggregation.
#[derive(Debug, Clone)]
struct KnownKey {
    key: String,
    /// Sort values of the last URL returned for the key.
    search_after: Option<Value>,
    /// The last per-key query found nothing more.
    exhausted: bool,
}

/// StormCrawler's `HybridSpout`, with the per-key queries batched in one `_msearch`.
#[derive(Debug, Clone)]
pub struct HybridSpout {
    aggregation: AggregationSpout,
    query: SpoutQuery,
    date: QueryDate,
    keys: Vec<KnownKey>,
    last_aggregation: Option<Instant>,
    aggregation_every: Duration,
}

impl HybridSpout {
    /// A spout over `settings.index`; the aggregation runs again every `spout.reset.fetchdate.after`
    /// (or when every known key is exhausted).
    pub fn new(client: EsClient, settings: StatusSpoutConfig) -> Self {
        let aggregation_every = settings
            .reset_fetch_date_after
            .unwrap_or(Duration::from_secs(120));
        HybridSpout {
            aggregation: AggregationSpout::new(client.clone(), settings.clone()),
            date: QueryDate::new(settings.reset_fetch_date_after),
            query: SpoutQuery::new(client, settings),
            keys: Vec::new(),
            last_aggregation: None,
            aggregation_every,
        }
    }

    /// Records in `routes` how the document of each URL returned was routed (by the aggregation and
    /// by the per-key queries), so that the writer sharing them ([`crate::EsStatusStore::routes`])
    /// updates that document and not a copy on the key's shard.
    pub fn with_routes(mut self, routes: DocumentRoutes) -> Self {
        self.aggregation = self.aggregation.with_routes(routes.clone());
        self.query.set_routes(routes);
        self
    }

    fn per_key_body(&self, date: chrono::DateTime<chrono::Utc>, known: &KnownKey) -> Value {
        let settings = &self.query.settings;
        let mut filters = vec![
            json!({ "range": { "nextFetchDate": { "lte": crate::status_index::schema::format_date(date) } } }),
        ];
        filters.push(json!({ "term": { settings.key_field.query_field(): known.key } }));
        let mut body = json!({
            "size": settings.max_urls_per_reload,
            "explain": false,
            "track_total_hits": false,
            "query": { "bool": { "filter": filters } },
            "sort": self.query.bucket_sort(),
        });
        if let Some(after) = &known.search_after {
            body["search_after"] = after.clone();
        }
        body
    }

    async fn aggregate(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let batch = self.aggregation.next_batch(busy).await?;
        self.last_aggregation = Some(Instant::now());
        self.date.reset();
        self.keys = self
            .aggregation
            .last_buckets
            .iter()
            .map(|(key, after)| KnownKey {
                key: key.clone(),
                search_after: after.clone(),
                exhausted: false,
            })
            .collect();
        Ok(batch)
    }
}

#[async_trait]
impl Spout for HybridSpout {
    fn visibility_delay(&self) -> std::time::Duration {
        self.query.visibility_delay()
    }

    /// Its aggregation leaves out the URLs in the topology, and its per-key queries read on
    /// past the last URL each key returned: it can bring a key's next URLs as soon as the fetcher
    /// has started the last that waited, which is when it refills the key.
    fn reads_past_busy(&self) -> bool {
        true
    }

    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        let stale = self
            .last_aggregation
            .is_none_or(|at| at.elapsed() >= self.aggregation_every);
        // Keys none of whose URLs waits for the fetcher any more get their next URLs.
        let ready: Vec<usize> = (0..self.keys.len())
            .filter(|&i| !self.keys[i].exhausted && busy.waiting_in(&self.keys[i].key) == 0)
            .collect();
        if stale || ready.is_empty() {
            return self.aggregate(busy).await;
        }
        let date = self.date.current();
        let index = self.query.settings.index.clone();
        let preference = self.query.preference().await?;
        let mut lines = Vec::with_capacity(ready.len() * 2);
        for &i in &ready {
            let mut header = json!({ "index": index });
            // Only this instance's shards, as for the aggregation.
            if let Some(preference) = &preference {
                header["preference"] = json!(preference);
            }
            lines.push(header);
            lines.push(self.per_key_body(date, &self.keys[i]));
        }
        let answer = self
            .query
            .client
            .multi_search(lines)
            .await
            .map_err(|e| e.for_spout("per-key queries failed"))?;
        let mut batch = Vec::new();
        for (&i, response) in ready.iter().zip(answer.responses) {
            let hits = response.hits.hits;
            let known = &mut self.keys[i];
            if hits.is_empty() {
                known.exhausted = true;
                continue;
            }
            known.search_after = hits.last().map(|h| json!(h.sort));
            let key = known.key.clone();
            batch.extend(
                hits.iter()
                    .filter_map(|hit| self.query.due_url(hit, Some(&key), busy)),
            );
        }
        metrics::counter!("squall_es_docs_total").increment(batch.len() as u64);
        if batch.is_empty() {
            // The keys refilled had nothing more (their next URLs came due after the query date
            // or are not visible yet): ask the aggregation now rather than answer empty, which
            // would make the runner wait before asking again.
            return self.aggregate(busy).await;
        }
        Ok(batch)
    }
}
