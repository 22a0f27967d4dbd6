//! `squall-frontier`: squall's frontier served over the URLFrontier gRPC API.
//!
//! ```text
//! cargo run --release -p squall-urlfrontier --bin squall-frontier -- [OPTIONS]
//! ```
//!
//! It takes the crawl binary's configuration keys (files with `--config`, single keys with
//! `--set`, and the same shorthand flags) and serves the frontier they name — the embedded one by
//! default, or Elasticsearch/OpenSearch with `--frontier opensearch` — on `--listen`. Ctrl-C or
//! SIGTERM stops it gracefully: calls in progress finish, URLs handed out and not put back stay
//! due in the frontier, and leases are given back.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use squall::config::{ConfigBuilder, Secret};
use squall::listen::ListenLimits;
use squall_urlfrontier::server::{LogLevels, SERVER_LIMITS, ServerAccess, ServerOptions, TlsFiles};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Serve a squall frontier over the URLFrontier API.
#[derive(Debug, Parser)]
#[command(name = "squall-frontier", version, about)]
struct Args {
    /// Where to listen for gRPC calls.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7071")]
    listen: SocketAddr,
    /// A YAML configuration file (the crawl binary's keys); repeatable, later files win.
    #[arg(long, value_name = "FILE")]
    config: Vec<PathBuf>,
    /// Overrides one configuration key; repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    overrides: Vec<String>,
    /// Where the frontier lives (`frontier.kind`).
    #[arg(long, value_name = "embedded|opensearch")]
    frontier: Option<String>,
    /// The embedded frontier's directory (`frontier.path`).
    #[arg(long, value_name = "DIR")]
    frontier_path: Option<String>,
    /// Elasticsearch/OpenSearch nodes, comma-separated (`es.status.addresses`).
    #[arg(long, value_name = "URL[,URL...]")]
    es_url: Option<String>,
    /// Spout over an Elasticsearch/OpenSearch frontier (`es.status.spout`).
    #[arg(long, value_name = "NAME")]
    spout: Option<String>,
    /// The status index, or the urls index with `--spout queue` (`es.status.index.name`).
    #[arg(long, value_name = "NAME")]
    es_index: Option<String>,
    /// The queues index of `--spout queue` (`es.queues.index.name`).
    #[arg(long, value_name = "NAME")]
    es_queues_index: Option<String>,
    /// Serve Prometheus metrics on ADDR.
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Serve the live status page (and its data at /status.json) on ADDR, or on PORT of the
    /// loopback address: crawls, URLs by status, in process, calls per second, workers.
    #[arg(long, value_name = "ADDR|PORT", value_parser = parse_status_addr)]
    status_addr: Option<SocketAddr>,
    /// Answer GetStats with the reference service's counts only, leaving squall's own
    /// (`squall.*`) out: a server such as workers of other URLFrontier servers meet.
    #[arg(long)]
    reference_stats: bool,
    /// Serve over TLS with this certificate chain (PEM), with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A file whose first line is the bearer token every call must carry (gRPC metadata
    /// `authorization: Bearer <token>`); SQUALL_FRONTIER_TOKEN in the environment gives it too.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// The token from the environment (never printed).
    #[arg(
        long = "token-env",
        env = "SQUALL_FRONTIER_TOKEN",
        hide = true,
        hide_env_values = true,
        conflicts_with = "token_file"
    )]
    token: Option<String>,
    /// Listen on an address other machines reach without a token (refused otherwise, TLS or
    /// not): anyone who reaches it can read and change the frontier.
    #[arg(long)]
    allow_open: bool,
    /// Connections held at once; more are closed as soon as they are accepted.
    #[arg(long, value_name = "N", default_value_t = SERVER_LIMITS.max_connections)]
    max_connections: usize,
    /// Seconds a new connection has to send its first bytes and finish its TLS handshake.
    #[arg(long, value_name = "SECS", default_value_t = SERVER_LIMITS.handshake_timeout.as_secs())]
    handshake_timeout: u64,
    /// Seconds a connection may stay with nothing sent either way (the server pings its clients
    /// every quarter of this, so a live client stays).
    #[arg(long, value_name = "SECS", default_value_t = SERVER_LIMITS.idle_timeout.as_secs())]
    idle_timeout: u64,
}

