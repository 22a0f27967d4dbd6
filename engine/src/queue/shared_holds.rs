//! The part of each hold that the spout (which claims and gives back) shares with its upkeep
//! (which renews the leases) and its writer (which writes the statuses of the URLs fetched under
//! them): the lease, the holder's name, and the log of what the writer wrote for the queue.
//!
//! While a process holds a queue, its own writes for that queue need not touch the queue document:
//! the queue is due (its `nextDue` is no later than the hold's [`due_floor`](SharedHold::due_floor))
//! and a date written during the hold no earlier than that cannot need to lower it, so the
//! invariant holds whatever happens to the process. (A date before the floor lowers the queue as
//! any write does.) What the writer
//! wrote is noted in the queue's [`HoldLog`] instead, for the spout: new URLs due now are handed out
//! without reading them back from the index (no refresh to wait for), and when the queue is given
//! back its `nextDue` takes the earliest date written (see `spout`).
//!
//! Two rules keep this exact:
//! - The writer starts a write on the log ([`begin_write`](SharedHolds::begin_write)) only while the
//!   lease is valid, and the spout gives a queue back only when no write is in flight on it: a
//!   write is noted before the release reads the log, or it was started after the queue left
//!   [`SharedHolds`] and took the ordinary path (a queue edit before the URL write).
//! - A write that ends after its lease was lost is noted nowhere: the writer then sends the
//!   queue edit it skipped ([`finish_write`](SharedHolds::finish_write) says so).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use squall::frontier::{LearnedPace, Lease};
use squall::model::CrawlUrl;

use crate::status_index::DocumentRoutes;

/// URLs written due now that one hold keeps for hand-out at most; beyond them the spout reads the
/// queue again once the index shows them.
pub(crate) const MAX_ARRIVALS: usize = 1_000;

/// The shared part of one hold: the same from the queue's claim until it is given back.
#[derive(Debug, Clone)]
pub(crate) struct SharedHold {
    /// The lease, renewed by the upkeep and checked before each fetch.
    pub lease: Lease,
    /// What the claim wrote in `leaseOwner`: this process's owner and the hold's own name. Every
    /// later edit of the lease (renewal, release, drop) names it, so that an edit that reaches the
    /// queue late (retried by the engine after a failover, or by the client after a timeout) finds
    /// a later hold of the same process not its own, and changes nothing.
    pub holder: String,
    /// The queue's `nextDue` is no later than this while the hold lasts (it was listed as due
    /// then, and only a release raises it): a write dated from then on cannot need to lower it.
    pub due_floor: DateTime<Utc>,
    /// What this process's writer wrote for the queue during the hold.
    pub log: Arc<Mutex<HoldLog>>,
}

impl SharedHold {
    /// A new hold's shared part, with an empty log.
    pub fn new(lease: Lease, holder: String, due_floor: DateTime<Utc>) -> Self {
        SharedHold {
            lease,
            holder,
            due_floor,
            log: Arc::new(Mutex::new(HoldLog::default())),
        }
    }

    /// The log, even if a thread panicked while holding it (its contents stay consistent: each
    /// change is one field at a time).
    pub fn log(&self) -> MutexGuard<'_, HoldLog> {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl PartialEq for SharedHold {
    /// The same hold: the same lease and log.
    fn eq(&self, other: &Self) -> bool {
        self.lease == other.lease && Arc::ptr_eq(&self.log, &other.log)
    }
}

/// What this process's writer wrote for a held queue.
#[derive(Debug, Default)]
pub(crate) struct HoldLog {
    /// Every URL written, with the last due date written for it (`None`: never due again).
    pub dates: HashMap<String, Option<DateTime<Utc>>>,
    /// URLs created due now, not yet handed out.
    pub arrivals: Vec<CrawlUrl>,
    /// URLs created due now beyond [`MAX_ARRIVALS`]: the queue must be read again.
    pub overflowed: bool,
    /// A link to the queue found a URL that this hold did not write (another process wrote it,
    /// or an earlier run): it may be due, and only a read shows it.
    pub found_known: bool,
    /// Writes started and not yet noted.
    pub in_flight: usize,
    /// The pace the fetcher learned last for the queue, from the writes' reports: a queue given
    /// back keeps it between holders.
    pub pace: Option<LearnedPace>,
}

