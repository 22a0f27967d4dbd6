//! Starting and stopping a server over the frontier a configuration names.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use squall::config::CrawlConfig;
use squall::frontier::EMBEDDED;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use squall::live::StatusServer;
use tonic::codegen::http;
use tower::util::MapRequestLayer;

use super::access::{AccessError, ServerAccess};
use super::connection::{SERVER_LIMITS, incoming};
use super::crawl::CrawlRunConfig;
use super::crawls::{CrawlError, Crawls, DEFAULT_CRAWL, FrontierOpener, check_id};
use super::live::{CallBoard, FrontierLive};
use super::service::{FrontierService, LogLevels};
use super::whole_messages::WholeMessages;
use crate::proto::url_frontier_server::UrlFrontierServer;
use squall::frontier::Frontier;
use squall::listen::{GuardedListener, ListenLimits};

/// How long a shutdown waits for calls in progress (a client's open PutURLs stream) before it
/// stops the crawls anyway; writes acked until then are durable, the rest were never acked.
const DRAIN: Duration = Duration::from_secs(10);

/// The fewest URLs a queue's buffer holds in the server: a client holds a queue from its GetURLs
/// until it puts its URLs back, so one call hands out what the buffer held, and clients ask for
/// 10 a queue by default (the reference's CLI, squall's `urlfrontier.max.urls.per.bucket`). The
/// crawler's own default (2 a queue) would give them 2.
pub const MIN_URLS_PER_QUEUE: usize = 10;

/// Opens each crawl's frontier from one configuration: `DEFAULT` is the frontier it names; crawl
/// `ID` is the embedded frontier in `<frontier.path>/crawls/ID`, or, on Elasticsearch/OpenSearch,
/// the indices named `<es.status.index.name>-ID` and `<es.queues.index.name>-ID`.
#[derive(Debug, Clone)]
pub struct ConfigOpener {
    config: CrawlConfig,
}

impl ConfigOpener {
    /// An opener for `config`'s frontier.
    pub fn new(config: CrawlConfig) -> Self {
        ConfigOpener { config }
    }

    /// The configuration of crawl `crawl`'s frontier. Its reader buffers at least
    /// 10 URLs a queue, whatever `frontier.max.urls.per.bucket` says.
    pub fn config_for(&self, crawl: &str) -> Result<CrawlConfig, CrawlError> {
        check_id(crawl)?;
        let mut config = self.config.clone();
        let per_queue = &mut config.frontier.max_urls_per_bucket;
        *per_queue = (*per_queue).max(MIN_URLS_PER_QUEUE);
        if crawl == DEFAULT_CRAWL {
            return Ok(config);
        }
        config.frontier.path = self.crawls_dir().join(crawl);
        let index = squall_engine::setup::IndexFrontierConfig::from_config(&self.config).map_err(
            |error| CrawlError::Open {
                crawl: crawl.to_string(),
                message: error.to_string(),
            },
        )?;
        let extensions = &mut config.extensions;
        extensions.set("es.status.index.name", &format!("{}-{crawl}", index.index));
        extensions.set(
            "es.queues.index.name",
            &format!("{}-{crawl}", index.queues_index),
        );
        Ok(config)
    }

    fn crawls_dir(&self) -> PathBuf {
        self.config.frontier.path.join("crawls")
    }
}

#[async_trait]
impl FrontierOpener for ConfigOpener {
    async fn open(&self, crawl: &str) -> Result<Frontier, CrawlError> {
        let config = self.config_for(crawl)?;
        let failed = |message: String| CrawlError::Open {
            crawl: crawl.to_string(),
            message,
        };
        // The kinds a server serves: squall's embedded frontier and the engine's (a frontier that
        // cannot be listed, such as another URLFrontier server, cannot be served).
        let frontiers = squall_engine::setup::frontiers();
        frontiers
            .open(&config)
            .await
            .map_err(|error| failed(error.to_string()))
    }

