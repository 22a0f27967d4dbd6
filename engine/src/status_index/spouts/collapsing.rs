//! The collapsing spout: field collapsing on the key, with the first due URLs of each key as inner
//! hits, paging through keys up to a maximum offset.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use squall::frontier::{BusyUrls, DueUrl, Spout, SpoutError};

use super::common::{QueryDate, SpoutQuery, StatusSpoutConfig};
use crate::client::EsClient;
use crate::status_index::routes::DocumentRoutes;

/// StormCrawler's `CollapsingSpout`.
#[derive(Debug, Clone)]
pub struct CollapsingSpout {
    query: SpoutQuery,
    date: QueryDate,
    offset: usize,
}

impl CollapsingSpout {
    /// A spout over `settings.index`.
    pub fn new(client: EsClient, settings: StatusSpoutConfig) -> Self {
        let date = QueryDate::new(settings.reset_fetch_date_after);
        CollapsingSpout {
            query: SpoutQuery::new(client, settings),
            date,
            offset: 0,
        }
    }

    /// Records in `routes` how the document of each URL returned was routed, so that the writer
    /// sharing them ([`crate::EsStatusStore::routes`]) updates that document and not a copy on the
    /// key's shard (needed when the index holds documents not routed as the writer routes new ones).
    pub fn with_routes(mut self, routes: DocumentRoutes) -> Self {
        self.query.set_routes(routes);
        self
    }

    /// The query for one page of keys, due up to `date`, less the URLs that were in the topology at
    /// the last [`next_batch`](Spout::next_batch).
    pub fn request_body(&self, date: DateTime<Utc>) -> Value {
        let settings = &self.query.settings;
        let mut collapse = json!({ "field": settings.key_field.query_field() });
        if settings.max_urls_per_bucket > 1 {
            collapse["inner_hits"] = json!({
                "name": "urls_per_bucket",
                "size": settings.max_urls_per_bucket,
                "sort": self.query.bucket_sort(),
            });
        }
        let mut body = json!({
            "from": self.offset,
            "size": settings.max_buckets,
            "explain": false,
            "track_total_hits": false,
            "query": self.query.due_query(date),
            "collapse": collapse,
        });
        if let Some(global) = &settings.global_sort {
            body["sort"] = json!([{ global.as_str(): "asc" }]);
        }
        body
    }
}

#[async_trait]
impl Spout for CollapsingSpout {
    async fn next_batch(&mut self, busy: &BusyUrls) -> Result<Vec<DueUrl>, SpoutError> {
        self.query.skip_busy(busy);
        let date = self.date.current();
        let answer = self.query.search(self.request_body(date)).await?;
        let groups = answer.hits.hits;
        let mut batch = Vec::new();
        let mut taken = std::collections::HashMap::new();
        for group in &groups {
            let hits = match group.inner_hits.get("urls_per_bucket") {
                Some(inner) => &inner.hits.hits[..],
                None => std::slice::from_ref(group),
            };
            self.query
                .take_due(hits, None, busy, &mut taken, &mut batch);
        }
        metrics::counter!("squall_es_docs_total").increment(batch.len() as u64);
        let settings = &self.query.settings;
        if groups.len() == settings.max_buckets {
            self.offset += groups.len();
            if settings
                .max_start_offset
                .is_some_and(|max| self.offset > max)
            {
                self.offset = 0;
            }
        } else {
            self.offset = 0;
        }
        if batch.is_empty() {
            self.date.reset();
            self.offset = 0;
        }
        Ok(batch)
    }

    fn visibility_delay(&self) -> std::time::Duration {
        self.query.visibility_delay()
    }

    /// Its queries leave out the URLs in the topology.
    fn reads_past_busy(&self) -> bool {
        true
    }
}
