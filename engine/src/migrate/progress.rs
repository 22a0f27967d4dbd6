//! How far a migration is: [`MigrationProgress`], reported after every batch and before the checks.

use std::time::Duration;

/// What the migration is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationStage {
    /// Copying documents.
    Copying,
    /// Copy done; refreshing and checking.
    Verifying,
}

/// How far the migration is, reported after every batch.
#[derive(Debug, Clone, PartialEq)]
pub struct MigrationProgress {
    /// What it is doing.
    pub stage: MigrationStage,
    /// Documents done, over all runs.
    pub documents_done: u64,
    /// Documents in the source when this run began.
    pub documents_total: u64,
    /// Documents done by this run.
    pub documents_this_run: u64,
    /// Batches done by this run.
    pub batches: u64,
    /// Time since this run began.
    pub elapsed: Duration,
}

impl MigrationProgress {
    /// Documents per second in this run.
    pub fn docs_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.documents_this_run as f64 / seconds
        } else {
            0.0
        }
    }

    /// The estimated time left, at this run's rate.
    pub fn remaining(&self) -> Option<Duration> {
        let rate = self.docs_per_second();
        let left = self.documents_total.saturating_sub(self.documents_done);
        if left == 0 {
            return Some(Duration::ZERO);
        }
        (rate > 0.0).then(|| Duration::from_secs_f64(left as f64 / rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_estimates_the_time_left() {
        let progress = MigrationProgress {
            stage: MigrationStage::Copying,
            documents_done: 300,
            documents_total: 1000,
            documents_this_run: 200,
            batches: 2,
            elapsed: Duration::from_secs(2),
        };
        assert_eq!(progress.docs_per_second(), 100.0);
        assert_eq!(progress.remaining(), Some(Duration::from_secs(7)));
    }
}
