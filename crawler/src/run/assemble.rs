//! The crawler put together from the configuration: its frontier, protocols, content index, live
//! view, host names resolved and fetch log.

use std::net::SocketAddr;
use std::sync::Arc;

use squall::config::CrawlConfig;
use squall::frontier::Catalog;
use squall::topology::{Crawler, CrawlerBuilder};

use crate::args::Args;
use crate::open::{ChosenFrontier, open_content_index, open_frontier, start_browser};
use crate::watch::{FetchLog, Watching, watch};

/// A crawler ready to run, with what the crawl keeps beside it.
pub(crate) struct Assembled {
    /// The crawler, its seeds not injected yet.
    pub(crate) crawler: Crawler,
    /// What counts the frontier's URLs (`None`: a URLFrontier server).
    pub(crate) catalog: Option<Arc<dyn Catalog>>,
    /// The live view and what shows it, when anything does.
    pub(crate) watching: Option<Watching>,
    /// The `--fetch-log`, when asked for.
    pub(crate) fetch_log: Option<FetchLog>,
}

/// Opens what `config` names (the frontier, the browser, the content index), starts what watches
/// the crawl, and builds the crawler over them, `resolve`'s host names sent to their addresses.
/// `topology` names the crawl in the metrics index.
pub(crate) async fn assemble(
    args: &Args,
    config: CrawlConfig,
    resolve: Vec<(String, SocketAddr)>,
    topology: &str,
) -> anyhow::Result<Assembled> {
    let mut frontier = open_frontier(&config).await?;
    let browser = start_browser(&config, &resolve).await?;
    let content = open_content_index(&config).await?;
    let watching = watch(args, &config, &mut frontier, topology).await?;
    let ChosenFrontier {
        spout,
        store,
        catalog,
        ..
    } = frontier;
    let mut crawler = CrawlerBuilder::new(config).spout(spout).status_store(store);
    if let Some(watching) = &watching {
        crawler = crawler.live(&watching.live);
    }
    if let Some(content) = content {
        crawler = crawler.content_store(content);
    }
    if let Some(browser) = browser {
        crawler = crawler.named_protocol(squall_browser::PROTOCOL_NAME, browser);
    }
    for (host, addr) in resolve {
        crawler = crawler.resolve(host, addr);
    }
    let fetch_log = match &args.fetch_log {
        Some(path) => {
            let log = FetchLog::create(path)?;
            crawler = crawler.observer(Arc::new(log.clone()));
            Some(log)
        }
        None => None,
    };
    Ok(Assembled {
        crawler: crawler.build()?,
        catalog,
        watching,
        fetch_log,
    })
}
