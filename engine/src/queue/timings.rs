//! Where the queue spout's time goes: for each stage of its rounds (listing due queues, claiming
//! them, reading their URLs, handing them out, giving them back), how many times the round went
//! through it, the items it carried and how long the round waited on it. Totals since the spout
//! started, read with [`QueueSpout::timings`](super::QueueSpout::timings); each stage is also
//! recorded in the histogram `squall_queue_stage_seconds{stage}`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A stage of the queue spout's round, in the order a round goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Listing due queues nobody holds: one search of the queues index. Items: queues listed.
    Listing,
    /// Claiming listed queues: one `_bulk` of conditional updates. Items: queues claimed.
    Claiming,
    /// Listing and claiming together, with the leases dropped alongside: what the round waits on
    /// before it reads. Items: queues held after it.
    ClaimRound,
    /// Reading held queues' URLs: `_msearch` requests of one query a queue. Items: queues read.
    Reading,
    /// Handing ready URLs to the runner (no request). Items: URLs handed out.
    HandingOut,
    /// Giving drained queues back: one `_bulk` of edits. Items: queues given back.
    Releasing,
}

impl Stage {
    /// Its name in metrics and reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Listing => "listing",
            Stage::Claiming => "claiming",
            Stage::ClaimRound => "claim_round",
            Stage::Reading => "reading",
            Stage::HandingOut => "handing_out",
            Stage::Releasing => "releasing",
        }
    }
}

/// What one stage added up to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTotals {
    /// Times a round went through it (for a request stage, requests sent).
    pub rounds: u64,
    /// Items it carried (see each [`Stage`]).
    pub items: u64,
    /// Time the rounds waited on it.
    pub time: Duration,
}

/// The queue spout's stage totals, shared with whoever reads them.
#[derive(Debug, Default)]
pub struct StageTimes {
    totals: Mutex<BTreeMap<Stage, StageTotals>>,
}

impl StageTimes {
    /// Adds one pass through `stage`, begun at `started`, that carried `items`.
    pub(crate) fn record(&self, stage: Stage, started: Instant, items: usize) {
        let time = started.elapsed();
        metrics::histogram!("squall_queue_stage_seconds", "stage" => stage.name())
            .record(time.as_secs_f64());
        let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        let entry = totals.entry(stage).or_default();
        entry.rounds += 1;
        entry.items += items as u64;
        entry.time += time;
    }

    /// The totals so far, by stage (stages not gone through yet are absent).
    pub fn snapshot(&self) -> BTreeMap<Stage, StageTotals> {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_add_up_by_stage() {
        let times = StageTimes::default();
        let started = Instant::now();
        times.record(Stage::Reading, started, 3);
        times.record(Stage::Reading, started, 4);
        times.record(Stage::Listing, started, 1);
        let totals = times.snapshot();
        assert_eq!(totals[&Stage::Reading].rounds, 2);
        assert_eq!(totals[&Stage::Reading].items, 7);
        assert_eq!(totals[&Stage::Listing].items, 1);
        assert!(!totals.contains_key(&Stage::Releasing));
    }
}
