//! `migrate-status-index`: turns a status index (StormCrawler's, or squall's own) into the urls and
//! queues indices of the queue frontier (see `squall_engine::migrate`). The source is only read; the
//! run can be stopped and started again; it checks the result and exits non-zero on any mismatch.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use squall::config::Secret;
use squall::model::PartitionMode;
use squall_engine::client::{ConnectionConfig, EsClient, PemFile};
use squall_engine::migrate::{
    MAX_BATCH_SIZE, MigrationOptions, MigrationProgress, MigrationReport, MigrationStage,
    migrate_with_progress,
};
use squall_engine::status_index::schema::URLS_INDEX_SHARDS;

/// Migrate a status index into the urls and queues indices of squall's queue frontier.
///
/// Reads SOURCE in one slice per shard (a point in time and search_after, sliced scrolls where the
/// engine has none), several slices and bulks at once, writes every document unchanged into URLS
/// (same id, no routing; the key is computed from the URL when a document has none) and one
/// document per key into QUEUES (nextDue = the earliest nextFetchDate of its URLs). During the copy
/// URLS and QUEUES have refresh off and no replicas; their settings are put back at the end. SOURCE
/// is never modified. Stopped runs continue from the checkpoint file. At the end the result is
/// checked; the exit status is 0 when everything matches, 1 on a mismatch, 2 on an error.
#[derive(Debug, Parser)]
#[command(name = "migrate-status-index", version)]
struct Cli {
    /// Address of Elasticsearch/OpenSearch (several nodes separated by `,` or `;`; `user:password@`
    /// for basic auth).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:9200")]
    es_url: String,
    /// The status index to read.
    #[arg(long, value_name = "INDEX")]
    source: String,
    /// The urls index to write (created when missing).
    #[arg(long, value_name = "INDEX")]
    urls: String,
    /// The queues index to write (created when missing).
    #[arg(long, value_name = "INDEX")]
    queues: String,
    /// How to compute the key of a document that has none: byHost, byDomain or byIP.
    #[arg(long, value_name = "MODE", default_value = "byHost", value_parser = parse_partition_mode)]
    partition_mode: PartitionMode,
    /// Where documents keep their key: `key`, or a metadata field such as `metadata.hostname`.
    #[arg(long, value_name = "FIELD", default_value = "key")]
    bucket_field: String,
    /// Documents per page read.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = parse_batch_size)]
    batch_size: usize,
    /// Slices (one per shard of SOURCE) read at the same time, at most.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256))]
    max_slices: u32,
    /// Read with sliced scrolls instead of a point in time (used anyway when the engine has none).
    #[arg(long)]
    scroll: bool,
    /// Bulk requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    bulk_concurrency: u32,
    /// The largest bulk request body to URLS, in bytes (suffixes k, m: KiB, MiB).
    #[arg(long, value_name = "BYTES", default_value = "8m", value_parser = parse_bytes)]
    bulk_bytes: usize,
    /// Read and compute everything, write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Write a machine-readable report to this file.
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Primary shards of the urls index, when it is created.
    #[arg(long, value_name = "N", default_value_t = URLS_INDEX_SHARDS, value_parser = clap::value_parser!(u32).range(1..))]
    urls_shards: u32,
    /// Primary shards of the queues index, when it is created.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    queues_shards: u32,
    /// Replicas of the indices created.
    #[arg(long, value_name = "N", default_value_t = 1)]
    replicas: u32,
    /// The checkpoint file [default: URLS.migration-checkpoint.json in the current directory, URLS
    /// the urls index's name].
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Accept any TLS certificate (test clusters only).
    #[arg(long)]
    tls_insecure: bool,
    /// An API key (id:key, or the encoded form), from the environment; never printed.
    #[arg(
        long = "api-key-env",
        env = "ES_API_KEY",
        hide_env_values = true,
        hide = true
    )]
    api_key: Option<String>,
    /// A file whose first line is the API key (id:key, or the encoded form); ES_API_KEY in the
    /// environment gives it too.
    #[arg(long, value_name = "FILE", conflicts_with = "api_key")]
    api_key_file: Option<PathBuf>,
    /// The CA certificates (PEM) that signed the nodes' certificates.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// A client certificate (PEM), with --client-key, for clusters that authenticate clients by
    /// certificate.
    #[arg(long, value_name = "FILE", requires = "client_key")]
    client_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "client_cert")]
    client_key: Option<PathBuf>,
}

