//! The command line: every flag with its doc (what `crawl --help` shows), and the checks of the values
//! clap does not read itself (`--resolve`, `--status-addr`, `--max-duration`).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Parser;

/// Crawl the web (or a local demo site) with squall.
#[derive(Debug, Parser)]
// (`about` is the text `crawl --help` has always shown: the squall crate's description.)
#[command(
    name = "crawl",
    version,
    about = "Build web crawlers as stream topologies, StormCrawler-style, with the frontier in \
             Elasticsearch/OpenSearch or embedded."
)]
pub(crate) struct Args {
    /// Seed URLs.
    #[arg(value_name = "SEED_URL")]
    pub(crate) seed_urls: Vec<String>,
    /// A file of seed URLs, one per line (blank lines and lines starting with # are skipped).
    #[arg(long = "seeds", value_name = "FILE")]
    pub(crate) seeds_file: Option<PathBuf>,
    /// A YAML configuration file with StormCrawler-style keys (see examples/crawler-conf.yaml,
    /// examples/opensearch-conf.yaml, examples/urlfrontier-conf.yaml and, for JavaScript sites
    /// rendered in Chromium, examples/browser-conf.yaml); repeatable, later files win.
    /// StormCrawler's crawler-conf.yaml and opensearch-conf.yaml load as they are: its keys squall
    /// does not implement are named in one warning (README: "Coming from StormCrawler").
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Vec<PathBuf>,
    /// Overrides one configuration key; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) overrides: Vec<String>,
    /// A StormCrawler Flux topology (crawler.flux, injection.flux) read as it is: its included
    /// conf files, its spout's class and parallelism, its bolts' classes, its FileSpout's seeds.
    /// A flux without a frontier spout (injection.flux) injects its seeds and ends. --config
    /// files, the shorthand flags and --set apply after it.
    #[arg(long, value_name = "FILE")]
    pub(crate) flux: Option<PathBuf>,
    /// A properties file filling the flux's `${name}` placeholders (Flux's --filter).
    #[arg(long, value_name = "FILE", requires = "flux")]
    pub(crate) flux_filter: Option<PathBuf>,
    /// Where the frontier lives (shorthand for `--set frontier.kind=...`).
    #[arg(long, value_name = "embedded|opensearch|urlfrontier")]
    pub(crate) frontier: Option<String>,
    /// The embedded frontier's directory (`frontier.path`, default `squall-frontier`).
    #[arg(long, value_name = "DIR")]
    pub(crate) frontier_path: Option<String>,
    /// The URLFrontier server of `--frontier urlfrontier`, HOST:PORT or http://HOST:PORT
    /// (`urlfrontier.address`, default 127.0.0.1:7071).
    #[arg(long, value_name = "ADDR")]
    pub(crate) frontier_url: Option<String>,
    /// Where parsed pages are indexed (shorthand for `--set indexer.kind=...`): `file` appends JSON
    /// lines to `--indexer-file`, `opensearch` writes the content index of the `es.indexer.*` keys.
    #[arg(long, value_name = "none|file|opensearch")]
    pub(crate) indexer: Option<String>,
    /// The JSON-lines file of `--indexer file` (`indexer.file`, default `squall-content.jsonl`).
    #[arg(long, value_name = "FILE")]
    pub(crate) indexer_file: Option<String>,
    /// Elasticsearch/OpenSearch nodes, comma-separated (`es.status.addresses`); requests go
    /// round-robin, and one that fails on a node is retried on the next.
    #[arg(long, value_name = "URL[,URL...]")]
    pub(crate) es_url: Option<String>,
    /// Seconds one request to the engine may take before it is retried on the next node
    /// (`es.status.request.timeout`).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) es_timeout: Option<String>,
    /// Spout over an Elasticsearch/OpenSearch frontier (`es.status.spout`): aggregation,
    /// collapsing, hybrid or queue.
    #[arg(long, value_name = "NAME")]
    pub(crate) spout: Option<String>,
    /// The status index (`es.status.index.name`; the urls index with `--spout queue`).
    #[arg(long, value_name = "NAME")]
    pub(crate) es_index: Option<String>,
    /// Primary shards of an index this run creates (`es.status.index.shards`).
    #[arg(long, value_name = "N")]
    pub(crate) es_shards: Option<String>,
    /// Replicas of an index this run creates (`es.status.index.replicas`).
    #[arg(long, value_name = "N")]
    pub(crate) es_replicas: Option<String>,
    /// The field holding the partition key (`es.status.bucket.field`).
    #[arg(long, value_name = "FIELD")]
    pub(crate) es_bucket_field: Option<String>,
    /// How new status documents are routed (`es.status.routing`): true, false or auto.
    #[arg(long, value_name = "auto|true|false")]
    pub(crate) es_routing: Option<String>,
    /// This process's share of the status index, `I/N` (`es.status.instance`).
    #[arg(long, value_name = "I/N")]
    pub(crate) es_instance: Option<String>,
    /// The queues index of `--spout queue` (`es.queues.index.name`).
    #[arg(long, value_name = "NAME")]
    pub(crate) es_queues_index: Option<String>,
    /// This process's name on its leases (`es.queues.owner`; default: host name and PID).
    #[arg(long, value_name = "ID")]
    pub(crate) instance_id: Option<String>,
    /// Seconds a queue lease lasts without renewal (`es.queues.lease.ttl`).
    #[arg(long, value_name = "SECS")]
    pub(crate) lease_ttl: Option<String>,
    /// Seconds this process holds a queue at most while other due queues wait
    /// (`es.queues.max.hold`).
    #[arg(long, value_name = "SECONDS")]
    pub(crate) max_hold: Option<String>,
    /// Stop after this many fetched pages (those in flight still finish).
    #[arg(long, value_name = "N")]
    pub(crate) max_pages: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub(crate) max_duration: Option<f64>,
    /// Stop once nothing is due or in flight.
    #[arg(long)]
    pub(crate) until_idle: bool,
    /// Resolve HOST to IP instead of using DNS (like curl's --resolve; HOST:PORT:IP is accepted too).
    #[arg(long, value_name = "HOST:IP")]
    pub(crate) resolve: Vec<String>,
    /// Write one JSON line per fetch attempt to FILE (appended, each line written as the attempt
    /// completes, before parsing, so the file holds every completed fetch even if the process is
    /// killed).
    #[arg(long, value_name = "FILE")]
    pub(crate) fetch_log: Option<PathBuf>,
    /// Archive every HTTP exchange as WARC/1.1 records in files under DIR (shorthand for
    /// `--set warc.enabled=true --set warc.dir=DIR`); the last file is closed when the crawl ends.
    #[arg(long, value_name = "DIR")]
    pub(crate) warc_dir: Option<String>,
    /// Write the final summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) summary_json: Option<PathBuf>,
    /// Serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9898).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_addr: Option<SocketAddr>,
    /// Serve the live status page (and its data at /status.json) on ADDR, or on PORT of the
    /// loopback address: rates, stages, the frontier, the busiest and slowest hosts, the last
    /// errors. It shows the URLs being crawled: keep it on loopback unless that is fine.
    #[arg(long, value_name = "ADDR|PORT", value_parser = parse_status_addr)]
    pub(crate) status_addr: Option<SocketAddr>,
    /// Print no progress (neither the terminal's progress display nor the plain line every 5 s).
    #[arg(long)]
    pub(crate) no_progress: bool,
    /// Serve a generated multi-host demo site on loopback and crawl it (adds its seeds).
    #[arg(long)]
    pub(crate) demo_site: bool,
    /// The loopback port of the demo site; keep it the same to resume a demo crawl.
    #[arg(long, value_name = "PORT", default_value_t = 8787)]
    pub(crate) demo_port: u16,
}

impl Args {
    /// The configuration keys the shorthand flags stand for, in the order they apply, with whether
    /// the value is text (kept as given) or read as YAML (numbers, `true`/`false`).
    pub(crate) fn shorthand_keys(&self) -> Vec<(&'static str, &str, bool)> {
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

    /// The `--resolve` entries, each a host name and its address.
    pub(crate) fn resolve_entries(&self) -> anyhow::Result<Vec<(String, SocketAddr)>> {
        self.resolve
            .iter()
            .map(|entry| parse_resolve(entry))
            .collect()
    }

    /// `--max-duration` as a `Duration`, refused when it is not a number of seconds, 0 or more.
    pub(crate) fn max_duration(&self) -> anyhow::Result<Option<Duration>> {
        let Some(secs) = self.max_duration else {
            return Ok(None);
        };
        Duration::try_from_secs_f64(secs).map(Some).map_err(|_| {
            anyhow::anyhow!("--max-duration {secs} is not a number of seconds, 0 or more")
        })
    }
}

/// `--status-addr`: an address, or a port of the loopback address.
fn parse_status_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("{text:?} is neither an address (127.0.0.1:9899) nor a port"))
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
