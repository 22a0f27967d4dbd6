//! Reading the source: a point in time with `search_after`, sorted by `url` then `_seq_no` (content,
//! not Lucene doc ids, so a new point in time continues where an old one stopped; OpenSearch 2 has no
//! `_shard_doc`), then a scroll over the rare documents without a `url`.

use elasticsearch::http::Method;
use serde_json::{Value, json};

use super::MigrateError;
use super::checkpoint::Position;
use crate::client::{EsClient, RequestBody};

/// One document of the source.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    /// Its `_id`.
    pub id: String,
    /// Its `_source`.
    pub source: Value,
}

/// A page of documents, and where reading stands once it is written.
#[derive(Debug)]
pub(crate) struct Page {
    pub hits: Vec<Hit>,
    pub position: Position,
    /// Documents read up to and including this page (over all runs).
    pub read: u64,
}

enum Stage {
    Sorted {
        search_after: Option<Vec<Value>>,
        exhausted: bool,
    },
    WithoutUrl {
        documents_before: u64,
        scroll_id: Option<String>,
        started: bool,
    },
    Done,
}

pub(crate) struct Reader<'a> {
    client: &'a EsClient,
    source: &'a str,
    batch: usize,
    keep_alive: &'a str,
    stage: Stage,
    pit: Option<String>,
    /// Documents read so far (over all runs, counted from the checkpoint).
    read: u64,
    without_url: u64,
}

impl<'a> Reader<'a> {
    /// A reader starting at `position`, with `read` documents done before; `without_url` is how many
    /// documents of the source have no `url` (0 skips the scroll).
    pub fn new(
        client: &'a EsClient,
        source: &'a str,
        batch: usize,
        keep_alive: &'a str,
        position: Position,
        read: u64,
        without_url: u64,
    ) -> Self {
        let (stage, read) = match position {
            Position::Sorted { search_after } => (
                Stage::Sorted {
                    search_after,
                    exhausted: false,
                },
                read,
            ),
            Position::WithoutUrl { documents_before } => (
                Stage::WithoutUrl {
                    documents_before,
                    scroll_id: None,
                    started: false,
                },
                documents_before,
            ),
        };
        Reader {
            client,
            source,
            batch,
            keep_alive,
            stage,
            pit: None,
            read,
            without_url,
        }
    }

    /// The next page; `None` at the end.
    pub async fn next_page(&mut self) -> Result<Option<Page>, MigrateError> {
        loop {
            match &mut self.stage {
                Stage::Sorted {
                    search_after,
                    exhausted,
                } => {
                    if *exhausted {
                        self.close_pit().await;
                        self.stage = if self.without_url > 0 {
                            Stage::WithoutUrl {
                                documents_before: self.read,
                                scroll_id: None,
                                started: false,
                            }
                        } else {
                            Stage::Done
                        };
                        continue;
                    }
                    let after = search_after.clone();
                    let (hits, last_sort) = self.search_sorted(after).await?;
                    if hits.len() < self.batch
                        && let Stage::Sorted { exhausted, .. } = &mut self.stage
                    {
                        *exhausted = true;
                    }
                    if hits.is_empty() {
                        continue;
                    }
                    if let Stage::Sorted { search_after, .. } = &mut self.stage {
                        *search_after = last_sort.clone();
                    }
                    self.read += hits.len() as u64;
                    return Ok(Some(Page {
                        hits,
                        position: Position::Sorted {
                            search_after: last_sort,
                        },
                        read: self.read,
                    }));
                }
                Stage::WithoutUrl {
                    documents_before,
                    scroll_id,
                    started,
                } => {
                    let documents_before = *documents_before;
                    let answer = if *started {
                        match scroll_id.clone() {
                            Some(id) => Some(
                                self.client
                                    .request(
                                        Method::Post,
                                        "/_search/scroll",
                                        &[],
                                        Some(RequestBody::Json(
                                            json!({ "scroll": self.keep_alive, "scroll_id": id }),
                                        )),
                                    )
                                    .await?,
                            ),
                            None => None,
                        }
                    } else {
                        *started = true;
                        let body = json!({
                            "size": self.batch,
                            "query": { "bool": { "must_not": { "exists": { "field": "url" } } } },
                            "sort": ["_doc"]
                        });
                        Some(
                            self.client
                                .request(
                                    Method::Post,
                                    &format!("/{}/_search", self.source),
                                    &[("scroll", self.keep_alive)],
                                    Some(RequestBody::Json(body)),
                                )
                                .await?,
                        )
                    };
                    let Some(answer) = answer else {
                        self.stage = Stage::Done;
                        continue;
                    };
                    check_shards(&answer)?;
                    let new_id = answer["_scroll_id"].as_str().map(str::to_string);
                    let hits = parse_hits(&answer)?;
                    if hits.is_empty() {
                        if let Some(id) = new_id {
                            self.clear_scroll(&id).await;
                        }
                        self.stage = Stage::Done;
                        continue;
                    }
                    if let Stage::WithoutUrl { scroll_id, .. } = &mut self.stage {
                        *scroll_id = new_id;
                    }
                    self.read += hits.len() as u64;
                    return Ok(Some(Page {
                        hits,
                        position: Position::WithoutUrl { documents_before },
                        read: self.read,
                    }));
                }
                Stage::Done => return Ok(None),
            }
        }
    }