/// The connection from the command line: addresses, credentials and TLS files (read now, so that a
/// missing file fails before anything is contacted).
fn connection(cli: &Cli) -> anyhow::Result<ConnectionConfig> {
    let mut settings = ConnectionConfig::new(&cli.es_url).context("invalid --es-url")?;
    settings.tls_insecure = cli.tls_insecure;
    settings.api_key = match (&cli.api_key, &cli.api_key_file) {
        (Some(key), _) => Some(Secret(key.trim().to_string())),
        (None, Some(path)) => Some(Secret::from_file(path).context("--api-key-file")?),
        (None, None) => None,
    };
    if let Some(path) = &cli.ca_file {
        settings.ca_certificate = Some(PemFile::read(path)?);
    }
    if let (Some(cert), Some(key)) = (&cli.client_cert, &cli.client_key) {
        settings.client_certificate = Some(PemFile::read_pair(cert, key)?);
    }
    Ok(settings)
}

fn parse_partition_mode(value: &str) -> Result<PartitionMode, String> {
    value.parse()
}

fn parse_bytes(value: &str) -> Result<usize, String> {
    let lower = value.trim().to_ascii_lowercase();
    let (number, unit) = match lower.strip_suffix(['k', 'm']) {
        Some(number) if lower.ends_with('k') => (number, 1 << 10),
        Some(number) => (number, 1 << 20),
        None => (lower.as_str(), 1),
    };
    let bytes = number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| format!("{value:?} is not a size in bytes (like 8m or 65536)"))?;
    if bytes < 1024 {
        return Err("must be at least 1024 bytes".to_string());
    }
    Ok(bytes)
}

fn parse_batch_size(value: &str) -> Result<usize, String> {
    let size: usize = value
        .parse()
        .map_err(|_| format!("{value:?} is not a number"))?;
    if size == 0 || size > MAX_BATCH_SIZE {
        return Err(format!("must be between 1 and {MAX_BATCH_SIZE}"));
    }
    Ok(size)
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    match run(cli).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!(
                "migrate-status-index: error: {}",
                squall::error_text::with_causes(error.as_ref())
            );
            ExitCode::from(2)
        }
    }
}

/// Runs the migration; `Ok(false)` when the checks found a mismatch.
async fn run(cli: Cli) -> anyhow::Result<bool> {
    let settings = connection(&cli)?;
    // A quick first contact, so that a wrong address fails in seconds, not after every retry.
    let mut probe_settings = settings.clone();
    probe_settings.max_retries = 0;
    let probe = EsClient::new(probe_settings)?;
    probe.engine().await.context("the engine does not answer")?;
    let client = EsClient::new(settings)?;

    let mut options = MigrationOptions::new(&cli.source, &cli.urls, &cli.queues);
    options.partition_mode = cli.partition_mode;
    options.bucket_field = cli.bucket_field.clone();
    options.batch_size = cli.batch_size;
    options.max_slices = cli.max_slices as usize;
    options.point_in_time = !cli.scroll;
    options.bulk_concurrency = cli.bulk_concurrency as usize;
    options.bulk_bytes = cli.bulk_bytes;
    options.dry_run = cli.dry_run;
    options.urls_shards = cli.urls_shards;
    options.queues_shards = cli.queues_shards;
    options.replicas = cli.replicas;
    if let Some(checkpoint) = &cli.checkpoint {
        options.checkpoint = checkpoint.clone();
    }

    if cli.dry_run {
        eprintln!(
            "dry run: reading {} at {}; nothing will be written",
            cli.source,
            client.addresses()
        );
    } else {
        eprintln!(
            "migrating {} into {} and {} at {} (checkpoint {})",
            cli.source,
            cli.urls,
            cli.queues,
            client.addresses(),
            options.checkpoint.display()
        );
    }
    let mut printer = ProgressPrinter::new(cli.dry_run);
    let report = migrate_with_progress(&client, &options, |p| printer.show(p))
        .await
        .with_context(|| format!("migrating {} failed", cli.source))?;
    printer.finish();
    print_summary(&report);

    if let Some(path) = &cli.report_json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
        eprintln!("report written to {}", path.display());
    }
    if !report.completed {
        bail!("the migration stopped before the end; run again to continue");
    }
    Ok(report.verification.ok)
}