impl Args {
    /// TLS and the token as the flags and the environment give them.
    fn access(&self) -> anyhow::Result<ServerAccess> {
        let token = match (&self.token, &self.token_file) {
            (Some(token), _) => Some(token.trim().to_string()),
            (None, Some(path)) => {
                warn_if_others_read(path);
                Some(Secret::from_file(path).context("--token-file")?.0)
            }
            (None, None) => None,
        };
        if token.as_ref().is_some_and(String::is_empty) {
            anyhow::bail!("the token is empty (--token-file or SQUALL_FRONTIER_TOKEN)");
        }
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(certificate), Some(key)) => Some(TlsFiles {
                certificate: certificate.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        let access = ServerAccess {
            tls,
            token: token.map(Secret),
        };
        access.check_exposure(self.listen, self.allow_open)?;
        Ok(access)
    }

    /// The gRPC listener's bounds from the flags.
    fn limits(&self) -> anyhow::Result<ListenLimits> {
        if self.max_connections == 0 || self.handshake_timeout == 0 || self.idle_timeout < 4 {
            anyhow::bail!(
                "--max-connections and --handshake-timeout must be at least 1, --idle-timeout \
                 at least 4 (seconds)"
            );
        }
        Ok(ListenLimits {
            max_connections: self.max_connections,
            handshake_timeout: Duration::from_secs(self.handshake_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
        })
    }

    fn shorthand_keys(&self) -> Vec<(&'static str, &str)> {
        [
            ("frontier.kind", &self.frontier),
            ("frontier.path", &self.frontier_path),
            ("es.status.addresses", &self.es_url),
            ("es.status.spout", &self.spout),
            ("es.status.index.name", &self.es_index),
            ("es.queues.index.name", &self.es_queues_index),
        ]
        .into_iter()
        .filter_map(|(key, value)| Some((key, value.as_deref()?)))
        .collect()
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let default = if std::io::stderr().is_terminal() {
        "warn"
    } else {
        "info"
    };
    let directives = std::env::var("RUST_LOG").unwrap_or_else(|_| default.to_string());
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|_| EnvFilter::new(default));
    let (filter, handle) = tracing_subscriber::reload::Layer::new(filter);
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .init();
    if let Err(error) = serve(args, log_levels(directives, handle)).await {
        eprintln!("error: {}", squall::error_text::with_causes(error.as_ref()));
        std::process::exit(2);
    }
}

/// `SetLogLevel`: adds `target=level` to the filter's directives (a later directive for the same
/// target wins) and reloads it.
fn log_levels<S: 'static>(
    directives: String,
    handle: tracing_subscriber::reload::Handle<EnvFilter, S>,
) -> LogLevels {
    let directives = std::sync::Mutex::new(directives);
    Arc::new(move |target: &str, level: tracing::Level| {
        let mut current = directives
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let level = level.as_str().to_lowercase();
        let wanted = if target.trim().is_empty() {
            format!("{current},{level}")
        } else {
            format!("{current},{target}={level}")
        };
        let filter = EnvFilter::try_new(&wanted)
            .map_err(|error| format!("{target:?} is not a log target: {error}"))?;
        handle
            .reload(filter)
            .map_err(|error| format!("the log filter could not be changed: {error}"))?;
        *current = wanted;
        Ok(())
    })
}

async fn serve(args: Args, log_levels: LogLevels) -> anyhow::Result<()> {
    // The server fetches nothing; a name is only needed to pass the configuration's checks, and
    // a file or --set may still give one.
    // The keys of the frontier kinds (those served, and the URLFrontier client's, which a file
    // shared with the workers holds), and the crawl binary's browser keys, are kept; any other
    // unknown key is refused, as is a kind nobody registered.
    let mut frontiers = squall_engine::setup::frontiers();
    squall_urlfrontier::register(&mut frontiers);
    let mut builder = ConfigBuilder::new()
        .frontiers(&frontiers)
        .extension_prefixes(&["browser."])
        .set("http.agent.name=squall-frontier")?;
    for path in &args.config {
        builder = builder.yaml_file(path)?;
    }
    for (key, value) in args.shorthand_keys() {
        builder = builder.set_text(key, value)?;
    }
    for assignment in &args.overrides {
        builder = builder.set(assignment)?;
    }
    let config = builder.build()?;
    let access = args.access()?;
    let _metrics = match args.metrics_addr {
        Some(addr) => Some(squall::live::serve_metrics(addr).await?),
        None => None,
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let options = ServerOptions {
        log_levels: Some(log_levels),
        reference_stats: args.reference_stats,
        access,
        status_addr: args.status_addr,
        limits: args.limits()?,
    };
    let server = squall_urlfrontier::server::start_with(config, listener, options).await?;
    // One line on stdout that scripts and tests wait for.
    println!("listening on {}", server.addr());
    if let Some(url) = server.status_url() {
        eprintln!("status page: {url}");
    }
    shutdown_signal().await;
    eprintln!("stopping: finishing calls in progress, giving back what is held");
    server.shutdown().await;
    Ok(())
}

/// Warns when users other than the file's owner may read the token file.
fn warn_if_others_read(path: &std::path::Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(metadata) = std::fs::metadata(path)
            && metadata.permissions().mode() & 0o044 != 0
        {
            tracing::warn!(
                file = %path.display(),
                "the token file can be read by other users (chmod 600 it)"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// `--status-addr`: an address, or a port of the loopback address.
fn parse_status_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("{text:?} is neither an address (127.0.0.1:9899) nor a port"))
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
