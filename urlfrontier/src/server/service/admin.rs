//! Queues, crawls, stats and the rules clients set on queues.

use std::collections::BTreeMap;
use std::time::SystemTime;

use squall::frontier::UrlQuery;
use tonic::{Response, Status};

use super::{FrontierService, crawl_status, store_status};
use crate::proto::{
    BlockQueueParams, CrawlLimitParams, DeleteCrawlMessage, Empty, Long, Pagination,
    PurgeUrlParams, QueueDelayParams, QueueList, QueueWithinCrawlParams, Stats,
};
use crate::server::dispenser::LATEST_BLOCK_SECS;

pub use crate::IDLE_COUNT;

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
        drop(crawl);
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
            let active = crawl.dispenser().active_queues(SystemTime::now());
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

    /// As the reference service counts: `size` the URLs due now or later (in process too),
    /// `numberOfQueues` the queues holding any URL, `active_queues` those holding URLs due now or
    /// later, `completed` the URLs never due again; then, unless the service answers as the
    /// reference alone, squall's own counts (`squall.*`: URLs by status, buffered, and whether the
    /// crawl is idle).
    pub(super) async fn get_stats_now(
        &self,
        request: QueueWithinCrawlParams,
    ) -> Result<Response<Stats>, Status> {
        let (id, crawl) = self.crawl(&request.crawl_id).await?;
        let key = Some(request.key).filter(|k| !k.is_empty());
        let of = |scheduled: Option<bool>| UrlQuery {
            key: key.clone(),
            scheduled,
            ..UrlQuery::default()
        };
        let catalog = crawl.catalog();
        let failed = |e: squall::frontier::StoreError| store_status(&e);
        let size = catalog.count(&of(Some(true))).await.map_err(failed)?;
        let completed = catalog.count(&of(Some(false))).await.map_err(failed)?;
        let active_queues = catalog
            .count_queues(&of(Some(true)))
            .await
            .map_err(failed)?;
        let number_of_queues = catalog.count_queues(&of(None)).await.map_err(failed)?;
        let mut counts = BTreeMap::from([
            ("active_queues".to_string(), active_queues),
            ("completed".to_string(), completed),
        ]);
        if self.squall_counts && key.is_none() {
            for (status, count) in catalog.count_by_status().await.map_err(failed)? {
                counts.insert(format!("squall.status.{}", status.as_str()), count);
            }
        }
        let (in_process, buffered) = {
            let dispenser = crawl.dispenser();
            (dispenser.in_process(key.as_deref()), dispenser.buffered())
        };
        if self.squall_counts {
            counts.insert("squall.buffered".to_string(), buffered as u64);
            counts.insert(IDLE_COUNT.to_string(), u64::from(crawl.idle()));
        }
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

    /// PurgeURLs: the URLs of the crawl (or of one queue) first stored more than `days` days ago
    /// go, in any status; the queues stay. The URLs the server buffered for those queues are let
    /// go too, so that none of the purged is handed out (what is left is read again).
    pub(super) async fn purge_urls_now(
        &self,
        request: PurgeUrlParams,
    ) -> Result<Response<Long>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        if !crawl.catalog().keeps_creation_dates() {
            return Err(Status::unimplemented(
                "PurgeURLs: this server's frontier keeps no creation dates",
            ));
        }
        let key = Some(request.key.as_str()).filter(|k| !k.is_empty());
        // No URL is dated before the epoch: a cutoff before it (u32::MAX days is 11 million years)
        // purges nothing, and is sent as the epoch, a date every engine reads.
        let epoch = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        let cutoff = chrono::Utc::now()
            .checked_sub_signed(chrono::TimeDelta::days(i64::from(request.days)))
            .map_or(epoch, |cutoff| cutoff.max(epoch));
        let purged = crawl.catalog().purge_created_before(key, cutoff).await;
        crawl.dispenser().drop_buffered(key);
        let value = purged.map_err(|e| store_status(&e))?;
        Ok(Response::new(Long { value }))
    }

    pub(super) async fn block_queue_now(
        &self,
        request: BlockQueueParams,
    ) -> Result<Response<Empty>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        // 0 unblocks; a time past the year 9999 blocks until then.
        let until = Some(request.time)
            .filter(|&secs| secs > 0)
            .map(|secs| secs.min(LATEST_BLOCK_SECS));
        let change = crawl.change_queue_rules(&request.key, |rules| {
            rules.blocked_until_secs = until;
        });
        change.await.map_err(|e| store_status(&e))?;
        Ok(Response::new(Empty {}))
    }

    pub(super) async fn set_delay_now(
        &self,
        request: QueueDelayParams,
    ) -> Result<Response<Empty>, Status> {
        let (_, crawl) = self.crawl(&request.crawl_id).await?;
        let delay = u64::from(request.delay_requestable);
        let changed = match Some(request.key.as_str()).filter(|k| !k.is_empty()) {
            Some(key) => {
                let change = crawl.change_queue_rules(key, |rules| rules.delay_secs = Some(delay));
                change.await
            }
            None => {
                let change = crawl.change_crawl_rules(|rules| {
                    rules.default_delay_secs = Some(delay);
                });
                change.await
            }
        };
        changed.map_err(|e| store_status(&e))?;
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
        let limit = u64::from(request.limit);
        let change = crawl.change_queue_rules(&request.key, |rules| rules.limit = Some(limit));
        change.await.map_err(|e| store_status(&e))?;
        Ok(Response::new(Empty {}))
    }
}
