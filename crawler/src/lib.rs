//! squall's crawler on the command line: the `crawl` binary, also run by the root crate's example
//! (`cargo run --release --example crawl -- [OPTIONS] [SEED_URL...]`, the README's first command).
//!
//! It crawls with the embedded frontier by default (a directory on local disk), so that a crawl needs
//! nothing but cargo; `--frontier opensearch` crawls from Elasticsearch/OpenSearch, and
//! `--frontier urlfrontier --frontier-url HOST:PORT` from a URLFrontier server. Stop it with Ctrl-C:
//! it stops emitting, lets every stage finish what it holds, writes the last statuses and prints a
//! summary; run it again with the same `--frontier-path` and it continues where it stopped.
//! `--demo-site` serves a generated multi-host web site on loopback and crawls that, for a first try
//! without touching the internet.
//!
//! One module a job, one way down:
//!
//! ```text
//!  run/         the crawl: configuration, the crawler assembled, seeds injected, the run, its summary
//!     │
//!  configure.rs the configuration: the flux, the files, the shorthand flags, the overrides
//!  open/        what the crawl opens: the frontier (open/frontier.rs), the content index, the browser
//!  watch/       what watches it: the live view, status page, metrics, progress line, fetch log
//!  demo.rs      the demo site
//!     │
//!  args.rs      the command line (clap) and the checks of its values
//! ```

mod args;
mod configure;
mod demo;
mod open;
mod run;
mod watch;

use std::io::IsTerminal;

use clap::Parser;
use squall::error_text;
use tracing_subscriber::EnvFilter;

/// The `crawl` program: reads the command line, crawls, and exits with status 2 and the error (each
/// of its causes once) when the crawl cannot run; 130 on a second Ctrl-C.
pub fn main() {
    let args = args::Args::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => fail(&error),
    };
    runtime.block_on(async {
        if let Err(error) = run::crawl(args).await {
            fail(error.as_ref());
        }
    });
}

/// Prints `error` and exits with status 2.
fn fail(error: &(dyn std::error::Error + 'static)) -> ! {
    // Each cause once: a library error whose message quotes its source would otherwise print it
    // twice with `{error:#}`.
    eprintln!("error: {}", error_text::with_causes(error));
    std::process::exit(2);
}

/// Logs to standard error: warnings on a terminal, `info` in a log file (`RUST_LOG` chooses).
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
