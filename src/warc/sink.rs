//! The writer thread, the handle that feeds it exchanges, and the handle that finishes it.

use std::path::PathBuf;

use tokio::sync::{mpsc, oneshot};
use tracing::error;

use super::error::WarcError;
use super::exchange::Exchange;
use super::settings::WarcSettings;
use super::writer::WarcFiles;

/// What the writer thread is asked to do.
enum Command {
    /// Write an exchange, and say whether it was written.
    Write(Box<Exchange>, oneshot::Sender<Result<(), WarcError>>),
    /// Close the current file and stop.
    Finish,
}

/// Hands exchanges to the WARC writer; cheap to clone, one per protocol that archives.
#[derive(Debug, Clone)]
pub struct WarcSink {
    commands: mpsc::Sender<Command>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Write(exchange, _) => write!(f, "Write({})", exchange.target_uri),
            Command::Finish => f.write_str("Finish"),
        }
    }
}

impl WarcSink {
    /// Writes the records of `exchange`, waiting while the writer's queue is full; returns once
    /// they are in the file, or why they could not be written.
    pub async fn archive(&self, exchange: Exchange) -> Result<(), WarcError> {
        let (answer, written) = oneshot::channel();
        self.commands
            .send(Command::Write(Box::new(exchange), answer))
            .await
            .map_err(|_| WarcError::Stopped)?;
        written.await.map_err(|_| WarcError::Stopped)?
    }
}

/// What the writer did, once finished.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcReport {
    /// The files written, by final name, in order.
    pub files: Vec<PathBuf>,
    /// Records written (`warcinfo` records included).
    pub records: u64,
    /// Exchanges that could not be written (each was reported to its fetch, and logged).
    pub failed: u64,
}

/// Finishes the writer: the last file closed under its final name.
#[derive(Debug)]
pub struct WarcWriter {
    commands: mpsc::Sender<Command>,
    done: oneshot::Receiver<Result<WarcReport, WarcError>>,
    thread: std::thread::JoinHandle<()>,
}

impl WarcWriter {
    /// Writes what was handed over before this call, closes the last file and reports, once the
    /// writer thread has ended. Exchanges handed over afterwards are refused
    /// ([`WarcError::Stopped`]).
    pub async fn finish(self) -> Result<WarcReport, WarcError> {
        // If the thread is already gone, `done` says so.
        let _ = self.commands.send(Command::Finish).await;
        let report = self.done.await.map_err(|_| WarcError::Stopped);
        // The thread has reported (or panicked, and `done` said so): all that is left of it is
        // its return, so the join is immediate and needs no runtime (finish may be awaited on
        // any executor).
        if self.thread.join().is_err() {
            return Err(WarcError::Stopped);
        }
        report?
    }
}

/// Starts the writer on a thread of its own (file writes and compression block): a sink to hand
/// it exchanges, and the handle that finishes it. The directory is created now, so that a bad one
/// is an error before the crawl starts.
pub fn start(settings: WarcSettings) -> Result<(WarcSink, WarcWriter), WarcError> {
    let queue_size = settings.queue_size.max(1);
    let files = WarcFiles::new(settings)?;
    let (commands, received) = mpsc::channel(queue_size);
    let (report, done) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("squall-warc".to_string())
        .spawn(move || {
            let _ = report.send(run(files, received));
        })
        .map_err(|error| WarcError::Settings(format!("cannot start the writer thread: {error}")))?;
    let sink = WarcSink {
        commands: commands.clone(),
    };
    Ok((
        sink,
        WarcWriter {
            commands,
            done,
            thread,
        },
    ))
}

/// Writes until asked to finish, or until every sender is gone; then closes the last file.
fn run(
    mut files: WarcFiles,
    mut commands: mpsc::Receiver<Command>,
) -> Result<WarcReport, WarcError> {
    let mut failed = 0u64;
    while let Some(Command::Write(exchange, answer)) = commands.blocking_recv() {
        let result = files.write(&exchange);
        if let Err(error) = &result {
            failed += 1;
            error!(%error, url = %crate::redact::url_text(&exchange.target_uri), "WARC records not written; the URL stays due");
        }
        let _ = answer.send(result);
    }
    files
        .close()
        .inspect_err(|error| error!(%error, "the last WARC file could not be closed"))?;
    Ok(WarcReport {
        files: files.closed,
        records: files.records,
        failed,
    })
}
