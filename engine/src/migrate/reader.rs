//! Reading the source: one slice per shard (a slice with as many slices as shards is exactly one
//! shard), each sorted by `_seq_no`, which is unique within a shard and part of the documents' state:
//! a new point in time (or scroll) continues where an old one stopped, from a range on `_seq_no`.
//!
//! Slices are read with a point in time shared by all of them and `search_after`; where the engine
//! has no point in time (OpenSearch before 2.4, Elasticsearch before 7.10), with sliced scrolls.
//! Answers are read without building JSON trees: each document's source stays the text it came as.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tracing::warn;

use super::MigrateError;
use crate::client::{EsClient, EsError, Method, RequestBody, Shards, truncate};

/// One document of the source.
#[derive(Debug)]
pub(crate) struct Hit {
    /// Its `_id`.
    pub id: String,
    /// Its `_source`, as the engine gave it.
    pub source: Box<RawValue>,
}

/// How the source is read.
pub(crate) enum Access {
    /// A point in time shared by the slices.
    Pit(Arc<SharedPit>),
    /// A scroll per slice.
    Scroll,
}

impl Access {
    /// A point in time on `source`, or scrolls when the engine has none (said in a log line) or
    /// `point_in_time` is false.
    pub async fn open(
        client: &EsClient,
        source: &str,
        keep_alive: &str,
        point_in_time: bool,
    ) -> Result<Self, MigrateError> {
        if !point_in_time {
            return Ok(Access::Scroll);
        }
        match client.open_point_in_time(source, keep_alive).await {
            Ok(id) => Ok(Access::Pit(Arc::new(SharedPit { id: Mutex::new(id) }))),
            Err(error) if matches!(error.status(), Some(400 | 404 | 405)) => {
                warn!(%error, "no point in time on {source}: reading it with sliced scrolls");
                Ok(Access::Scroll)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Closes the point in time; errors are ignored (it expires by itself).
    pub async fn close(&self, client: &EsClient) {
        if let Access::Pit(pit) = self {
            let id = pit.id.lock().await.clone();
            let _ = client.close_point_in_time(&id).await;
        }
    }
}

/// The point in time the slices share; reopened once when it expired.
pub(crate) struct SharedPit {
    id: Mutex<String>,
}

/// A search answer, read with the documents' sources left as text.
#[derive(Deserialize)]
struct Answer {
    hits: Option<AnswerHits>,
    #[serde(rename = "_shards", default)]
    shards: Shards,
    #[serde(default)]
    timed_out: bool,
    #[serde(default)]
    pit_id: Option<String>,
    #[serde(rename = "_scroll_id", default)]
    scroll_id: Option<String>,
}

#[derive(Deserialize)]
struct AnswerHits {
    #[serde(default)]
    hits: Vec<AnswerHit>,
}

#[derive(Deserialize)]
struct AnswerHit {
    #[serde(rename = "_id")]
    id: String,
    #[serde(rename = "_source", default)]
    source: Option<Box<RawValue>>,
    #[serde(default)]
    sort: Option<Vec<Value>>,
}

/// A page of one slice: its documents and the `_seq_no` of the last.
#[derive(Debug)]
pub(crate) struct SlicePage {
    pub hits: Vec<Hit>,
    pub last_seq_no: i64,
}

/// Reads one slice, page after page.
pub(crate) struct SliceReader {
    client: EsClient,
    source: String,
    slice: u32,
    slices: u32,
    batch: usize,
    keep_alive: String,
    pit: Option<Arc<SharedPit>>,
    /// The documents after this `_seq_no` are read (a range, for the first search).
    start_after: Option<i64>,
    /// Where the current point in time (or scroll) continues.
    search_after: Option<Vec<Value>>,
    scroll_id: Option<String>,
    exhausted: bool,
}

impl SliceReader {
    /// A reader of slice `slice` of `slices` of `source`, after `after` (`None`: from the start).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        client: EsClient,
        access: &Access,
        source: &str,
        slice: u32,
        slices: u32,
        batch: usize,
        keep_alive: &str,
        after: Option<i64>,
    ) -> Self {
        SliceReader {
            client,
            source: source.to_string(),
            slice,
            slices,
            batch,
            keep_alive: keep_alive.to_string(),
            pit: match access {
                Access::Pit(pit) => Some(pit.clone()),
                Access::Scroll => None,
            },
            start_after: after,
            search_after: None,
            scroll_id: None,
            exhausted: false,
        }
    }

    /// The next page; `None` at the end of the slice.
    pub async fn next_page(&mut self) -> Result<Option<SlicePage>, MigrateError> {
        if self.exhausted {
            return Ok(None);
        }
        let answer = match self.pit.clone() {
            Some(pit) => self.search_pit(&pit).await?,
            None => self.search_scroll().await?,
        };
        if answer.shards.failed > 0 || answer.timed_out {
            return Err(MigrateError::Unexpected(format!(
                "a search of the source was incomplete ({} shards failed): {}",
                answer.shards.failed, answer.shards.failures
            )));
        }
        let Some(hits) = answer.hits else {
            return Err(MigrateError::Unexpected(
                "a search of the source answered without hits".to_string(),
            ));
        };
        let hits = hits.hits;
        self.exhausted = hits.len() < self.batch;
        let Some(last) = hits.last() else {
            return Ok(None);
        };
        let sort = last.sort.clone().unwrap_or_default();
        let Some(last_seq_no) = sort.first().and_then(Value::as_i64) else {
            return Err(MigrateError::Unexpected(format!(
                "a search sorted by _seq_no answered sort values {sort:?}"
            )));
        };
        self.search_after = Some(sort);
        self.start_after = Some(last_seq_no);
        let hits = hits
            .into_iter()
            .map(|hit| match hit.source {
                Some(source) => Ok(Hit { id: hit.id, source }),
                None => Err(MigrateError::Unexpected(format!(
                    "document {} has no _source (is _source disabled on the source index?)",
                    hit.id
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(SlicePage { hits, last_seq_no }))
    }

    /// The search body common to both ways of reading: the slice, sorted by `_seq_no`, after the
    /// start position.
    fn body(&self) -> Value {
        let mut body = json!({
            "size": self.batch,
            "sort": [{ "_seq_no": "asc" }]
        });
        if self.slices > 1 {
            body["slice"] = json!({ "id": self.slice, "max": self.slices });
        }
        if let Some(after) = self.start_after {
            body["query"] = json!({ "range": { "_seq_no": { "gt": after } } });
        }
        body
    }

    /// The next page with the point in time; when it expired (a long pause), a new one is opened
    /// (once for all slices) and reading goes on from the last `_seq_no`.
    async fn search_pit(&mut self, pit: &SharedPit) -> Result<Answer, MigrateError> {
        let mut reopened = false;
        loop {
            let id = pit.id.lock().await.clone();
            let mut body = self.body();
            body["pit"] = json!({ "id": id, "keep_alive": self.keep_alive });
            // Not allowed in a scroll.
            body["track_total_hits"] = json!(false);
            if let Some(after) = &self.search_after {
                body["search_after"] = json!(after);
            }
            match search(&self.client, "/_search", &[], body).await {
                Ok(answer) => {
                    // The id may change from page to page; the slices share the latest.
                    if let Some(new) = &answer.pit_id
                        && *new != id
                    {
                        *pit.id.lock().await = new.clone();
                    }
                    return Ok(answer);
                }
                Err(error) if error.status() == Some(404) && !reopened => {
                    reopened = true;
                    self.search_after = None;
                    let mut current = pit.id.lock().await;
                    if *current == id {
                        *current = self
                            .client
                            .open_point_in_time(&self.source, &self.keep_alive)
                            .await?;
                    }
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// The next page of the slice's scroll (started on the first call; started again from the
    /// last `_seq_no` when it expired).
    async fn search_scroll(&mut self) -> Result<Answer, MigrateError> {
        if let Some(id) = self.scroll_id.take() {
            let body = json!({ "scroll": self.keep_alive, "scroll_id": id });
            match search(&self.client, "/_search/scroll", &[], body).await {
                Ok(answer) => {
                    self.scroll_id = answer.scroll_id.clone();
                    return Ok(answer);
                }
                Err(error) if error.status() == Some(404) => {}
                Err(error) => return Err(error.into()),
            }
        }
        let path = format!("/{}/_search", self.source);
        let answer = search(
            &self.client,
            &path,
            &[("scroll", &self.keep_alive)],
            self.body(),
        )
        .await?;
        self.scroll_id = answer.scroll_id.clone();
        Ok(answer)
    }

    /// Releases the slice's scroll, if any; errors are ignored (it expires by itself).
    pub async fn close(&mut self) {
        if let Some(id) = self.scroll_id.take() {
            let _ = self
                .client
                .request(
                    Method::Delete,
                    "/_search/scroll",
                    &[],
                    Some(RequestBody::Json(json!({ "scroll_id": [id] }))),
                )
                .await;
        }
    }
}

/// A search of the source, its answer read with the sources left as text.
async fn search(
    client: &EsClient,
    path: &str,
    query: &[(&str, &str)],
    body: Value,
) -> Result<Answer, EsError> {
    let text = client
        .request_text(Method::Post, path, query, Some(RequestBody::Json(body)))
        .await?;
    let answer: Answer = serde_json::from_str(&text).map_err(|e| EsError::Decode {
        path: path.to_string(),
        message: format!("search answer: {e} in {}", truncate(&text, 200)),
    })?;
    Ok(answer)
}