/// Progress on stderr: one updated line on a terminal, plain lines every few seconds otherwise.
struct ProgressPrinter {
    dry_run: bool,
    terminal: bool,
    last: Option<Instant>,
    line_open: bool,
}

impl ProgressPrinter {
    fn new(dry_run: bool) -> Self {
        ProgressPrinter {
            dry_run,
            terminal: std::io::stderr().is_terminal(),
            last: None,
            line_open: false,
        }
    }

    fn show(&mut self, progress: &MigrationProgress) {
        if progress.stage == MigrationStage::Verifying {
            self.finish();
            let (verb, next) = if self.dry_run {
                ("read", "summing up")
            } else {
                ("copied", "refreshing and verifying")
            };
            eprintln!(
                "{verb} {} documents in {}; {next}",
                progress.documents_done,
                duration(progress.elapsed)
            );
            return;
        }
        let every = if self.terminal {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(5)
        };
        let done = progress.documents_done >= progress.documents_total;
        if !done && self.last.is_some_and(|last| last.elapsed() < every) {
            return;
        }
        self.last = Some(Instant::now());
        let percent = if progress.documents_total > 0 {
            100.0 * progress.documents_done as f64 / progress.documents_total as f64
        } else {
            100.0
        };
        let line = format!(
            "{} / {} documents ({percent:.1} %), {:.0} docs/s, {} left",
            progress.documents_done,
            progress.documents_total,
            progress.docs_per_second(),
            progress.remaining().map_or("?".to_string(), duration)
        );
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
            self.line_open = true;
        } else {
            eprintln!("{line}");
        }
    }

    fn finish(&mut self) {
        if self.line_open {
            eprintln!();
            self.line_open = false;
        }
    }
}

fn duration(d: Duration) -> String {
    let seconds = d.as_secs();
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, (seconds % 3600) / 60),
    }
}

fn print_summary(report: &MigrationReport) {
    let verb = if report.dry_run {
        "would copy"
    } else {
        "copied"
    };
    if let Some(resumed) = &report.resumed_from {
        eprintln!(
            "resumed after {} documents (checkpoint of {})",
            resumed.documents, resumed.checkpoint_written
        );
    }
    eprintln!(
        "{verb} {} documents ({} in this run, {:.1} s, {:.0} docs/s); {} keys computed from URLs, \
         {} documents without key, {} without nextFetchDate",
        report.documents,
        report.documents_this_run,
        report.seconds,
        report.docs_per_second,
        report.keys_added,
        report.documents_without_key,
        report.documents_without_next_fetch_date
    );
    let queue_verb = if report.dry_run { "would send" } else { "sent" };
    eprintln!(
        "{queue_verb} {} queue updates for {} distinct keys",
        report.queues_written, report.distinct_keys_seen
    );
    if !report.indices_created.is_empty() {
        let created = if report.dry_run {
            "would create"
        } else {
            "created"
        };
        eprintln!("{created}: {}", report.indices_created.join(", "));
    }
    let v = &report.verification;
    if report.dry_run {
        eprintln!("status counts in the source: {:?}", v.status_counts_source);
        return;
    }
    if !v.performed {
        return;
    }
    eprintln!(
        "status counts: source {:?}, urls {:?}",
        v.status_counts_source, v.status_counts_urls
    );
    eprintln!(
        "{} distinct keys, {} queue documents, {} invariant violations",
        v.distinct_keys, v.queue_docs, v.invariant_violation_count
    );
    if v.ok {
        eprintln!("verification: OK");
    } else {
        for problem in v.problems() {
            eprintln!("verification FAILED: {problem}");
        }
    }
}
