//! The progress line: a spinner on a terminal, a plain line every 5 s in a log.

use std::io::IsTerminal;
use std::time::Duration;

use squall::live::{LiveCrawl, Progress};

/// Shows the crawl's progress until the task is aborted: on a terminal, a spinner redrawn every
/// 250 ms; otherwise a `progress: ...` line on standard error every 5 s.
pub(crate) async fn show_progress(live: LiveCrawl) {
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
