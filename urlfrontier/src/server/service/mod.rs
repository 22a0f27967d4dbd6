//! The URLFrontier gRPC service: each method maps onto a crawl's dispenser, status store or
//! catalog. `SetLogLevel` changes the process's log filter through the [`LogLevels`] hook the
//! program gave (the `squall-frontier` binary gives one); without one it answers
//! FAILED_PRECONDITION.

mod admin;
pub use admin::IDLE_COUNT;
mod chunks;
mod discovered;
mod put;
mod urls;

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use squall::model::PartitionMode;
use tonic::{Request, Response, Status};

use super::crawl::Crawl;
use super::crawls::{CrawlError, Crawls, DEFAULT_CRAWL};
use crate::proto::url_frontier_server::UrlFrontier;
use crate::proto::{
    Active, BlockQueueParams, Boolean, CountUrlParams, CrawlLimitParams, DeleteCrawlMessage, Empty,
    GetParams, ListUrlParams, Local, LogLevelParams, Long, Pagination, QueueDelayParams, QueueList,
    QueueWithinCrawlParams, Stats, StringList, UrlInfo, UrlItem, UrlStatusRequest,
    log_level_params,
};

/// Sets the log level of one target (a module path such as `squall_urlfrontier`, the `package` of
/// a `SetLogLevel` call) in the process's log filter; an error names why it could not.
pub type LogLevels = Arc<dyn Fn(&str, tracing::Level) -> Result<(), String> + Send + Sync>;

/// A stream of answers.
pub type Answers<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// The answer streaming `items`, all known before it starts.
fn answers<T: Send + 'static>(
    items: impl IntoIterator<Item = Result<T, Status>>,
) -> Response<Answers<T>> {
    let items: Vec<_> = items.into_iter().collect();
    Response::new(Box::pin(futures::stream::iter(items)))
}

/// The service over squall's crawls.
#[derive(Clone, derive_more::Debug)]
pub struct FrontierService {
    #[debug(skip)]
    crawls: Arc<Crawls>,
    partition: PartitionMode,
    /// How long a URL handed out stays the client's when it asks for 0 (the service's choice).
    default_hold: std::time::Duration,
    /// This server's address, for `ListNodes`.
    node: String,
    /// How `SetLogLevel` changes the log filter, if the program allows it.
    #[debug("{}", log_levels.is_some())]
    log_levels: Option<LogLevels>,
    /// Whether `GetStats` adds squall's own counts (`squall.*`) to the reference's.
    squall_counts: bool,
}

impl FrontierService {
    /// A service over `crawls`; URLs put without a key get one by `partition`; `node` is the
    /// address clients reach it at.
    pub fn new(crawls: Arc<Crawls>, partition: PartitionMode, node: String) -> Self {
        FrontierService {
            crawls,
            partition,
            default_hold: std::time::Duration::from_secs(30),
            node,
            log_levels: None,
            squall_counts: true,
        }
    }

    /// The same service, with `GetStats` adding squall's own counts (`squall.*`, the default) or
    /// answering with the reference service's counts alone (`false`).
    pub fn with_squall_counts(mut self, squall_counts: bool) -> Self {
        self.squall_counts = squall_counts;
        self
    }

    /// The same service, with `SetLogLevel` changing the log filter through `log_levels`.
    pub fn with_log_levels(mut self, log_levels: Option<LogLevels>) -> Self {
        self.log_levels = log_levels;
        self
    }

    /// The crawls served.
    pub fn crawls(&self) -> &Arc<Crawls> {
        &self.crawls
    }

    /// The crawl a request names (empty: `DEFAULT`), opened if need be, with its ID.
    async fn crawl(&self, requested: &str) -> Result<(String, Arc<Crawl>), Status> {
        let id = crawl_id(requested).to_string();
        let crawl = self.crawls.get_or_open(&id).await.map_err(crawl_status)?;
        Ok((id, crawl))
    }
}

/// The tracing level of a `SetLogLevel` call.
fn log_level(level: log_level_params::Level) -> Result<tracing::Level, Status> {
    use log_level_params::Level;
    Ok(match level {
        Level::Trace => tracing::Level::TRACE,
        Level::Debug => tracing::Level::DEBUG,
        Level::Info => tracing::Level::INFO,
        Level::Warn => tracing::Level::WARN,
        Level::Error => tracing::Level::ERROR,
    })
}

/// The crawl a request names: empty means `DEFAULT`.
fn crawl_id(id: &str) -> &str {
    if id.is_empty() { DEFAULT_CRAWL } else { id }
}

fn crawl_status(error: CrawlError) -> Status {
    match error {
        CrawlError::BadId(_) => Status::invalid_argument(error.to_string()),
        CrawlError::Open { .. } => Status::unavailable(error.to_string()),
    }
}

fn store_status(error: &squall::frontier::StoreError) -> Status {
    if error.is_retryable() {
        Status::unavailable(error.message().to_string())
    } else {
        Status::internal(error.message().to_string())
    }
}

#[tonic::async_trait]
impl UrlFrontier for FrontierService {
    async fn list_nodes(&self, _: Request<Empty>) -> Result<Response<StringList>, Status> {
        Ok(Response::new(StringList {
            values: vec![self.node.clone()],
        }))
    }

