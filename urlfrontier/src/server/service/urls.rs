//! Handing URLs out, and reading what the frontier holds about them.

use std::time::Duration;

use squall::frontier::{StoredUrl, UrlQuery};
use squall::model::Status as UrlStatus;
use tonic::{Response, Status};

use super::{Answers, DEFAULT_CRAWL, FrontierService, answers, store_status};
use crate::convert::{secs_from_date, url_info};
use crate::proto::url_item::Item;
use crate::proto::{
    CountUrlParams, GetParams, KnownUrlItem, ListUrlParams, Long, UrlInfo, UrlItem,
    UrlStatusRequest, get_params,
};
use crate::server::dispenser::Ask;

impl FrontierService {
    pub(super) async fn get_urls_now(
        &self,
        params: GetParams,
    ) -> Result<Response<Answers<UrlInfo>>, Status> {
        let hold = match params.delay_requestable {
            0 => self.default_hold,
            secs => Duration::from_secs(u64::from(secs)),
        };
        let mut ask = Ask {
            max_queues: params.max_queues as usize,
            max_urls_per_queue: params.max_urls_per_queue as usize,
            key: Some(params.key).filter(|k| !k.is_empty()),
            hold,
        };
        // SetActive is the server's: DEFAULT's flag holds for every crawl, one opened after it too.
        let (_, default) = self.crawl(DEFAULT_CRAWL).await?;
        if !default.dispenser().is_active() {
            return Ok(answers(Vec::new()));
        }
        let crawls = match params.item {
            Some(get_params::Item::AnyCrawlId(_)) => self.crawls.all().await,
            Some(get_params::Item::CrawlId(id)) => vec![self.crawl(&id).await?],
            None => vec![self.crawl("").await?],
        };
        let mut infos = Vec::new();
        for (id, crawl) in crawls {
            let handed = crawl.hand_out(&ask);
            if ask.max_queues > 0 {
                let queues: std::collections::HashSet<&str> =
                    handed.iter().map(|h| h.key.as_str()).collect();
                ask.max_queues = ask.max_queues.saturating_sub(queues.len());
            }
            infos.extend(handed.iter().map(|h| Ok(url_info(&h.url, &h.key, &id))));
            if params.max_queues > 0 && ask.max_queues == 0 {
                break;
            }
        }
        Ok(answers(infos))
    }

    pub(super) async fn url_status_now(
        &self,
        request: UrlStatusRequest,
    ) -> Result<Response<UrlItem>, Status> {
        let (id, crawl) = self.crawl(&request.crawl_id).await?;
        let found = crawl.catalog().lookup(&request.url).await;
        match found.map_err(|e| store_status(&e))? {
            Some(stored) => Ok(Response::new(url_item(&stored, &id))),
            None => Err(Status::not_found(format!(
                "crawl {id} has no URL {:?}",
                request.url
            ))),
        }
    }

    pub(super) async fn list_urls_now(
        &self,
        params: ListUrlParams,
    ) -> Result<Response<Answers<UrlItem>>, Status> {
        let (id, crawl) = self.crawl(&params.crawl_id).await?;
        let query = url_query(params.key, params.filter, params.ignore_case);
        let size = if params.size == 0 {
            100
        } else {
            u64::from(params.size)
        };
        let listed = crawl
            .catalog()
            .list(&query, u64::from(params.start), size)
            .await;
        let listed = listed.map_err(|e| store_status(&e))?;
        Ok(answers(
            listed.iter().map(|stored| Ok(url_item(stored, &id))),
        ))
    }

    pub(super) async fn count_urls_now(
        &self,
        params: CountUrlParams,
    ) -> Result<Response<Long>, Status> {
        let (_, crawl) = self.crawl(&params.crawl_id).await?;
        let query = url_query(params.key, params.filter, params.ignore_case);
        let value = crawl
            .catalog()
            .count(&query)
            .await
            .map_err(|e| store_status(&e))?;
        Ok(Response::new(Long { value }))
    }
}

/// The URLs a ListURLs or CountURLs request covers: empty key and filter mean all.
fn url_query(key: String, filter: Option<String>, ignore_case: Option<bool>) -> UrlQuery {
    UrlQuery {
        key: Some(key).filter(|k| !k.is_empty()),
        contains: filter.filter(|f| !f.trim().is_empty()),
        ignore_case: ignore_case.unwrap_or(false),
        scheduled: None,
    }
}

/// A stored URL as URLFrontier shows it, always as a `known` item (as the reference service
/// answers, and as its client reads) with its metadata and its next fetch date: a URL never
/// fetched is dated when it was found (due since), one never due again 0. Its status is in
/// `squall.status` when it says more than the item does: not for DISCOVERED, nor for FETCHED,
/// which a known item without it means (so that the reference's clients read what the reference
/// gives). (The reference keeps no metadata for a URL never due
/// again; squall keeps it, with the status that says why it is done.) Its `creation_date` is
/// when the frontier first stored it, in seconds (0 where the frontier does not know).
fn url_item(stored: &StoredUrl, crawl: &str) -> UrlItem {
    let mut info = url_info(&stored.url, &stored.key, crawl);
    if !matches!(stored.status, UrlStatus::Discovered | UrlStatus::Fetched) {
        info.metadata.insert(
            crate::convert::STATUS_KEY.to_string(),
            crate::proto::StringList {
                values: vec![stored.status.as_str().to_string()],
            },
        );
    }
    UrlItem {
        id: String::new(),
        item: Some(Item::Known(KnownUrlItem {
            info: Some(info),
            refetchable_from_date: secs_from_date(stored.next_fetch),
        })),
        // The second it began in, as the reference dates it (0: undated).
        creation_date: stored
            .created
            .and_then(|created| u64::try_from(created.timestamp()).ok())
            .unwrap_or(0),
    }
}