    /// Releases what the engine keeps for this reader (point in time, scroll); errors are ignored,
    /// both expire by themselves.
    pub async fn close(&mut self) {
        self.close_pit().await;
        if let Stage::WithoutUrl {
            scroll_id: Some(id),
            ..
        } = &self.stage
        {
            let id = id.clone();
            self.clear_scroll(&id).await;
        }
        self.stage = Stage::Done;
    }

    async fn close_pit(&mut self) {
        if let Some(pit) = self.pit.take() {
            let _ = self.client.close_point_in_time(&pit).await;
        }
    }

    async fn clear_scroll(&self, id: &str) {
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

    async fn search_sorted(
        &mut self,
        after: Option<Vec<Value>>,
    ) -> Result<(Vec<Hit>, Option<Vec<Value>>), MigrateError> {
        let mut reopened = false;
        loop {
            let pit = match &self.pit {
                Some(pit) => pit.clone(),
                None => {
                    let pit = self
                        .client
                        .open_point_in_time(self.source, self.keep_alive)
                        .await?;
                    self.pit = Some(pit.clone());
                    pit
                }
            };
            let mut body = json!({
                "size": self.batch,
                "query": { "exists": { "field": "url" } },
                "pit": { "id": pit, "keep_alive": self.keep_alive },
                "sort": [{ "url": "asc" }, { "_seq_no": "asc" }],
                "track_total_hits": false
            });
            if let Some(after) = &after {
                body["search_after"] = json!(after);
            }
            let answer = match self
                .client
                .request(Method::Post, "/_search", &[], Some(RequestBody::Json(body)))
                .await
            {
                Ok(answer) => answer,
                // The point in time expired (a long pause): open a new one and go on from the same
                // sort values, which are document content.
                Err(error) if error.status() == Some(404) && !reopened => {
                    reopened = true;
                    self.pit = None;
                    continue;
                }
                Err(error) => return Err(error.into()),
            };
            check_shards(&answer)?;
            if let Some(id) = answer["pit_id"].as_str() {
                self.pit = Some(id.to_string());
            }
            let hits = parse_hits(&answer)?;
            let last_sort = answer["hits"]["hits"]
                .as_array()
                .and_then(|hits| hits.last())
                .and_then(|hit| hit["sort"].as_array())
                .cloned();
            if !hits.is_empty() && last_sort.is_none() {
                return Err(MigrateError::Unexpected(
                    "a sorted search answered without sort values".to_string(),
                ));
            }
            return Ok((hits, last_sort));
        }
    }
}

/// Fails when some shards did not answer (a partial page would skip documents).
fn check_shards(answer: &Value) -> Result<(), MigrateError> {
    let failed = answer["_shards"]["failed"].as_u64().unwrap_or(0);
    if failed > 0 || answer["timed_out"].as_bool() == Some(true) {
        return Err(MigrateError::Unexpected(format!(
            "a search of the source was incomplete ({failed} shards failed): {}",
            answer["_shards"]["failures"]
        )));
    }
    Ok(())
}

fn parse_hits(answer: &Value) -> Result<Vec<Hit>, MigrateError> {
    let Some(hits) = answer["hits"]["hits"].as_array() else {
        return Err(MigrateError::Unexpected(format!(
            "no hits in a search answer: {}",
            answer.to_string().chars().take(200).collect::<String>()
        )));
    };
    hits.iter()
        .map(|hit| {
            let id = hit["_id"]
                .as_str()
                .ok_or_else(|| MigrateError::Unexpected("a hit without _id".to_string()))?;
            let source = hit.get("_source").cloned().ok_or_else(|| {
                MigrateError::Unexpected(format!(
                    "document {id} has no _source (is _source disabled on the source index?)"
                ))
            })?;
            Ok(Hit {
                id: id.to_string(),
                source,
            })
        })
        .collect()
}