    async fn list_crawls(&self, _: Request<Local>) -> Result<Response<StringList>, Status> {
        let values = self.crawls.holding_urls().await;
        Ok(Response::new(StringList {
            values: values.map_err(|e| store_status(&e))?,
        }))
    }

    async fn delete_crawl(
        &self,
        request: Request<DeleteCrawlMessage>,
    ) -> Result<Response<Long>, Status> {
        self.delete_crawl_now(request.into_inner()).await
    }

    async fn list_queues(
        &self,
        request: Request<Pagination>,
    ) -> Result<Response<QueueList>, Status> {
        self.list_queues_now(request.into_inner()).await
    }

    type GetURLsStream = Answers<UrlInfo>;

    async fn get_ur_ls(
        &self,
        request: Request<GetParams>,
    ) -> Result<Response<Self::GetURLsStream>, Status> {
        self.get_urls_now(request.into_inner()).await
    }

    type PutURLsStream = Answers<crate::proto::AckMessage>;

    async fn put_ur_ls(
        &self,
        request: Request<tonic::Streaming<UrlItem>>,
    ) -> Result<Response<Self::PutURLsStream>, Status> {
        Ok(Response::new(self.put_urls_now(request.into_inner())))
    }

    type PutDiscoveredStream = Answers<crate::proto::BatchAck>;

    async fn put_discovered(
        &self,
        request: Request<tonic::Streaming<crate::proto::DiscoveredBatch>>,
    ) -> Result<Response<Self::PutDiscoveredStream>, Status> {
        Ok(Response::new(self.put_discovered_now(request.into_inner())))
    }

    async fn purge_ur_ls(
        &self,
        request: Request<crate::proto::PurgeUrlParams>,
    ) -> Result<Response<Long>, Status> {
        self.purge_urls_now(request.into_inner()).await
    }

    async fn get_stats(
        &self,
        request: Request<QueueWithinCrawlParams>,
    ) -> Result<Response<Stats>, Status> {
        self.get_stats_now(request.into_inner()).await
    }

    async fn delete_queue(
        &self,
        request: Request<QueueWithinCrawlParams>,
    ) -> Result<Response<Long>, Status> {
        self.delete_queue_now(request.into_inner()).await
    }

    async fn block_queue_until(
        &self,
        request: Request<BlockQueueParams>,
    ) -> Result<Response<Empty>, Status> {
        self.block_queue_now(request.into_inner()).await
    }

    async fn set_active(&self, request: Request<Active>) -> Result<Response<Empty>, Status> {
        let active = request.into_inner().state;
        // The flag is the server's (the API's "node"): every crawl open keeps it, and DEFAULT's
        // is the one GetActive reads.
        self.crawl(DEFAULT_CRAWL).await?;
        for (_, crawl) in self.crawls.all().await {
            let change = crawl.change_crawl_rules(|rules| rules.active = Some(active));
            change.await.map_err(|e| store_status(&e))?;
        }
        Ok(Response::new(Empty {}))
    }

    async fn get_active(&self, _: Request<Local>) -> Result<Response<Boolean>, Status> {
        let crawl = self
            .crawls
            .get_or_open(DEFAULT_CRAWL)
            .await
            .map_err(crawl_status)?;
        let state = crawl.dispenser().is_active();
        Ok(Response::new(Boolean { state }))
    }

    async fn set_delay(
        &self,
        request: Request<QueueDelayParams>,
    ) -> Result<Response<Empty>, Status> {
        self.set_delay_now(request.into_inner()).await
    }

    async fn set_log_level(
        &self,
        request: Request<LogLevelParams>,
    ) -> Result<Response<Empty>, Status> {
        let params = request.into_inner();
        let Some(set) = &self.log_levels else {
            return Err(Status::failed_precondition(
                "SetLogLevel: this program serves the API without a log filter to change",
            ));
        };
        let level = log_level(params.level())?;
        set(&params.package, level).map_err(Status::invalid_argument)?;
        // Kept with the DEFAULT crawl's rules, and set again when the server starts.
        let (_, crawl) = self.crawl(DEFAULT_CRAWL).await?;
        let package = params.package.clone();
        let change = crawl.change_crawl_rules(|rules| {
            rules.log_levels.insert(package, level.to_string());
        });
        change.await.map_err(|e| store_status(&e))?;
        tracing::info!(package = %params.package, %level, "log level set by SetLogLevel");
        Ok(Response::new(Empty {}))
    }

    async fn set_crawl_limit(
        &self,
        request: Request<CrawlLimitParams>,
    ) -> Result<Response<Empty>, Status> {
        self.set_crawl_limit_now(request.into_inner()).await
    }

    async fn get_url_status(
        &self,
        request: Request<UrlStatusRequest>,
    ) -> Result<Response<UrlItem>, Status> {
        self.url_status_now(request.into_inner()).await
    }

    type ListURLsStream = Answers<UrlItem>;

    async fn list_ur_ls(
        &self,
        request: Request<ListUrlParams>,
    ) -> Result<Response<Self::ListURLsStream>, Status> {
        self.list_urls_now(request.into_inner()).await
    }

    async fn count_ur_ls(
        &self,
        request: Request<CountUrlParams>,
    ) -> Result<Response<Long>, Status> {
        self.count_urls_now(request.into_inner()).await
    }
}
