//! The example topology binary: a complete crawler on the command line.
//!
//! ```text
//! cargo run --release --example crawl -- [OPTIONS] [SEED_URL...]
//! ```
//!
//! It crawls with the embedded frontier by default (a directory on local disk), so that a crawl needs
//! nothing but cargo. Stop it with Ctrl-C: it stops emitting, lets every stage finish what it holds,
//! writes the last statuses and prints a summary; run it again with the same `--frontier-path` and it
//! continues where it stopped. `--demo-site` serves a generated multi-host web site on loopback and
//! crawls that, for a first try without touching the internet.

use std::io::{IsTerminal, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use serde_json::json;
use squall::config::ConfigBuilder;
use squall::frontier::{EmbeddedFrontier, QueryLimits};
use squall::message::{CrawlEvent, CrawlObserver, CrawlStats};
use squall::topology::{CrawlSummary, CrawlerBuilder, RunLimits};
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
    /// A YAML configuration file with StormCrawler-style keys (see examples/crawler-conf.yaml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Overrides one configuration key; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Where the frontier lives.
    #[arg(long, value_enum, default_value_t = FrontierKind::Embedded)]
    frontier: FrontierKind,
    /// The embedded frontier's directory.
    #[arg(long, value_name = "DIR", default_value = "squall-frontier")]
    frontier_path: PathBuf,
    /// Elasticsearch/OpenSearch address, for `--frontier opensearch`: one node, or several nodes of
    /// a cluster separated by commas (requests go round-robin; one that fails on a node is retried
    /// on the next).
    #[arg(
        long,
        value_name = "URL[,URL...]",
        default_value = "http://127.0.0.1:9200"
    )]
    es_url: String,
    /// Seconds one request to Elasticsearch/OpenSearch may take before it is retried (on the next
    /// node of `--es-url` in the rotation).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    es_timeout: f64,
    /// Spout strategy over an Elasticsearch/OpenSearch frontier.
    #[arg(long, value_enum, value_name = "NAME", default_value_t = SpoutKind::Aggregation)]
    spout: SpoutKind,
    /// The status index (created with StormCrawler's mapping when missing; an existing one is used
    /// as it is).
    #[arg(long, value_name = "NAME", default_value = "status")]
    es_index: String,
    /// Primary shards of a status index created by this run.
    #[arg(long, value_name = "N", default_value_t = 10)]
    es_shards: u32,
    /// Replicas of a status index created by this run.
    #[arg(long, value_name = "N", default_value_t = 1)]
    es_replicas: u32,
    /// The field holding the partition key (`key`, or a metadata field such as `metadata.hostname`).
    #[arg(long, value_name = "FIELD", default_value = "key")]
    es_bucket_field: String,
    /// How new status documents are routed (StormCrawler's `es.status.routing`): `true` by their
    /// key, `false` not at all, `auto` as a sample of the existing index shows (a new or empty index
    /// is routed). A value the index contradicts stops the crawl at start.
    #[arg(long, value_name = "auto|true|false", default_value = "auto",
          value_parser = ["auto", "true", "false"])]
    es_routing: String,
    /// This process's share of the index: instance I of N (`I/N`, e.g. `0/2`), reading only its shards.
    #[arg(long, value_name = "I/N", default_value = "0/1")]
    es_instance: String,
    /// With `--spout queue`: the queues index (`--es-index` is then the urls index).
    #[arg(long, value_name = "NAME", default_value = "queues")]
    es_queues_index: String,
    /// With `--spout queue`: this process's name on its leases (default: host name and PID).
    #[arg(long, value_name = "ID")]
    instance_id: Option<String>,
    /// With `--spout queue`: seconds a lease lasts without renewal.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    lease_ttl: f64,
    /// With `--spout queue`: seconds this process holds a queue at most while other due queues wait
    /// for a process; then it gives the queue back, behind them.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    max_hold: f64,
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
    /// Write the final summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    summary_json: Option<PathBuf>,
    /// Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Serve a generated multi-host demo site on loopback and crawl it (adds its seeds).
    #[arg(long)]
    demo_site: bool,
    /// The loopback port of the demo site; keep it the same to resume a demo crawl.
    #[arg(long, value_name = "PORT", default_value_t = 8787)]
    demo_port: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SpoutKind {
    /// Terms aggregation on the key with top hits.
    Aggregation,
    /// Field collapsing on the key with inner hits.
    Collapsing,
    /// The aggregation learns the keys, light per-key queries refill them.
    Hybrid,
    /// A urls index and a queues index, with leases: any number of processes share one frontier.
    Queue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FrontierKind {
    /// A directory on local disk (redb).
    Embedded,
    /// An Elasticsearch or OpenSearch cluster.
    Opensearch,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    init_tracing();
    match crawl(args).await {
        Ok(()) => {}
        Err(error) => {
            eprintln!("error: {error:#}");
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
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
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
    if let Some(path) = &args.config {
        builder = builder.yaml_file(path)?;
    }
    for assignment in &args.overrides {
        builder = builder.set(assignment)?;
    }
    let config = builder.build()?;

    let mut seeds: Vec<String> = args.seed_urls.clone();
    if let Some(path) = &args.seeds_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read seeds file {}", path.display()))?;
        seeds.extend(text.lines().map(str::to_string));
    }
    let mut resolve = Vec::new();
    for entry in &args.resolve {
        resolve.push(parse_resolve(entry)?);
    }

    let demo = if args.demo_site {
        let addr = SocketAddr::from(([127, 0, 0, 1], args.demo_port));
        let site = Site::start_on(SiteSpec::default(), addr)
            .await
            .with_context(|| {
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

    if let Some(addr) = args.metrics_addr {
        metrics_exporter_prometheus::PrometheusBuilder::new()
            .with_http_listener(addr)
            .install()
            .with_context(|| format!("cannot serve metrics on {addr}"))?;
    }

    let mut crawler = match args.frontier {
        FrontierKind::Embedded => {
            let frontier = EmbeddedFrontier::open(&args.frontier_path)?;
            let limits = QueryLimits::from_config(&config);
            CrawlerBuilder::new(config).frontier(frontier.spout(limits), frontier)
        }
        FrontierKind::Opensearch => {
            let (spout, store) = index_frontier(&args, &config).await?;
            CrawlerBuilder::new(config).spout(spout).status_store(store)
        }
    };
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

    let report = crawler.inject(seeds.iter().map(String::as_str)).await;
    for (seed, reason) in &report.rejected {
        eprintln!("skipping seed {seed:?}: {reason}");
    }
    if report.accepted > 0 {
        eprintln!("{} seeds injected", report.accepted);
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
    let progress = tokio::spawn(show_progress(crawler.stats(), crawler.state()));

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
    progress.abort();
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

/// The connection to the engine from `--es-url` and `--es-timeout`.
fn connection_settings(args: &Args) -> anyhow::Result<squall_spouts::client::ConnectionSettings> {
    let mut settings =
        squall_spouts::client::ConnectionSettings::new(&args.es_url).context("invalid --es-url")?;
    settings.timeout = Duration::try_from_secs_f64(args.es_timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| {
            format!(
                "--es-timeout {} is not a number of seconds above 0",
                args.es_timeout
            )
        })?;
    Ok(settings)
}

/// The status-index frontier: connection, index (created if missing), writer and spout.
async fn index_frontier(
    args: &Args,
    config: &squall::config::CrawlConfig,
) -> anyhow::Result<(
    Box<dyn squall::frontier::Spout>,
    Arc<dyn squall::frontier::StatusStore>,
)> {
    use squall_spouts::client::EsClient;
    use squall_spouts::client::indices::refresh_interval;
    use squall_spouts::status_index::index::{
        IndexSettings, ensure_status_index, ensure_urls_index, routing_for, sample_routing,
    };
    use squall_spouts::status_index::schema::KeyField;
    use squall_spouts::status_index::spouts::{
        AggregationSpout, CollapsingSpout, HybridSpout, SpoutSettings,
    };
    use squall_spouts::{EsStatusStore, WriterSettings};

    let (instance, instances) = args
        .es_instance
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse::<u32>().ok()?, n.parse::<u32>().ok()?)))
        .filter(|(i, n)| *n > 0 && i < n)
        .with_context(|| format!("--es-instance {:?} is not I/N with I < N", args.es_instance))?;
    // Options checked before anything is created in the engine.
    let lease_ttl = Duration::try_from_secs_f64(args.lease_ttl)
        .ok()
        .filter(|d| *d >= Duration::from_secs(1))
        .with_context(|| {
            format!(
                "--lease-ttl {} is not a number of seconds, 1 or more",
                args.lease_ttl
            )
        })?;
    let max_hold = Duration::try_from_secs_f64(args.max_hold)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| {
            format!(
                "--max-hold {} is not a number of seconds above 0",
                args.max_hold
            )
        })?;
    let client = EsClient::new(connection_settings(args)?)?;
    let engine = client.engine().await?;
    let refresh = "1s";
    let index_settings = IndexSettings {
        name: args.es_index.clone(),
        shards: args.es_shards,
        replicas: args.es_replicas,
        refresh_interval: refresh.to_string(),
    };
    // The queue frontier's urls index is sorted by due date, so reads stop at their page.
    let state = if args.spout == SpoutKind::Queue {
        ensure_urls_index(&client, &index_settings).await?
    } else {
        ensure_status_index(&client, &index_settings).await?
    };
    eprintln!("status index {} on {engine:?}: {state:?}", args.es_index);
    // Writes show in queries after a refresh; with refresh off, allow a long margin.
    let visibility = refresh_interval(&client, &args.es_index)
        .await?
        .unwrap_or(Duration::from_secs(30));
    let key_field = KeyField::parse(&args.es_bucket_field);
    if args.spout == SpoutKind::Queue {
        use squall_spouts::queue::schema::queues_index_body;
        use squall_spouts::queue::{QueueSpout, QueueSpoutSettings, QueueStatusStore};
        let created = squall_spouts::client::indices::ensure_index(
            &client,
            &args.es_queues_index,
            queues_index_body(1, args.es_replicas, refresh),
        )
        .await?;
        eprintln!("queues index {}: {created:?}", args.es_queues_index);
        let mut settings = QueueSpoutSettings::new(&args.es_index, &args.es_queues_index);
        settings.key_field = key_field.clone();
        settings.lease_ttl = lease_ttl;
        settings.max_hold = max_hold;
        settings.max_queues = config.frontier_max_buckets;
        settings.max_urls_per_queue = config.frontier_max_urls_per_bucket;
        settings.refresh_interval = visibility;
        if let Some(id) = &args.instance_id {
            settings.owner = id.clone();
        }
        eprintln!("queue spout instance {}", settings.owner);
        let store = QueueStatusStore::new(
            client.clone(),
            &args.es_index,
            &args.es_queues_index,
            key_field,
        );
        return Ok((Box::new(QueueSpout::new(client, settings)), Arc::new(store)));
    }
    // New documents are routed as the index's existing ones were, so that a URL's writes find its
    // document; updates of the URLs the spouts read follow their documents (store.routes()).
    let requested = match args.es_routing.as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let sample = sample_routing(&client, &args.es_index, 100).await?;
    let routing = routing_for(&args.es_index, requested, sample)?;
    if sample.is_mixed() {
        eprintln!(
            "warning: status index {} holds routed and unrouted documents ({} and {} of {} \
             sampled); new documents are routed: {routing}",
            args.es_index,
            sample.routed,
            sample.unrouted,
            sample.sampled()
        );
    }
    eprintln!(
        "status index {}: es.status.routing {routing}",
        args.es_index
    );
    let store = EsStatusStore::new(
        client.clone(),
        WriterSettings {
            index: args.es_index.clone(),
            key_field: key_field.clone(),
            routing,
        },
    );
    let routes = store.routes();
    let settings = SpoutSettings {
        index: args.es_index.clone(),
        key_field,
        max_buckets: config.frontier_max_buckets,
        max_urls_per_bucket: config.frontier_max_urls_per_bucket,
        max_urls_per_reload: config.frontier_max_urls_per_bucket,
        shard_split: (instance, instances),
        partition_mode: config.partition_url_mode,
        refresh_interval: visibility,
        ..SpoutSettings::default()
    };
    let spout: Box<dyn squall::frontier::Spout> = match args.spout {
        SpoutKind::Aggregation => {
            Box::new(AggregationSpout::new(client, settings).with_routes(routes))
        }
        SpoutKind::Collapsing => {
            Box::new(CollapsingSpout::new(client, settings).with_routes(routes))
        }
        SpoutKind::Hybrid => Box::new(HybridSpout::new(client, settings).with_routes(routes)),
        SpoutKind::Queue => unreachable!("handled above"),
    };
    Ok((spout, Arc::new(store)))
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
    // The port is taken from each URL; reqwest ignores this one.
    Ok((host.to_ascii_lowercase(), SocketAddr::new(ip, 0)))
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

async fn show_progress(
    stats: Arc<CrawlStats>,
    state: tokio::sync::watch::Receiver<squall::spout::RunnerState>,
) {
    let started = std::time::Instant::now();
    let line = |stats: &CrawlStats| {
        let s = *state.borrow();
        let elapsed = started.elapsed().as_secs_f64().max(0.001);
        format!(
            "{} pages ({:.1}/s), {} hosts, {} in flight, {} buffered, {} MiB",
            stats.pages(),
            stats.pages() as f64 / elapsed,
            stats.hosts(),
            s.in_flight,
            s.buffered,
            stats.bytes() / (1024 * 1024)
        )
    };
    if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(200));
        loop {
            bar.set_message(line(&stats));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    } else {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            eprintln!("progress: {}", line(&stats));
        }
    }
}

/// Writes one JSON line per fetch attempt (url, key, started, finished, bytes, and http_status or
/// error), each with a single unbuffered write as the attempt completes: a process killed at any
/// moment leaves every completed fetch in the file (and no partial line before the last).
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
        });
        match (&fetch.http_status, &fetch.error) {
            (Some(code), _) => line["http_status"] = json!(code),
            (None, Some(error)) => line["error"] = json!(error),
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