    async fn existing(&self) -> Vec<String> {
        if self.config.frontier.kind != EMBEDDED {
            return vec![DEFAULT_CRAWL.to_string()];
        }
        let mut found = vec![DEFAULT_CRAWL.to_string()];
        if let Ok(entries) = std::fs::read_dir(self.crawls_dir()) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if check_id(&name).is_ok() && entry.path().is_dir() {
                    found.push(name);
                }
            }
        }
        found
    }

    async fn remove(&self, crawl: &str) -> Result<(), CrawlError> {
        if crawl == DEFAULT_CRAWL || self.config.frontier.kind != EMBEDDED {
            return Ok(()); // emptied, kept: its indices or directory are the configuration's
        }
        let dir = self.crawls_dir().join(crawl);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(CrawlError::Open {
                crawl: crawl.to_string(),
                message: format!("{}: {error}", dir.display()),
            }),
        }
    }
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its TLS files cannot be used, or it would be open to others.
    #[error(transparent)]
    Access(#[from] AccessError),
    /// TLS could not be set up with the certificate and key given.
    #[error("TLS cannot be set up with the certificate and key given: {0}")]
    Tls(String),
    /// The listener has no address.
    #[error("the listening socket has no address: {0}")]
    Listener(#[from] std::io::Error),
    /// The default crawl's frontier could not be opened.
    #[error(transparent)]
    Crawl(#[from] CrawlError),
    /// The status page could not be served.
    #[error(transparent)]
    StatusPage(#[from] squall::live::ServeError),
}

/// A server running in the background.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    crawls: Arc<Crawls>,
    stop: CancellationToken,
    task: JoinHandle<Result<(), tonic::transport::Error>>,
    status_page: Option<StatusServer>,
    calls: Arc<CallBoard>,
}

/// What a server offers beyond its configuration's frontier.
#[derive(Clone, derive_more::Debug)]
pub struct ServerOptions {
    /// How `SetLogLevel` changes the process's log filter; `None` refuses the call.
    #[debug("{}", log_levels.is_some())]
    pub log_levels: Option<LogLevels>,
    /// Leave squall's own counts (`squall.*`, [`IDLE_COUNT`](super::IDLE_COUNT) among them) out of
    /// `GetStats`, answering with the reference service's counts only: a server such as the
    /// workers of other URLFrontier servers meet, for testing them.
    pub reference_stats: bool,
    /// TLS and the bearer token calls must carry (none by default: for loopback only).
    pub access: ServerAccess,
    /// Where to serve the live status page and its `/status.json` (none by default).
    pub status_addr: Option<SocketAddr>,
    /// The gRPC listener's bounds: connections held at once, the time to speak and to stay
    /// silent ([`SERVER_LIMITS`] by default).
    pub limits: ListenLimits,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            log_levels: None,
            reference_stats: false,
            access: ServerAccess::default(),
            status_addr: None,
            limits: SERVER_LIMITS,
        }
    }
}

/// Starts a URLFrontier server on `listener` over the frontier `config` names (its `DEFAULT`
/// crawl is opened now, so that a frontier out of reach fails here, by name). `SetLogLevel` is
/// refused: see [`start_with`].
pub async fn start(
    config: CrawlConfig,
    listener: TcpListener,
) -> Result<RunningServer, StartError> {
    start_with(config, listener, ServerOptions::default()).await
}

/// Sets again the log levels `SetLogLevel` set, kept with the DEFAULT crawl's rules; one that no
/// longer reads or sets is logged and left.
async fn restore_log_levels(default: &super::Crawl, set: &LogLevels) {
    if !default.catalog().keeps_rules() {
        return;
    }
    let kept = match default.catalog().rules().await {
        Ok(kept) => kept.crawl.log_levels,
        Err(error) => {
            warn!(%error, "the log levels kept in the frontier could not be read");
            return;
        }
    };
    for (package, level) in kept {
        let restored = level
            .parse::<tracing::Level>()
            .map_err(|e| e.to_string())
            .and_then(|parsed| set(&package, parsed));
        if let Err(error) = restored {
            warn!(%package, %level, %error, "a kept log level could not be set again");
        }
    }
}

