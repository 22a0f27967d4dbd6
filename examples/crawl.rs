//! The example topology binary: a complete crawler on the command line.
//!
//! ```text
//! cargo run --release --example crawl -- [OPTIONS] [SEED_URL...]
//! ```
//!
//! It crawls with the embedded frontier by default (a directory on local disk), so that a crawl needs
//! nothing but cargo; `--frontier opensearch` crawls from Elasticsearch/OpenSearch, and
//! `--frontier urlfrontier --frontier-url HOST:PORT` from a URLFrontier server. Stop it with Ctrl-C: it stops emitting, lets every stage finish what it holds,
//! writes the last statuses and prints a summary; run it again with the same `--frontier-path` and it
//! continues where it stopped. `--demo-site` serves a generated multi-host web site on loopback and
//! crawls that, for a first try without touching the internet.

use std::io::{IsTerminal, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;
use serde_json::json;
use squall::config::flux::{FluxTopology, Substitutions};
use squall::config::{ConfigBuilder, CrawlConfig, FrontierKind, IndexerKind};
use squall::frontier::{Catalog, LeaseView, Spout, StatusStore, UrlQuery};
use squall::live::{LiveCrawl, LiveSettings, Progress};
use squall::message::{CrawlEvent, CrawlObserver};
use squall::topology::{CrawlSummary, CrawlerBuilder, RunLimits};
use squall::{error_text, redact};
use squall_testsite::{Site, SiteSpec};
use tracing_subscriber::EnvFilter;

/// Crawl the web (or a local demo site) with squall.
#[derive(Debug, Parser)]
#[command(name = "crawl", version, about)]
struct Args {
    /// Seed URLs.
    #[arg(value_name = "SEED_URL")]
    seed_urls: Vec<String>,
    /// A file of seed URLs, one per line (blank lines and lines starting with # are skipped).
    #[arg(long = "seeds", value_name = "FILE")]
    seeds_file: Option<PathBuf>,
    /// A YAML configuration file with StormCrawler-style keys (see examples/crawler-conf.yaml,
    /// examples/opensearch-conf.yaml, examples/urlfrontier-conf.yaml and, for JavaScript sites
    /// rendered in Chromium, examples/browser-conf.yaml); repeatable, later files win.
    /// StormCrawler's crawler-conf.yaml and opensearch-conf.yaml load as they are: its keys squall
    /// does not implement are named in one warning (README: "Coming from StormCrawler").
    #[arg(long, value_name = "FILE")]
    config: Vec<PathBuf>,
    /// Overrides one configuration key; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// A StormCrawler Flux topology (crawler.flux, injection.flux) read as it is: its included
    /// conf files, its spout's class and parallelism, its bolts' classes, its FileSpout's seeds.
    /// A flux without a frontier spout (injection.flux) injects its seeds and ends. --config
    /// files, the shorthand flags and --set apply after it.
    #[arg(long, value_name = "FILE")]
    flux: Option<PathBuf>,
    /// A properties file filling the flux's `${name}` placeholders (Flux's --filter).
    #[arg(long, value_name = "FILE", requires = "flux")]
    flux_filter: Option<PathBuf>,
    /// Where the frontier lives (shorthand for `--set frontier.kind=...`).
    #[arg(long, value_name = "embedded|opensearch|urlfrontier")]
    frontier: Option<String>,
    /// The embedded frontier's directory (`frontier.path`, default `squall-frontier`).
    #[arg(long, value_name = "DIR")]
    frontier_path: Option<String>,
    /// The URLFrontier server of `--frontier urlfrontier`, HOST:PORT or http://HOST:PORT
    /// (`urlfrontier.address`, default 127.0.0.1:7071).
    #[arg(long, value_name = "ADDR")]
    frontier_url: Option<String>,
    /// Where parsed pages are indexed (shorthand for `--set indexer.kind=...`): `file` appends JSON
    /// lines to `--indexer-file`, `opensearch` writes the content index of the `es.indexer.*` keys.
    #[arg(long, value_name = "none|file|opensearch")]
    indexer: Option<String>,
    /// The JSON-lines file of `--indexer file` (`indexer.file`, default `squall-content.jsonl`).
    #[arg(long, value_name = "FILE")]
    indexer_file: Option<String>,
    /// Elasticsearch/OpenSearch nodes, comma-separated (`es.status.addresses`); requests go
    /// round-robin, and one that fails on a node is retried on the next.
    #[arg(long, value_name = "URL[,URL...]")]
    es_url: Option<String>,
    /// Seconds one request to the engine may take before it is retried on the next node
    /// (`es.status.request.timeout`).
    #[arg(long, value_name = "SECONDS")]
    es_timeout: Option<String>,
    /// Spout over an Elasticsearch/OpenSearch frontier (`es.status.spout`): aggregation,
    /// collapsing, hybrid or queue.
    #[arg(long, value_name = "NAME")]
    spout: Option<String>,
    /// The status index (`es.status.index.name`; the urls index with `--spout queue`).
    #[arg(long, value_name = "NAME")]
    es_index: Option<String>,
    /// Primary shards of an index this run creates (`es.status.index.shards`).
    #[arg(long, value_name = "N")]
    es_shards: Option<String>,
    /// Replicas of an index this run creates (`es.status.index.replicas`).
    #[arg(long, value_name = "N")]
    es_replicas: Option<String>,
    /// The field holding the partition key (`es.status.bucket.field`).
    #[arg(long, value_name = "FIELD")]
    es_bucket_field: Option<String>,
    /// How new status documents are routed (`es.status.routing`): true, false or auto.
    #[arg(long, value_name = "auto|true|false")]
    es_routing: Option<String>,
    /// This process's share of the status index, `I/N` (`es.status.instance`).
    #[arg(long, value_name = "I/N")]
    es_instance: Option<String>,
    /// The queues index of `--spout queue` (`es.queues.index.name`).
    #[arg(long, value_name = "NAME")]
    es_queues_index: Option<String>,
    /// This process's name on its leases (`es.queues.owner`; default: host name and PID).
    #[arg(long, value_name = "ID")]
    instance_id: Option<String>,
    /// Seconds a queue lease lasts without renewal (`es.queues.lease.ttl`).
    #[arg(long, value_name = "SECS")]
    lease_ttl: Option<String>,
    /// Seconds this process holds a queue at most while other due queues wait
    /// (`es.queues.max.hold`).
    #[arg(long, value_name = "SECONDS")]
    max_hold: Option<String>,
    /// Stop after this many fetched pages (those in flight still finish).
    #[arg(long, value_name = "N")]
    max_pages: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    max_duration: Option<f64>,
    /// Stop once nothing is due or in flight.
    #[arg(long)]
    until_idle: bool,
    /// Resolve HOST to IP instead of using DNS (like curl's --resolve; HOST:PORT:IP is accepted too).
    #[arg(long, value_name = "HOST:IP")]
    resolve: Vec<String>,
    /// Write one JSON line per fetch attempt to FILE (appended, each line written as the attempt
    /// completes, before parsing, so the file holds every completed fetch even if the process is
    /// killed).
    #[arg(long, value_name = "FILE")]
    fetch_log: Option<PathBuf>,
    /// Archive every HTTP exchange as WARC/1.1 records in files under DIR (shorthand for
    /// `--set warc.enabled=true --set warc.dir=DIR`); the last file is closed when the crawl ends.
    #[arg(long, value_name = "DIR")]
    warc_dir: Option<String>,
    /// Write the final summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    summary_json: Option<PathBuf>,
    /// Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Serve the live status page (and its data at /status.json) on ADDR, or on PORT of the
    /// loopback address: rates, stages, the frontier, the busiest and slowest hosts, the last
    /// errors. It shows the URLs being crawled: keep it on loopback unless that is fine.
    #[arg(long, value_name = "ADDR|PORT", value_parser = parse_status_addr)]
    status_addr: Option<SocketAddr>,
    /// Print no progress (neither the terminal's progress display nor the plain line every 5 s).
    #[arg(long)]
    no_progress: bool,
    /// Serve a generated multi-host demo site on loopback and crawl it (adds its seeds).
    #[arg(long)]
    demo_site: bool,
    /// The loopback port of the demo site; keep it the same to resume a demo crawl.
    #[arg(long, value_name = "PORT", default_value_t = 8787)]
    demo_port: u16,
}

impl Args {
    /// The configuration keys the shorthand flags stand for, in the order they apply, with whether
    /// the value is text (kept as given) or read as YAML (numbers, `true`/`false`).
    fn shorthand_keys(&self) -> Vec<(&'static str, &str, bool)> {
        [
            ("frontier.kind", &self.frontier, true),
            ("frontier.path", &self.frontier_path, true),
            ("urlfrontier.address", &self.frontier_url, true),
            ("indexer.kind", &self.indexer, true),
            ("indexer.file", &self.indexer_file, true),
            ("es.status.addresses", &self.es_url, true),
            ("es.status.request.timeout", &self.es_timeout, false),
            ("es.status.spout", &self.spout, true),
            ("es.status.index.name", &self.es_index, true),
            ("es.status.index.shards", &self.es_shards, false),
            ("es.status.index.replicas", &self.es_replicas, false),
            ("es.status.bucket.field", &self.es_bucket_field, true),
            ("es.status.routing", &self.es_routing, false),
            ("es.status.instance", &self.es_instance, true),
            ("es.queues.index.name", &self.es_queues_index, true),
            ("es.queues.owner", &self.instance_id, true),
            ("es.queues.lease.ttl", &self.lease_ttl, false),
            ("es.queues.max.hold", &self.max_hold, false),
            ("warc.dir", &self.warc_dir, true),
        ]
        .into_iter()
        .filter_map(|(key, value, text)| Some((key, value.as_deref()?, text)))
        .collect()
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    init_tracing();
    match crawl(args).await {
        Ok(()) => {}
        Err(error) => {
            // Each cause once: a library error whose message quotes its source would otherwise
            // print it twice with `{error:#}`.
            eprintln!("error: {}", error_text::with_causes(error.as_ref()));
            std::process::exit(2);
        }
    }
}

fn init_tracing() {
    let default = if std::io::stderr().is_terminal() {
        "warn"
    } else {
        "info,squall=info"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Colours only on a terminal: a log file keeps plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

async fn crawl(args: Args) -> anyhow::Result<()> {
    let mut builder = ConfigBuilder::new();
    if args.demo_site {
        // The demo crawls our own loopback site and stays off its out-of-scope hosts; a config file
        // or --set may still change both.
        builder = builder
            .set("http.agent.name=squall-demo")?
            .set(&SiteSpec::exclude_outside_hosts())?;
    }
    let flux = load_flux(&args)?;
    if let Some(flux) = &flux {
        builder = flux.apply(builder)?;
    }
    for path in &args.config {
        builder = builder.yaml_file(path)?;
    }
    for (key, value, text) in args.shorthand_keys() {
        builder = if text {
            builder.set_text(key, value)?
        } else {
            builder.set(&format!("{key}={value}"))?
        };
    }
    if args.warc_dir.is_some() {
        builder = builder.set("warc.enabled=true")?;
    }
    for assignment in &args.overrides {
        builder = builder.set(assignment)?;
    }
    let config = builder.build()?;

    let mut seeds: Vec<String> = args.seed_urls.clone();
    // Seed files are read as they are injected, a batch at a time.
    let seed_files = match &flux {
        Some(flux) => flux.seed_files()?,
        None => Vec::new(),
    };
    let seed_files: Vec<PathBuf> = args.seeds_file.iter().cloned().chain(seed_files).collect();
    let mut resolve = Vec::new();
    for entry in &args.resolve {
        resolve.push(parse_resolve(entry)?);
    }

    let demo = if args.demo_site {
        let addr = SocketAddr::from(([127, 0, 0, 1], args.demo_port));
        let site = serve_demo(addr).await.with_context(|| {
            format!("cannot serve the demo site on {addr} (choose another with --demo-port)")
        })?;
        for host in site.host_names() {
            resolve.push((host, site.addr()));
        }
        seeds.extend(site.seeds());
        eprintln!(
            "demo site: {} hosts on {} (seeds: {})",
            site.in_scope_host_names().len(),
            site.addr(),
            site.seeds().len()
        );
        Some(site)
    } else {
        None
    };

    let _metrics_page = match args.metrics_addr {
        Some(addr) => Some(squall::live::serve_metrics(addr).await?),
        None => None,
    };

    let mut opened = open_frontier(&config).await?;
    let browser = start_browser(&config, &resolve).await?;
    let content = open_content_index(&config).await?;
    let topology = flux.as_ref().map_or("squall", |flux| flux.name.as_str());
    let watching = watch(&args, &config, &mut opened, topology).await?;
    let OpenedFrontier {
        spout,
        store,
        catalog,
        ..
    } = opened;
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
    let crawler = crawler.build()?;

    let mut report = crawler.inject(&seeds).await;
    for path in &seed_files {
        let more = crawler.inject_file(path).await?;
        report.accepted += more.accepted;
        report.rejected.extend(more.rejected);
    }
    for (seed, reason) in &report.rejected {
        eprintln!("skipping seed {:?}: {reason}", redact::url_text(seed));
    }
    if report.accepted > 0 {
        eprintln!("{} seeds injected", report.accepted);
    } else {
        refuse_an_empty_crawl(catalog.as_deref(), report.rejected.len()).await?;
    }
    if flux.as_ref().is_some_and(|flux| !flux.crawls) {
        eprintln!("the flux has no spout over a frontier: seeds injected, nothing to crawl");
        return Ok(());
    }

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
    let progress = watching
        .as_ref()
        .filter(|_| !args.no_progress)
        .map(|watching| tokio::spawn(show_progress(watching.live.clone())));

    let max_duration = match args.max_duration {
        Some(secs) => Some(Duration::try_from_secs_f64(secs).map_err(|_| {
            anyhow::anyhow!("--max-duration {secs} is not a number of seconds, 0 or more")
        })?),
        None => None,
    };
    let limits = RunLimits {
        max_pages: args.max_pages,
        max_duration,
        until_idle: args.until_idle,
    };
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
    println!("{summary}");
    if let Some(path) = &args.summary_json {
        std::fs::write(path, summary_json(&summary).to_string())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(site) = demo {
        site.shutdown().await;
    }
    Ok(())
}

/// The live view and what shows it: the status page, the metrics index, the progress line.
struct Watching {
    live: LiveCrawl,
    metrics: Option<squall_engine::metrics::MetricsReporter>,
    _page: Option<squall::live::StatusServer>,
}

/// Starts the live view when something shows it (`--status-addr`, the metrics index, the
/// progress line unless `--no-progress`): the frontier is counted in the background for them.
async fn watch(
    args: &Args,
    config: &CrawlConfig,
    frontier: &mut OpenedFrontier,
    topology: &str,
) -> anyhow::Result<Option<Watching>> {
    let metrics_on = squall_engine::metrics::MetricsIndexConfig::from_config(config)?.is_some();
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

/// The flux of `--flux`, read with `--flux-filter`'s properties; what squall does differently
/// from its classes is printed, a line each.
fn load_flux(args: &Args) -> anyhow::Result<Option<FluxTopology>> {
    let Some(path) = &args.flux else {
        return Ok(None);
    };
    let substitutions = match &args.flux_filter {
        Some(file) => Substitutions::from_properties_file(file)?,
        None => Substitutions::default(),
    };
    let flux = FluxTopology::load(path, &substitutions)?;
    eprintln!("flux: topology {:?} from {}", flux.name, path.display());
    for note in &flux.notes {
        eprintln!("flux: {note}");
    }
    Ok(Some(flux))
}

/// `HOST:IP` or `HOST:PORT:IP` (IPv6 addresses may be bracketed).
fn parse_resolve(entry: &str) -> anyhow::Result<(String, SocketAddr)> {
    let (host, rest) = entry
        .split_once(':')
        .with_context(|| format!("--resolve {entry:?} is not HOST:IP"))?;
    // An address alone (IPv6 ones contain colons), else PORT:ADDRESS as curl writes it.
    let ip_text = match rest.trim_matches(['[', ']']).parse::<IpAddr>() {
        Ok(_) => rest,
        Err(_) => match rest.split_once(':') {
            Some((port, ip)) if port.parse::<u16>().is_ok() => ip,
            _ => rest,
        },
    };
    let ip: IpAddr = ip_text
        .trim_matches(['[', ']'])
        .parse()
        .with_context(|| format!("--resolve {entry:?}: {ip_text:?} is not an IP address"))?;
    if host.is_empty() {
        bail!("--resolve {entry:?} has no host name");
    }
    // The host as URLs hold it: lower case, a name of other scripts in its IDNA (punycode) form.
    let host = match url::Host::parse(host) {
        Ok(url::Host::Domain(name)) => name,
        Ok(_) => bail!("--resolve {entry:?}: {host:?} is an address, not a host name"),
        Err(error) => bail!("--resolve {entry:?}: {host:?} is not a valid host name ({error})"),
    };
    // The port is taken from each URL; reqwest ignores this one.
    Ok((host, SocketAddr::new(ip, 0)))
}

fn summary_json(summary: &CrawlSummary) -> serde_json::Value {
    let statuses: serde_json::Map<String, serde_json::Value> = summary
        .statuses
        .iter()
        .map(|(status, n)| (status.to_string(), json!(n)))
        .collect();
    json!({
        "stop_reason": format!("{:?}", summary.stop_reason),
        "statuses": statuses,
        "pages": summary.pages,
        "bytes": summary.bytes,
        "hosts": summary.hosts,
        "write_failures": summary.write_failures,
        "elapsed_seconds": summary.elapsed_seconds,
        "clean_shutdown": summary.clean_shutdown,
    })
}

async fn show_progress(live: LiveCrawl) {
    if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(200));
        loop {
            bar.set_message(progress_line(&live.progress()));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    } else {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            eprintln!("progress: {}", progress_line(&live.progress()));
        }
    }
}

/// "1234 pages (12.5/s), 3 MiB, 2 errors, 40 in flight, 800 to fetch, ETA 1m04s".
fn progress_line(progress: &Progress) -> String {
    let mut line = format!(
        "{} pages ({:.1}/s), {} MiB, {} errors, {} in flight",
        progress.pages,
        progress.rate,
        progress.bytes / (1024 * 1024),
        progress.errors,
        progress.in_flight,
    );
    if let Some(discovered) = progress.discovered {
        line.push_str(&format!(", {discovered} to fetch"));
    }
    if let Some(eta) = progress.eta() {
        let secs = eta.as_secs();
        line.push_str(&format!(", ETA {}m{:02}s", secs / 60, secs % 60));
    }
    line
}

/// The frontier `frontier.kind` names: a URLFrontier server (`urlfrontier.*` keys,
/// examples/urlfrontier-conf.yaml) through squall-urlfrontier, any other through squall-engine.
async fn open_frontier(config: &CrawlConfig) -> anyhow::Result<OpenedFrontier> {
    if config.frontier.kind == FrontierKind::Urlfrontier {
        let (spout, store, description) = squall_urlfrontier::client::open(config).await?;
        eprintln!("frontier: {description}");
        return Ok(OpenedFrontier {
            spout,
            store,
            catalog: None,
            leases: None,
            description,
        });
    }
    let frontier = squall_engine::setup::open(config).await?;
    eprintln!("frontier: {}", frontier.description);
    Ok(OpenedFrontier {
        spout: frontier.spout,
        store: frontier.store,
        catalog: Some(frontier.catalog),
        leases: frontier.leases,
        description: frontier.description,
    })
}

/// A frontier's spout and store, what counts its URLs (`None`: a URLFrontier server), the leases
/// it holds (the queue frontier), and a line that names it.
struct OpenedFrontier {
    spout: Box<dyn Spout>,
    store: Arc<dyn StatusStore>,
    catalog: Option<Arc<dyn Catalog>>,
    leases: Option<Arc<dyn LeaseView>>,
    description: String,
}

/// `--status-addr`: an address, or a port of the loopback address.
fn parse_status_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("{text:?} is neither an address (127.0.0.1:9899) nor a port"))
}

/// With no seed injected, a frontier that holds no URL leaves nothing to crawl: an error, rather
/// than a crawl that waits forever. A frontier that cannot be counted (a URLFrontier server) is
/// left to run. An index that counts none is refreshed and counted again: seeds injected just
/// before (StormCrawler's injection topology, then its crawl) may not show yet.
async fn refuse_an_empty_crawl(
    catalog: Option<&dyn Catalog>,
    rejected: usize,
) -> anyhow::Result<()> {
    let Some(catalog) = catalog else {
        return Ok(());
    };
    let count = || async {
        catalog
            .count(&UrlQuery::default())
            .await
            .context("cannot count the URLs the frontier holds")
    };
    if count().await? > 0 {
        return Ok(());
    }
    catalog
        .settle()
        .await
        .context("cannot refresh the frontier to count the URLs it holds")?;
    if count().await? > 0 {
        return Ok(());
    }
    let seeds = match rejected {
        0 => "no seed was given".to_string(),
        1 => "the one seed given is not valid".to_string(),
        n => format!("none of the {n} seeds given is valid"),
    };
    bail!("nothing to crawl: {seeds}, and the frontier holds no URL")
}

/// The content index of `indexer.kind: opensearch` (`es.indexer.*` keys), through squall-engine;
/// the core opens the file of `indexer.kind: file` itself.
async fn open_content_index(
    config: &CrawlConfig,
) -> anyhow::Result<Option<Arc<dyn squall::index::ContentStore>>> {
    // The es.indexer.* keys are checked whichever indexer is chosen, so that a typo never passes.
    let keys = squall_engine::indexer::ContentIndexConfig::from_config(config)?;
    match config.indexer.kind {
        IndexerKind::Opensearch => {
            let store = squall_engine::indexer::open(config).await?;
            eprintln!("content index: {}", keys.index);
            Ok(Some(Arc::new(store)))
        }
        IndexerKind::File => {
            eprintln!("content file: {}", config.indexer.file.display());
            Ok(None)
        }
        IndexerKind::None => Ok(None),
    }
}

/// The headless-browser protocol, started when `protocol.schemes` names it (`browser.*` keys,
/// examples/browser-conf.yaml). Without `browser.host.rules`, the browser resolves the `--resolve`
/// names (and the demo site's) as the HTTP client does.
async fn start_browser(
    config: &squall::config::CrawlConfig,
    resolve: &[(String, SocketAddr)],
) -> anyhow::Result<Option<Arc<squall_browser::BrowserProtocol>>> {
    let name = squall_browser::PROTOCOL_NAME;
    if !config
        .protocols
        .schemes
        .values()
        .any(|protocol| protocol == name)
    {
        return Ok(None);
    }
    let mut settings = squall_browser::BrowserSettings::from_config(config)?;
    if settings.host_rules.is_empty() {
        let rules: Vec<String> = resolve
            .iter()
            .map(|(host, addr)| format!("MAP {host} {}", addr.ip()))
            .collect();
        settings.host_rules = rules.join(", ");
    }
    let browser = squall_browser::BrowserProtocol::start(settings)
        .await
        .context("cannot start the browser protocol (protocol.schemes names it)")?;
    eprintln!("browser: {} tabs", browser.settings().tabs);
    Ok(Some(Arc::new(browser)))
}

/// Writes one JSON line per fetch attempt (url, key, started, finished, bytes, protocol, and
/// http_status or error; a password in a URL masked), each with a single unbuffered write as the
/// attempt completes: a process killed at any moment leaves every completed fetch in the file (and
/// no partial line before the last).
#[derive(Clone)]
struct FetchLog {
    out: Arc<Mutex<std::fs::File>>,
}

impl FetchLog {
    fn create(path: &std::path::Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open fetch log {}", path.display()))?;
        Ok(FetchLog {
            out: Arc::new(Mutex::new(file)),
        })
    }

    fn flush(&self) -> anyhow::Result<()> {
        if let Ok(mut out) = self.out.lock() {
            out.flush().context("cannot write the fetch log")?;
        }
        Ok(())
    }
}

impl CrawlObserver for FetchLog {
    fn on_event(&self, event: &CrawlEvent) {
        let CrawlEvent::Fetched { url, key, fetch } = event else {
            return;
        };
        let time = |t: &chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        let mut line = json!({
            "url": url,
            "key": key,
            "started": time(&fetch.started),
            "finished": time(&fetch.finished),
            "bytes": fetch.bytes,
            "protocol": fetch.protocol,
        });
        match (&fetch.http_status, &fetch.error) {
            (Some(code), _) => line["http_status"] = json!(code),
            (None, Some(error)) => line["error"] = json!(redact::url_text(error)),
            (None, None) => {}
        }
        let mut text = line.to_string();
        text.push('\n');
        if let Ok(mut out) = self.out.lock()
            && let Err(error) = out.write_all(text.as_bytes())
        {
            tracing::warn!(%error, "cannot write the fetch log");
        }
    }
}

/// The demo site on `addr`, behind a guarded listener like every listener of squall's: room for
/// the crawl's own connections (a few a host) and more, none held silent.
async fn serve_demo(addr: SocketAddr) -> std::io::Result<Site> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let limits = squall::listen::ListenLimits {
        max_connections: 256,
        ..squall::listen::ListenLimits::default()
    };
    let guarded = squall::listen::GuardedListener::new(listener, "demo site", limits);
    Site::start_with(SiteSpec::default(), guarded)
}
