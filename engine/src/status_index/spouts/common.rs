//! What the status-index spouts share: settings, the query date, shard selection, reading hits.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};
use squall::frontier::{BusyUrls, DueUrl, SpoutError};
use squall::model::{PartitionMode, partition_key};
use tracing::debug;

use crate::client::indices::shard_count;
use crate::client::{EsClient, SearchHit, SearchResponse};
use crate::status_index::index::shard_preference;
use crate::status_index::routes::{DocumentRoutes, Routing};
use crate::status_index::schema::{KeyField, document_id, format_date, read_document};

/// Settings of the status-index spouts, with StormCrawler's keys and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusSpoutConfig {
    /// `es.status.index.name`.
    pub index: String,
    /// `es.status.bucket.field`: the field holding the partition key.
    pub key_field: KeyField,
    /// `es.status.max.buckets`: hosts per query.
    pub max_buckets: usize,
    /// `es.status.max.urls.per.bucket`: URLs per host per query.
    pub max_urls_per_bucket: usize,
    /// `es.status.bucket.sort.field`: order within a host.
    pub bucket_sort: Vec<String>,
    /// `es.status.global.sort.field`: order of the hosts (by their earliest value); None: by size.
    pub global_sort: Option<String>,
    /// `es.status.filterQuery`: extra Lucene query-string filters.
    pub filter_queries: Vec<String>,
    /// `es.status.query.timeout`.
    pub query_timeout: Option<Duration>,
    /// `es.status.sample`: wrap the aggregation in a diversified sampler.
    pub sample: bool,
    /// `es.status.recentDate.increase`, minutes (aggregation spout).
    pub recent_date_increase: Option<i64>,
    /// `es.status.recentDate.min.gap`, minutes (aggregation spout).
    pub recent_date_min_gap: Option<i64>,
    /// `spout.reset.fetchdate.after`: the query date goes back to "now" this often.
    pub reset_fetch_date_after: Option<Duration>,
    /// `es.status.max.start.offset`: collapsing spout's deepest page.
    pub max_start_offset: Option<usize>,
    /// `es.status.max.urls.per.reload`: hybrid spout's per-host query size.
    pub max_urls_per_reload: usize,
    /// This process's share of the shards: instance `.0` of `.1`.
    pub shard_split: (u32, u32),
    /// Used when a document has no key.
    pub partition_mode: PartitionMode,
    /// The index's refresh interval: how long a write takes to show in queries.
    pub refresh_interval: Duration,
}

impl Default for StatusSpoutConfig {
    fn default() -> Self {
        StatusSpoutConfig {
            index: "status".to_string(),
            key_field: KeyField::default(),
            max_buckets: 10,
            max_urls_per_bucket: 1,
            bucket_sort: vec!["nextFetchDate".to_string(), "url".to_string()],
            global_sort: Some("nextFetchDate".to_string()),
            filter_queries: Vec::new(),
            query_timeout: None,
            sample: false,
            recent_date_increase: None,
            recent_date_min_gap: None,
            reset_fetch_date_after: Some(Duration::from_secs(120)),
            max_start_offset: None,
            max_urls_per_reload: 1,
            shard_split: (0, 1),
            partition_mode: PartitionMode::ByHost,
            refresh_interval: Duration::from_secs(5),
        }
    }
}

/// The upper bound of the "due" range filter, reused between queries so that the engine can cache
/// the filter, and reset to "now" periodically and whenever a query finds nothing.
#[derive(Debug, Clone)]
pub struct QueryDate {
    date: Option<DateTime<Utc>>,
    last_reset: Instant,
    reset_after: Option<Duration>,
}

impl QueryDate {
    /// A query date that resets after `reset_after`.
    pub fn new(reset_after: Option<Duration>) -> Self {
        QueryDate {
            date: None,
            last_reset: Instant::now(),
            reset_after,
        }
    }

    /// The date to query with.
    pub fn current(&mut self) -> DateTime<Utc> {
        if let Some(reset_after) = self.reset_after
            && self.last_reset.elapsed() >= reset_after
        {
            self.date = None;
        }
        match self.date {
            Some(date) => date,
            None => {
                let now = Utc::now();
                self.date = Some(now);
                self.last_reset = Instant::now();
                now
            }
        }
    }

    /// Forgets the date: the next query uses "now".
    pub fn reset(&mut self) {
        self.date = None;
    }

