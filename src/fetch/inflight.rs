//! The fetch tasks running, each remembered with its queue so that even a task that dies frees
//! its queue's thread.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::{Id, JoinSet};
use tracing::info;

use super::task::Completed;
use crate::message::FetchedPage;

/// How a fetch task ended.
pub(super) enum Joined {
    /// It finished.
    Done(Box<Completed>),
    /// It panicked or was cut short; its tuple was dropped with it, which failed it back to the
    /// spout. The key of its queue, when known.
    Died(Option<String>),
}

/// The fetch tasks running.
#[derive(Default)]
pub(super) struct InFlight {
    tasks: JoinSet<Completed>,
    keys: HashMap<Id, String>,
}

impl InFlight {
    /// Fetches running.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether none runs.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Starts a fetch on queue `key`.
    pub fn spawn<F>(&mut self, key: String, fetch: F)
    where
        F: Future<Output = Completed> + Send + 'static,
    {
        let handle = self.tasks.spawn(fetch);
        self.keys.insert(handle.id(), key);
    }

    /// The next fetch to end; `None` when none runs. Cancel-safe.
    pub async fn join_next(&mut self) -> Option<Joined> {
        Some(match self.tasks.join_next_with_id().await? {
            Ok((id, done)) => {
                self.keys.remove(&id);
                Joined::Done(Box::new(done))
            }
            Err(error) => {
                tracing::error!(%error, "a fetch task died");
                Joined::Died(self.keys.remove(&error.id()))
            }
        })
    }

    /// On stop: lets the running fetches finish within `grace`, passing their pages on, then cuts
    /// the rest short (their URLs fail back to the spout and stay due in the frontier).
    pub async fn finish(mut self, out: &mpsc::Sender<FetchedPage>, grace: Duration) {
        let grace = tokio::time::sleep(grace);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                done = self.tasks.join_next() => match done {
                    Some(Ok(done)) => {
                        if let Some(page) = done.page {
                            let _ = out.send(page).await;
                        }
                    }
                    Some(Err(_)) => {}
                    None => break,
                },
                _ = &mut grace => {
                    info!(cut_short = self.tasks.len(), "fetches still running at the end of the grace period");
                    self.tasks.abort_all();
                    while self.tasks.join_next().await.is_some() {}
                    break;
                }
            }
        }
    }
}