impl HoldLog {
    /// The earliest due date among the URLs written.
    pub fn earliest(&self) -> Option<DateTime<Utc>> {
        self.dates.values().flatten().min().copied()
    }

    /// Notes a pace the fetcher reported, kept if it is the one learned last.
    pub fn note_pace(&mut self, pace: Option<LearnedPace>) {
        self.pace = LearnedPace::newer(self.pace, pace);
    }
}

/// One URL written for a held queue, as the writer notes it.
#[derive(Debug, Clone)]
pub(crate) struct NotedWrite {
    /// The URL.
    pub url: CrawlUrl,
    /// The due date written.
    pub due: Option<DateTime<Utc>>,
    /// A new document due now: to hand out.
    pub arrived: bool,
    /// A DISCOVERED write that found the document there already.
    pub known: bool,
}

/// The queues this process holds, each with the shared part of its hold.
///
/// # Invariants
///
/// Checked with [`Hold`](super::hold::Hold)'s, by the same seeded interleavings:
///
/// 1. A write begins on a hold ([`begin_write`](Self::begin_write)) only while the queue is held
///    under a valid lease; otherwise the writer edits the queue itself.
/// 2. A write is noted in its hold's log only if, when it ends, the queue is still held under
///    that same hold with a valid lease ([`finish_write`](Self::finish_write)); otherwise nothing
///    is noted and the writer edits the queue. Either way its hold counts one write fewer in
///    flight.
/// 3. A hold is taken out to be given back ([`take_idle`](Self::take_idle)) only with no write in
///    flight on it: a write is noted before the release reads the log, or finds the queue no
///    longer held.
/// 4. A hold's log keeps at most [`MAX_ARRIVALS`] URLs to hand out.
///
/// With the holds goes the creation date of each URL document the spout read, which the writer's
/// replacement of the document carries over.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedHolds(Arc<DashMap<String, SharedHold>>, DocumentRoutes);

impl SharedHolds {
    /// The map itself.
    pub fn map(&self) -> &DashMap<String, SharedHold> {
        &self.0
    }

    /// The creation dates the spout read (by URL, until the writer replaced the document).
    pub fn dates(&self) -> &DocumentRoutes {
        &self.1
    }

    /// Starts a write for queue `key` if this process holds it with a valid lease: the hold the
    /// write is begun on, whose queue is not given back before [`finish_write`](Self::finish_write).
    pub fn begin_write(&self, key: &str) -> Option<SharedHold> {
        let entry = self.0.get(key)?;
        if !entry.lease.is_valid() {
            return None;
        }
        entry.log().in_flight += 1;
        Some(entry.value().clone())
    }

    /// Ends a write begun on `hold`, noting `written` (the writes that succeeded). Returns false
    /// when the lease was lost meanwhile: nothing is noted, and the writer must edit the queue.
    pub fn finish_write(&self, key: &str, hold: &SharedHold, written: Vec<NotedWrite>) -> bool {
        // Under the map's lock for `key`: the spout cannot take the queue out meanwhile.
        let still_held = self
            .0
            .get(key)
            .is_some_and(|entry| *entry == *hold && entry.lease.is_valid());
        let mut log = hold.log();
        log.in_flight = log.in_flight.saturating_sub(1);
        if !still_held {
            return false;
        }
        for noted in written {
            if noted.known {
                let ours = log.dates.contains_key(noted.url.url.as_str());
                log.found_known |= !ours;
                continue;
            }
            log.dates.insert(noted.url.url.to_string(), noted.due);
            if noted.arrived {
                if log.arrivals.len() < MAX_ARRIVALS {
                    log.arrivals.push(noted.url);
                } else {
                    log.overflowed = true;
                }
            }
        }
        true
    }

    /// Takes `key` out if no write is in flight on it: its hold, to give the queue back with its
    /// log; `None` when a write is in flight (try again later) or the queue is not held.
    pub fn take_idle(&self, key: &str) -> Option<SharedHold> {
        self.0
            .remove_if(key, |_, hold| hold.log().in_flight == 0)
            .map(|(_, hold)| hold)
    }

    /// Takes `key` out whatever is in flight (the lease is lost or the process stops).
    pub fn take(&self, key: &str) -> Option<SharedHold> {
        self.0.remove(key).map(|(_, hold)| hold)
    }
}