/// [`start`], with the [`ServerOptions`] `options`.
pub async fn start_with(
    config: CrawlConfig,
    listener: TcpListener,
    options: ServerOptions,
) -> Result<RunningServer, StartError> {
    let addr = listener.local_addr()?;
    let subtitle = match config.frontier.kind.as_str() {
        EMBEDDED => format!(
            "URLFrontier server on {addr} · embedded frontier in {}",
            config.frontier.path.display()
        ),
        _ => format!("URLFrontier server on {addr} · frontier in Elasticsearch/OpenSearch"),
    };
    let settings = CrawlRunConfig::from_config(&config);
    let partition = config.fetcher.partition;
    let crawls = Arc::new(Crawls::new(Arc::new(ConfigOpener::new(config)), settings));
    let default = crawls.get_or_open(DEFAULT_CRAWL).await?;
    if let Some(set) = &options.log_levels {
        restore_log_levels(default.as_ref(), set).await;
    }
    let service = FrontierService::new(Arc::clone(&crawls), partition, addr.to_string())
        .with_log_levels(options.log_levels)
        .with_squall_counts(!options.reference_stats);
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    // Answers go out at once (the guarded listener sets TCP_NODELAY): with Nagle's algorithm on, a
    // small frame waits for the client's delayed ACK (40 ms on Linux) and each call pays it.
    let limits = options.limits;
    let incoming = incoming(GuardedListener::new(listener, "URLFrontier server", limits));
    // A live client answers the pings, so its connection is never idle for long; a dead one is
    // closed when a ping goes unanswered.
    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(limits.idle_timeout / 4))
        .http2_keepalive_timeout(Some(limits.idle_timeout / 4));
    if let Some(tls) = options.access.tls_config(limits.handshake_timeout)? {
        // tonic's TLS takes the process's default crypto provider, which must be chosen when
        // more than one is built in. ring is the workspace's one provider; rustls 0.23.48
        // deprecates its constructor for lacking post-quantum key exchange (aws-lc-rs has it, at
        // the price of a large C build), which a lock file taking that rustls would turn into a
        // warning here.
        #[allow(deprecated)]
        let ring = rustls::crypto::ring::default_provider();
        let _ = ring.install_default();
        builder = builder
            .tls_config(tls)
            .map_err(|e| StartError::Tls(squall::error_text::with_causes(&e)))?;
    }
    let checked = UrlFrontierServer::with_interceptor(service, options.access.checker());
    let calls = Arc::new(CallBoard::default());
    let counted = Arc::clone(&calls);
    let counting = MapRequestLayer::new(move |request: http::Request<tonic::body::Body>| {
        counted.observe(&request);
        request
    });
    // A body cut inside a message ends the call with an error (tonic alone would end the stream
    // cleanly when the cut falls right after a message's prefix).
    let whole_messages = MapRequestLayer::new(|request: http::Request<tonic::body::Body>| {
        request.map(|body| tonic::body::Body::new(WholeMessages::new(body)))
    });
    let status_page = match options.status_addr {
        Some(status_addr) => {
            let live = FrontierLive::new(Arc::clone(&crawls), Arc::clone(&calls), subtitle);
            Some(squall::live::serve(status_addr, Arc::new(live)).await?)
        }
        None => None,
    };
    let task = tokio::spawn(
        builder
            .layer(counting)
            .layer(whole_messages)
            .add_service(checked)
            .serve_with_incoming_shutdown(incoming, async move { stopped.cancelled().await }),
    );
    info!(%addr, tls = options.access.tls.is_some(), token = options.access.token.is_some(),
        "URLFrontier server listening");
    Ok(RunningServer {
        addr,
        crawls,
        stop,
        task,
        status_page,
        calls,
    })
}

impl RunningServer {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL of its status page, when it serves one.
    pub fn status_url(&self) -> Option<String> {
        self.status_page.as_ref().map(StatusServer::url)
    }

    /// The crawls it serves.
    pub fn crawls(&self) -> &Arc<Crawls> {
        &self.crawls
    }

    /// The calls it answered, by kind and by peer (what its status page shows).
    pub fn calls(&self) -> &Arc<CallBoard> {
        &self.calls
    }

    /// Stops gracefully: no new calls; calls in progress get up to 10 s to finish; then every
    /// crawl lets go of the URLs it holds (they stay due) and gives back its leases.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let mut task = self.task;
        match tokio::time::timeout(DRAIN, &mut task).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(error))) => warn!(%error, "the server ended with an error"),
            Ok(Err(error)) => warn!(%error, "the server task failed"),
            Err(_) => {
                warn!("calls still open after {DRAIN:?}; stopping anyway");
                task.abort();
            }
        }
        self.crawls.stop_all().await;
        info!("URLFrontier server stopped");
    }
}
