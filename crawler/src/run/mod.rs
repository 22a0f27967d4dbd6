//! The crawl, start to end: the configuration, the demo site, the crawler assembled
//! (`assemble.rs`), the seeds injected (`seeds.rs`), the run under its limits and Ctrl-C, and the
//! summary (`summary.rs`).

mod assemble;
mod seeds;
mod summary;

use squall::topology::{CrawlSummary, Crawler, RunLimits};

use crate::args::Args;
use crate::watch::{self, FetchLog, Watching};
use crate::{configure, demo};
use assemble::{Assembled, assemble};
use seeds::Seeds;

/// Crawls as `args` say, until a limit, Ctrl-C or (with `--until-idle`) nothing left to do; then
/// prints the summary. An error is what kept the crawl from starting or from ending cleanly.
pub(crate) async fn crawl(args: Args) -> anyhow::Result<()> {
    let flux = configure::load_flux(&args)?;
    let config = configure::crawl_config(&args, flux.as_ref())?;
    // Seed files are read as they are injected, a batch at a time.
    let mut seeds = Seeds::given(&args, flux.as_ref())?;
    let mut resolve = args.resolve_entries()?;
    let demo = match args.demo_site {
        true => Some(demo::start(args.demo_port, &mut seeds.urls, &mut resolve).await?),
        false => None,
    };
    let _metrics_page = watch::serve_metrics(args.metrics_addr).await?;
    let topology = flux.as_ref().map_or("squall", |flux| flux.name.as_str());
    let Assembled {
        crawler,
        catalog,
        watching,
        fetch_log,
    } = assemble(&args, config, resolve, topology).await?;
    seeds.inject(&crawler, catalog.as_deref()).await?;
    if flux.as_ref().is_some_and(|flux| !flux.crawls) {
        eprintln!("the flux has no spout over a frontier: seeds injected, nothing to crawl");
        return Ok(());
    }
    let summary = run(&args, crawler, watching, fetch_log).await?;
    summary::report(&summary, args.summary_json.as_deref())?;
    if let Some(site) = demo {
        site.shutdown().await;
    }
    Ok(())
}

/// Runs the crawler under the limits of `args`, the progress line shown meanwhile; then ends what
/// watched it (the metrics index written a last time, the fetch log flushed).
async fn run(
    args: &Args,
    crawler: Crawler,
    watching: Option<Watching>,
    fetch_log: Option<FetchLog>,
) -> anyhow::Result<CrawlSummary> {
    stop_on_ctrl_c(&crawler);
    let progress = watching
        .as_ref()
        .filter(|_| !args.no_progress)
        .map(|watching| tokio::spawn(watch::show_progress(watching.live.clone())));
    let limits = RunLimits::default()
        .with_max_pages(args.max_pages)
        .with_max_duration(args.max_duration()?)
        .with_until_idle(args.until_idle);
    let summary = crawler.run(limits).await;
    if let Some(progress) = progress {
        progress.abort();
    }
    if let Some(metrics) = watching.and_then(|watching| watching.metrics) {
        metrics.finish().await;
    }
    if let Some(log) = fetch_log {
        log.flush()?;
    }
    Ok(summary)
}

/// The first Ctrl-C stops the crawl gracefully; a second one ends the process at once, with
/// status 130.
fn stop_on_ctrl_c(crawler: &Crawler) {
    let stop = crawler.stop_token();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!(
                "\nstopping: finishing the fetches in progress (Ctrl-C again to quit at once)"
            );
            stop.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}
