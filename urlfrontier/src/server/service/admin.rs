//! Queues, crawls, stats and the rules clients set on queues.

use std::time::{Duration, SystemTime};

use squall::frontier::UrlQuery;
use tonic::{Response, Status};

use super::{FrontierService, crawl_status, store_status};
use crate::proto::{
    BlockQueueParams, CrawlLimitParams, DeleteCrawlMessage, Empty, Long, Pagination,
    QueueDelayParams, QueueList, QueueWithinCrawlParams, Stats,
};

/// The count in `Stats.counts` that says the crawl's whole frontier is idle (1) or not (0):
/// nothing due, buffered, handed out, or failed and waiting to be read again.
pub const IDLE_COUNT: &str = "squall.idle";

impl FrontierService {
    pub(super) async fn delete_crawl_now(
        &self,
        request: DeleteCrawlMessage,
    ) -> Result<Response<Long>, Status> {
        let (id, crawl) = self.crawl(&request.value).await?;
        crawl.dispenser().clear();
        let deleted = crawl
            .catalog()
            .delete_all()
            .await
            .map_err(|e| store_status(&e))?;
        self.crawls.close(&id).await;
        self.crawls
            .remove_frontier(&id)
            .await
            .map_err(crawl_status)?;
        Ok(Response::new(Long { value: deleted }))
    }

    pub(super) async fn list_queues_now(
        &self,
        request: Pagination,
    ) -> Result<Response<QueueList>, Status> {
        let (id, crawl) = self.crawl(&request.crawl_id).await?;
        let size = if request.size == 0 { 100 } else { request.size };
        let (values, total) = if request.include_inactive {
            let page = crawl
                .catalog()
                .queues(u64::from(request.start), u64::from(size))
                .await;
            let page = page.map_err(|e| store_status(&e))?;
            (page.keys, page.total)
        } else {
            let active = crawl.dispenser().active_queues();
            let total = active.len() as u64;
            let page = active
                .into_iter()
                .skip(request.start as usize)
                .take(size as usize);
            (page.collect(), total)
        };
        Ok(Response::new(QueueList {
            size: values.len() as u32,
            values,
            total,
            start: request.start,
            crawl_id: id,
        }))
    }

    pub(super) async fn get_stats_now(
        &self,
        request: QueueWithinCrawlParams,
    ) -> Result<Response<Stats>, Status> {
        let (id, crawl) = self.crawl(&request.crawl_id).await?;
        let key = Some(request.key).filter(|k| !k.is_empty());
        let query = UrlQuery {
            key: key.clone(),
            ..UrlQuery::default()
        };
        let catalog = crawl.catalog();
        let size = catalog.count(&query).await.map_err(|e| store_status(&e))?;
        let mut counts = std::collections::HashMap::new();
        let number_of_queues = match &key {
            Some(_) => 1,
            None => {
                for (status, count) in catalog
                    .count_by_status()
                    .await
                    .map_err(|e| store_status(&e))?
                {
                    counts.insert(status.as_str().to_string(), count);
                }
                catalog
                    .queues(0, 0)
                    .await
                    .map_err(|e| store_status(&e))?
                    .total
            }
        };
        let (in_process, buffered) = {
            let dispenser = crawl.dispenser();
            (dispenser.in_process(key.as_deref()), dispenser.buffered())
        };
        counts.insert("squall.buffered".to_string(), buffered as u64);
        counts.insert(IDLE_COUNT.to_string(), u64::from(crawl.idle()));
        Ok(Response::new(Stats {
            size,
            in_process: u32::try_from(in_process).unwrap_or(u32::MAX),
            counts,
            number_of_queues,
            crawl_id: id,
        }))
    }

    pub(super) async fn delete_queue_now(
        &self,
        request: QueueWithinCrawlParams,
    ) -> Result<Response<Long>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        if request.key.is_empty() {
            return Err(Status::invalid_argument("DeleteQueue needs a queue key"));
        }
        crawl.dispenser().remove_queue(&request.key);
        let deleted = crawl.catalog().delete_queue(&request.key).await;
        let value = deleted.map_err(|e| store_status(&e))?;
        Ok(Response::new(Long { value }))
    }

    pub(super) async fn block_queue_now(
        &self,
        request: BlockQueueParams,
    ) -> Result<Response<Empty>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        let until = match request.time {
            0 => None,
            secs => Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs)),
        };
        crawl.dispenser().block(&request.key, until);
        Ok(Response::new(Empty {}))
    }

    pub(super) async fn set_delay_now(
        &self,
        request: QueueDelayParams,
    ) -> Result<Response<Empty>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        let delay = Duration::from_secs(u64::from(request.delay_requestable));
        let key = Some(request.key.as_str()).filter(|k| !k.is_empty());
        crawl.dispenser().set_delay(key, delay);
        Ok(Response::new(Empty {}))
    }

    pub(super) async fn set_crawl_limit_now(
        &self,
        request: CrawlLimitParams,
    ) -> Result<Response<Empty>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        if request.key.is_empty() {
            return Err(Status::invalid_argument("SetCrawlLimit needs a queue key"));
        }
        crawl
            .dispenser()
            .set_limit(&request.key, u64::from(request.limit));
        Ok(Response::new(Empty {}))
    }
}
