//! What watches a crawl: the live view (`squall::live`) and what shows it — the status page
//! (`--status-addr`), the metrics index (`es.metrics.*`), the progress line (`progress.rs`) —,
//! Prometheus metrics (`--metrics-addr`) and the fetch log (`--fetch-log`, `fetch_log.rs`).

mod fetch_log;
mod progress;

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::Arc;

use squall::config::CrawlConfig;
use squall::live::{LiveCrawl, LiveSettings, StatusServer};
use squall_engine::metrics::{MetricsIndexConfig, MetricsReporter};

use crate::args::Args;
use crate::open::ChosenFrontier;

pub(crate) use fetch_log::FetchLog;
pub(crate) use progress::show_progress;

/// The live view and what shows it: the status page, the metrics index, the progress line.
pub(crate) struct Watching {
    /// The live view the crawler reports to.
    pub(crate) live: LiveCrawl,
    /// What writes the live view to the metrics index, when `es.metrics.*` asks for it.
    pub(crate) metrics: Option<MetricsReporter>,
    /// The status page, served while this lives.
    _page: Option<StatusServer>,
}

/// Starts the live view when something shows it (`--status-addr`, the metrics index, the
/// progress line unless `--no-progress`): the frontier is counted in the background for them.
pub(crate) async fn watch(
    args: &Args,
    config: &CrawlConfig,
    frontier: &mut ChosenFrontier,
    topology: &str,
) -> anyhow::Result<Option<Watching>> {
    let metrics_on = MetricsIndexConfig::from_config(config)?.is_some();
    if args.no_progress && args.status_addr.is_none() && !metrics_on {
        return Ok(None);
    }
    let live = LiveCrawl::new(LiveSettings::default());
    live.set_subtitle(format!("frontier: {}", frontier.description));
    if let Some(leases) = frontier.leases.take() {
        live.show_leases(leases);
    }
    let metrics = squall_engine::metrics::start(config, &live, topology).await?;
    if let Some(metrics) = &metrics {
        eprintln!("metrics index: {}", metrics.index());
    }
    let counted =
        args.status_addr.is_some() || metrics.is_some() || std::io::stderr().is_terminal();
    if let (true, Some(catalog)) = (counted, &frontier.catalog) {
        live.count_frontier(Arc::clone(catalog));
    }
    let page = match args.status_addr {
        Some(addr) => {
            let page = squall::live::serve(addr, Arc::new(live.clone())).await?;
            eprintln!("status page: {}", page.url());
            Some(page)
        }
        None => None,
    };
    Ok(Some(Watching {
        live,
        metrics,
        _page: page,
    }))
}

/// Prometheus metrics on `--metrics-addr`, served while the value lives.
pub(crate) async fn serve_metrics(
    addr: Option<SocketAddr>,
) -> anyhow::Result<Option<StatusServer>> {
    Ok(match addr {
        Some(addr) => Some(squall::live::serve_metrics(addr).await?),
        None => None,
    })
}
