//! Reading the source: a point in time with `search_after`, sorted by `url` then `_seq_no` (content,
//! not Lucene doc ids, so a new point in time continues where an old one stopped; OpenSearch 2 has no
//! `_shard_doc`), then a scroll over the rare documents without a `url`.

use serde_json::{Value, json};

use super::MigrateError;
use super::checkpoint::Position;
use crate::client::{EsClient, EsError, Method, RequestBody, SearchHit, SearchResponse, truncate};

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
            let page = match &self.stage {
                Stage::Sorted { .. } => self.next_sorted().await?,
                Stage::WithoutUrl { .. } => self.next_without_url().await?,
                Stage::Done => return Ok(None),
            };
            if let Some(page) = page {
                self.read += page.hits.len() as u64;
                return Ok(Some(Page {
                    read: self.read,
                    ..page
                }));
            }
        }
    }

    /// The next page sorted by URL; `None` when that stage is over (the stage moves on then).
    async fn next_sorted(&mut self) -> Result<Option<Page>, MigrateError> {
        let Stage::Sorted {
            search_after,
            exhausted,
        } = &self.stage
        else {
            return Ok(None);
        };
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
            return Ok(None);
        }
        let after = search_after.clone();
        let (hits, last_sort) = self.search_sorted(after).await?;
        if let Stage::Sorted {
            search_after,
            exhausted,
        } = &mut self.stage
        {
            *exhausted = hits.len() < self.batch;
            if !hits.is_empty() {
                *search_after = last_sort.clone();
            }
        }
        if hits.is_empty() {
            return Ok(None);
        }
        let position = Position::Sorted {
            search_after: last_sort,
        };
        Ok(Some(Page {
            hits,
            position,
            read: 0,
        }))
    }

    /// The next page of the documents without a `url` (a scroll); `None` when they are done (the
    /// stage is then over).
    async fn next_without_url(&mut self) -> Result<Option<Page>, MigrateError> {
        let Stage::WithoutUrl {
            documents_before,
            scroll_id,
            started,
        } = &self.stage
        else {
            return Ok(None);
        };
        let documents_before = *documents_before;
        let answer = match (started, scroll_id.clone()) {
            (false, _) => Some(self.start_scroll().await?),
            (true, Some(id)) => Some(self.continue_scroll(id).await?),
            (true, None) => None,
        };
        let Some(answer) = answer else {
            self.stage = Stage::Done;
            return Ok(None);
        };
        check_shards(&answer)?;
        let hits = page_hits(answer.hits.hits)?;
        if hits.is_empty() {
            if let Some(id) = answer.scroll_id {
                self.clear_scroll(&id).await;
            }
            self.stage = Stage::Done;
            return Ok(None);
        }
        self.stage = Stage::WithoutUrl {
            documents_before,
            scroll_id: answer.scroll_id,
            started: true,
        };
        Ok(Some(Page {
            hits,
            position: Position::WithoutUrl { documents_before },
            read: 0,
        }))
    }

    async fn start_scroll(&self) -> Result<SearchResponse, MigrateError> {
        let body = json!({
            "size": self.batch,
            "query": { "bool": { "must_not": { "exists": { "field": "url" } } } },
            "sort": ["_doc"]
        });
        let path = format!("/{}/_search", self.source);
        Ok(search(self.client, &path, &[("scroll", self.keep_alive)], body).await?)
    }

    async fn continue_scroll(&self, id: String) -> Result<SearchResponse, MigrateError> {
        let body = json!({ "scroll": self.keep_alive, "scroll_id": id });
        Ok(search(self.client, "/_search/scroll", &[], body).await?)
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
            let answer = match search(self.client, "/_search", &[], body).await {
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
            if let Some(id) = &answer.pit_id {
                self.pit = Some(id.clone());
            }
            let last_sort = answer.hits.hits.last().and_then(|hit| hit.sort.clone());
            let hits = page_hits(answer.hits.hits)?;
            if !hits.is_empty() && last_sort.is_none() {
                return Err(MigrateError::Unexpected(
                    "a sorted search answered without sort values".to_string(),
                ));
            }
            return Ok((hits, last_sort));
        }
    }
}

/// A search of the source; an answer without hits is an error (not the end of the source).
async fn search(
    client: &EsClient,
    path: &str,
    query: &[(&str, &str)],
    body: Value,
) -> Result<SearchResponse, EsError> {
    let answer = client
        .request(Method::Post, path, query, Some(RequestBody::Json(body)))
        .await?;
    if answer["hits"]["hits"].is_array() {
        return SearchResponse::parse(answer, path);
    }
    Err(EsError::Decode {
        path: path.to_string(),
        message: format!(
            "no hits in a search answer: {}",
            truncate(&answer.to_string(), 200)
        ),
    })
}

/// Fails when some shards did not answer (a partial page would skip documents).
fn check_shards(answer: &SearchResponse) -> Result<(), MigrateError> {
    if answer.is_partial() {
        return Err(MigrateError::Unexpected(format!(
            "a search of the source was incomplete ({} shards failed): {}",
            answer.shards.failed, answer.shards.failures
        )));
    }
    Ok(())
}

/// The documents of a page: each hit's id and source (a hit without a source is an error: the
/// copy would lose the document).
fn page_hits(hits: Vec<SearchHit>) -> Result<Vec<Hit>, MigrateError> {
    hits.into_iter()
        .map(|hit| match hit.source {
            Some(source) => Ok(Hit { id: hit.id, source }),
            None => Err(MigrateError::Unexpected(format!(
                "document {} has no _source (is _source disabled on the source index?)",
                hit.id
            ))),
        })
        .collect()
}
