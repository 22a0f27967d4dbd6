//! The crawl processes of one pace row: the example crawl binary, one or several on one fresh
//! frontier (a directory of its own, or a urls and a queues index of their own), started,
//! measured and stopped (asked to stop, or killed to start again on what they left).

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use squall_engine::queue::QueueSpoutConfig;

use crate::common::binary::{queue_frontier_args, set_args};
use crate::common::frontier_data::delete;
use crate::common::process::{cpu_seconds, interrupt, wait_or_kill};
use crate::common::{engine_client, engine_url, fresh_temp_dir, spawn_crawler};

/// Where a row's frontier lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontierKind {
    /// The embedded frontier, in the row's directory.
    Embedded,
    /// The queue frontier, in the engine at `SQUALL_BENCH_ES`.
    Queue,
}

impl FrontierKind {
    /// `embedded` or `queue`, as the results name it.
    pub fn name(self) -> &'static str {
        match self {
            FrontierKind::Embedded => "embedded",
            FrontierKind::Queue => "queue",
        }
    }
}

/// One row's frontier and directory: fresh when made, kept across a restart, removed at the end.
pub struct Frontier {
    kind: FrontierKind,
    id: String,
    dir: PathBuf,
}

impl Frontier {
    /// A fresh frontier of `kind` for the row `row`.
    pub fn fresh(kind: FrontierKind, row: &str) -> Frontier {
        let id = format!("{row}-{}", std::process::id());
        Frontier {
            kind,
            dir: fresh_temp_dir(&format!("squall-pace-{id}")),
            id,
        }
    }

    fn urls_index(&self) -> String {
        format!("bench-pace-urls-{}", self.id)
    }

    fn queues_index(&self) -> String {
        format!("bench-pace-queues-{}", self.id)
    }

    /// The crawl binary's arguments that put process `p` on this frontier.
    fn args(&self, p: usize) -> Vec<String> {
        match self.kind {
            FrontierKind::Embedded => {
                let path = self.dir.join("frontier");
                vec!["--frontier-path".to_string(), path.display().to_string()]
            }
            FrontierKind::Queue => queue_frontier_args(
                &engine_url(),
                &self.urls_index(),
                &self.queues_index(),
                (1, 0),
                &format!("pace-{}-{p}", self.id),
            ),
        }
    }

    /// Removes the indices (of a queue frontier) and the directory.
    pub async fn remove(self) {
        if self.kind == FrontierKind::Queue {
            let (urls, queues) = (self.urls_index(), self.queues_index());
            let workers = QueueSpoutConfig::new(&urls, &queues).workers_index();
            delete(&engine_client(), &[&urls, &queues, &workers]).await;
        }
        if std::env::var("SQUALL_BENCH_KEEP_LOGS").is_ok_and(|v| v == "1") {
            eprintln!("  its processes' output is in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The running processes of a crawl.
pub struct Crawl {
    children: Vec<Child>,
    /// When the first process was started.
    pub started: Instant,
}

impl Crawl {
    /// Starts `processes` crawl processes of `binary` on `frontier`, each with `settings` (`--set`
    /// values) and `site` (its `--resolve` arguments and seeds), stopping by themselves after
    /// `limit` at the latest; `start` numbers the processes' output files (a restart's follow
    /// the first start's).
    pub fn start(
        binary: &Path,
        frontier: &Frontier,
        (processes, start): (usize, usize),
        settings: &[String],
        site: &[String],
        limit: Duration,
    ) -> Crawl {
        let settings: Vec<&str> = settings.iter().map(String::as_str).collect();
        let started = Instant::now();
        let children = (0..processes)
            .map(|p| {
                let mut args = frontier.args(p);
                args.extend(
                    ["--no-progress", "--max-duration"]
                        .map(str::to_string)
                        .into_iter()
                        .chain([limit.as_secs_f64().to_string()]),
                );
                args.extend(set_args(&settings));
                args.extend(site.iter().cloned());
                spawn_crawler(binary, &args, &frontier.dir, start + p)
            })
            .collect();
        Crawl { children, started }
    }

    /// The processes' CPU seconds so far.
    pub fn cpu_seconds(&self) -> f64 {
        self.children.iter().map(|c| cpu_seconds(c.id())).sum()
    }

    /// Whether every process has ended.
    pub fn ended(&mut self) -> bool {
        self.children
            .iter_mut()
            .all(|c| !matches!(c.try_wait(), Ok(None)))
    }

    /// Asks every process still running to stop as Ctrl-C does and waits for them (killing one still there a
    /// minute later).
    pub async fn stop(mut self) {
        for child in &mut self.children {
            if matches!(child.try_wait(), Ok(None)) {
                interrupt(child);
            }
        }
        let asked = Instant::now();
        for child in &mut self.children {
            wait_or_kill(child, asked).await;
        }
    }

    /// Kills every process at once (SIGKILL): nothing of theirs finishes.
    pub fn kill(mut self) {
        for child in &mut self.children {
            let _ = child.kill();
        }
        for child in &mut self.children {
            let _ = child.wait();
        }
    }
}
