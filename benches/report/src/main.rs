//! `bench-report`: turns squall's benchmark result JSON files into SVG plots
//! and Markdown tables, and optionally splices the Markdown into a document.

mod as_given;
mod browser;
mod end_to_end;
mod format;
mod input;
mod live_view;
mod machine;
mod markdown;
mod one_host;
mod pace;
mod plots;
mod results;
mod scale_out;
mod second_engine;
mod shared_crawl;
mod splice;
mod spouts;
mod stages;
mod table;
mod urlfrontier;
mod urlfrontier_servers;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

/// Command line of `bench-report`.
#[derive(Debug, Parser)]
#[command(
    name = "bench-report",
    about = "Draws SVG plots and Markdown tables from benchmark result JSON files"
)]
struct Cli {
    /// Directory holding machine.json, spouts.json, writer.json, fetcher.json, parser.json,
    /// politeness.json, one_host.json, shared_crawl.json, scale_out.json, end_to_end.json, pace.json,
    /// browser.json, urlfrontier.json and migration.json (any of them may be missing); the SVGs and
    /// summary.md are written here too.
    #[arg(long, value_name = "DIR")]
    results: PathBuf,
    /// Replace everything between the lines `<!-- results:begin -->` and
    /// `<!-- results:end -->` in FILE with the generated Markdown.
    #[arg(long, value_name = "FILE")]
    update_markdown: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Reads the results, draws the plots and writes the Markdown.
///
/// `summary.md` links the SVGs by file name, as it sits beside them; the
/// Markdown printed (and spliced into `--update-markdown FILE`) links them
/// relative to FILE's directory when FILE is given.
fn run(cli: &Cli) -> Result<()> {
    let dir = &cli.results;
    if !dir.is_dir() {
        anyhow::bail!("results directory {} does not exist", dir.display());
    }
    let results = results::Results::read_dir(dir)?;
    // Check the target document before writing anything.
    let target = match &cli.update_markdown {
        Some(file) => {
            let doc = std::fs::read_to_string(file)
                .with_context(|| format!("reading {}", file.display()))?;
            splice::splice(&doc, "").with_context(|| format!("checking {}", file.display()))?;
            Some((file, doc, link_prefix(file, dir)?))
        }
        None => None,
    };

    let stages = stages::stages(&results.stages);
    let drawn = plots::draw_all(&results, &stages, dir)?;

    let summary_md = markdown::report(&results, &stages, &drawn, "");
    let summary = dir.join("summary.md");
    std::fs::write(&summary, &summary_md)
        .with_context(|| format!("writing {}", summary.display()))?;

    match target {
        Some((file, doc, prefix)) => {
            let md = markdown::report(&results, &stages, &drawn, &prefix);
            let updated = splice::splice(&doc, &md)
                .with_context(|| format!("updating {}", file.display()))?;
            std::fs::write(file, updated).with_context(|| format!("writing {}", file.display()))?;
            print!("{md}");
        }
        None => print!("{summary_md}"),
    }
    Ok(())
}

/// The prefix that makes file names in `dir` into links relative to `file`'s directory.
fn link_prefix(file: &Path, dir: &Path) -> Result<String> {
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let base = parent
        .canonicalize()
        .with_context(|| format!("finding the directory of {}", file.display()))?;
    let target = dir
        .canonicalize()
        .with_context(|| format!("finding {}", dir.display()))?;
    Ok(splice::relative_prefix(&base, &target))
}