    /// StormCrawler's "recent date" narrowing: move the date to `candidate + increase` minutes, unless
    /// it is within `min_gap` minutes of the current one. Unlike StormCrawler, never past "now", so
    /// URLs that are not due are never returned.
    pub fn narrow(&mut self, candidate: DateTime<Utc>, increase: i64, min_gap: Option<i64>) {
        let target = (candidate + TimeDelta::minutes(increase)).min(Utc::now());
        if let (Some(gap), Some(current)) = (min_gap, self.date)
            && (target - current).num_minutes().abs() <= gap
        {
            return;
        }
        self.date = Some(target);
    }
}

/// Shard selection and the query plumbing the spouts share.
#[derive(Debug, Clone)]
pub struct SpoutQuery {
    pub(crate) client: EsClient,
    pub(crate) settings: StatusSpoutConfig,
    preference: Option<Option<String>>,
    /// Where the routing of each returned URL's document is recorded, for the writer.
    routes: Option<DocumentRoutes>,
    /// Ids of the documents of the URLs in the topology, left out of the next query, each with
    /// whether its queue is one of `full_keys` (a query leaving those out by key needs not name it).
    skip_ids: Vec<(String, bool)>,
    /// The queue of each URL this spout returned that is still in the topology.
    returned_keys: HashMap<String, String>,
    /// Queues whose waiting URLs fill their share (`max_urls_per_bucket`), left out of the next
    /// query: their URLs would be dropped, and would take the places of queues that can take more.
    full_keys: Vec<String>,
}

impl SpoutQuery {
    pub(crate) fn new(client: EsClient, settings: StatusSpoutConfig) -> Self {
        SpoutQuery {
            client,
            settings,
            preference: None,
            routes: None,
            skip_ids: Vec::new(),
            returned_keys: HashMap::new(),
            full_keys: Vec::new(),
        }
    }

    /// How long a write takes to show in these queries: a refresh, and a margin for the query
    /// that follows it.
    pub(crate) fn visibility_delay(&self) -> Duration {
        self.settings.refresh_interval + Duration::from_millis(500)
    }

    /// Leaves the URLs in the topology, and those done too recently for the index to show it, out of
    /// the next queries, so that a host's next due URLs come back rather than those already taken.
    pub(crate) fn skip_busy(&mut self, busy: &BusyUrls) {
        let done: HashSet<&str> = busy.recently_done().iter().map(String::as_str).collect();
        self.returned_keys
            .retain(|url, _| busy.in_topology(url) || done.contains(url.as_str()));
        let share = self.settings.max_urls_per_bucket;
        let full: HashSet<&String> = self
            .returned_keys
            .values()
            .filter(|key| busy.waiting_in(key) >= share)
            .collect();
        let in_topology = busy.in_topology_urls();
        self.skip_ids = in_topology
            .iter()
            .chain(busy.recently_done())
            .map(|url| {
                let of_full = self
                    .returned_keys
                    .get(url)
                    .is_some_and(|k| full.contains(k));
                (document_id(url), of_full)
            })
            .collect();
        let mut full: Vec<String> = full.into_iter().cloned().collect();
        full.sort_unstable();
        self.full_keys = full;
    }

    /// Whether queue `key` may have one more URL in this answer: its URLs waiting for the fetcher
    /// plus those already taken from this answer stay within `max_urls_per_bucket`.
    pub(crate) fn has_room(
        &self,
        key: &str,
        taken: &mut HashMap<String, usize>,
        busy: &BusyUrls,
    ) -> bool {
        let taken = taken.entry(key.to_string()).or_default();
        if busy.waiting_in(key) + *taken >= self.settings.max_urls_per_bucket {
            return false;
        }
        *taken += 1;
        true
    }

    /// Adds to `batch` the URLs of `hits` that are not busy and whose queue has room (see
    /// [`has_room`](Self::has_room)); `taken` counts, per queue, the URLs taken from this answer.
    pub(crate) fn take_due(
        &mut self,
        hits: &[SearchHit],
        bucket_key: Option<&str>,
        busy: &BusyUrls,
        taken: &mut HashMap<String, usize>,
        batch: &mut Vec<DueUrl>,
    ) {
        for hit in hits {
            if let Some(due) = self.due_url(hit, bucket_key, busy)
                && self.has_room(&due.key, taken, busy)
            {
                let url = due.url.url.as_str().to_string();
                self.returned_keys.insert(url, due.key.clone());
                batch.push(due);
            }
        }
    }

    /// The query for URLs due by `date`: [`due_filters`](Self::due_filters), less the URLs in the
    /// topology.
    pub(crate) fn due_query(&self, date: DateTime<Utc>) -> Value {
        self.due_query_leaving_out(date, false)
    }

    /// [`due_query`](Self::due_query), less the queues whose waiting URLs fill their share too,
    /// for a query that ranks the queues afresh each time (the aggregation: its places go to
    /// queues that can take URLs; the collapsing spout's pages would skip queues if the list
    /// shrank under them).
    pub(crate) fn due_query_past_full_queues(&self, date: DateTime<Utc>) -> Value {
        self.due_query_leaving_out(date, true)
    }

    fn due_query_leaving_out(&self, date: DateTime<Utc>, full_queues: bool) -> Value {
        let mut query = json!({ "bool": { "filter": self.due_filters(date) } });
        let mut must_not = Vec::new();
        // A full queue's URLs are left out by its key already.
        let ids: Vec<&String> = self
            .skip_ids
            .iter()
            .filter(|(_, of_full)| !(full_queues && *of_full))
            .map(|(id, _)| id)
            .collect();
        if !ids.is_empty() {
            must_not.push(json!({ "ids": { "values": ids } }));
        }
        if full_queues && !self.full_keys.is_empty() {
            let field = self.settings.key_field.query_field();
            must_not.push(json!({ "terms": { field: self.full_keys } }));
        }
        if !must_not.is_empty() {
            query["bool"]["must_not"] = json!(must_not);
        }
        query
    }

    /// Records the routing of every hit turned into a URL in `routes`.
    pub(crate) fn set_routes(&mut self, routes: DocumentRoutes) {
        self.routes = Some(routes);
    }

    /// The `preference` for this instance's shards (looked up once).
    pub(crate) async fn preference(&mut self) -> Result<Option<String>, SpoutError> {
        if let Some(preference) = &self.preference {
            return Ok(preference.clone());
        }
        let (instance, instances) = self.settings.shard_split;
        let preference = if instances > 1 {
            let shards = shard_count(&self.client, &self.settings.index)
                .await
                .map_err(|e| e.for_spout("cannot read the status index's shards"))?;
            if shards < instances {
                return Err(SpoutError::rejected(format!(
                    "{instances} instances cannot split {} with only {shards} shards",
                    self.settings.index
                )));
            }
            shard_preference(shards, instance, instances)
        } else {
            None
        };
        self.preference = Some(preference.clone());
        Ok(preference)
    }

    /// The filters every query starts with: due by `date`, plus the configured query strings.
    pub(crate) fn due_filters(&self, date: DateTime<Utc>) -> Vec<Value> {
        let mut filters =
            vec![json!({ "range": { "nextFetchDate": { "lte": format_date(date) } } })];
        for query in &self.settings.filter_queries {
            filters.push(json!({ "query_string": { "query": query } }));
        }
        filters
    }

    /// Sort clauses for the URLs of one host.
    pub(crate) fn bucket_sort(&self) -> Vec<Value> {
        self.settings
            .bucket_sort
            .iter()
            .map(|field| json!({ field: "asc" }))
            .collect()
    }

    /// Runs a search on the status index, on this instance's shards.
    pub(crate) async fn search(&mut self, mut body: Value) -> Result<SearchResponse, SpoutError> {
        if let Some(timeout) = self.settings.query_timeout {
            body["timeout"] = json!(format!("{}ms", timeout.as_millis()));
        }
        let preference = self.preference().await?;
        let path = format!("/{}/_search", self.settings.index);
        let mut query: Vec<(&str, &str)> = Vec::new();
        if let Some(preference) = preference.as_deref() {
            query.push(("preference", preference));
        }
        let started = Instant::now();
        let answer = self
            .client
            .search(&path, &query, body)
            .await
            .map_err(|e| e.for_spout("status index query failed"))?;
        metrics::histogram!("squall_es_query_seconds").record(started.elapsed().as_secs_f64());
        debug!(took_ms = answer.took, "status index query");
        Ok(answer)
    }

    /// A hit's URL, with its key (the stored one, or the bucket's, or computed). With routes set, the
    /// hit's `_routing` is recorded for the URL, so that its update goes to this very document.
    pub(crate) fn due_url(
        &self,
        hit: &SearchHit,
        bucket_key: Option<&str>,
        busy: &BusyUrls,
    ) -> Option<DueUrl> {
        let doc = match read_document(hit.source_or_null(), &self.settings.key_field) {
            Ok(doc) => doc,
            Err(error) => {
                debug!(%error, id = %hit.id, "skipping a document");
                return None;
            }
        };
        if busy.contains(doc.url.url.as_str()) {
            return None;
        }
        let key = doc
            .key
            .or_else(|| bucket_key.map(str::to_string))
            .unwrap_or_else(|| {
                partition_key(
                    &doc.url.url,
                    &doc.url.metadata,
                    self.settings.partition_mode,
                )
            });
        if let Some(routes) = &self.routes {
            routes.record_read(doc.url.url.as_str(), Routing::of_hit(hit), doc.created);
        }
        Some(DueUrl::new(doc.url, key))
    }
}
