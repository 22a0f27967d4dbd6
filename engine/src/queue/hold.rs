//! One queue this process holds, as its spout sees it: what it read and has not handed out yet,
//! what is out in the topology, when to read it again, and what it knows of the queue's next date.
//! Pure state: every method that needs the time is given it.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use squall::frontier::{BusyUrls, DueUrl, LearnedPace, QueueHints};
use squall::model::CrawlUrl;

use super::reads::{Cursor, QueueRead, ReadRequest};
use super::shared_holds::SharedHold;

/// How many times a queue that ran out of work is read again (one visibility delay apart) while no
/// other queue waits, before it goes back.
const IDLE_LOOKS: u32 = 2;

/// Why a held queue is read now (see [`Hold::read_kind`]), the most pressing first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ReadKind {
    /// Its first read, right after the claim.
    First,
    /// What it read runs low, and more may be due.
    RunningLow,
    /// Writes its last read could not show have shown since (see
    /// [`reread_after`](Hold::reread_after) and [`look_early`](Hold::look_early)).
    Owed,
    /// It ran out of work: a look for URLs other processes wrote (see
    /// [`note_idle`](Hold::note_idle)).
    IdleLook,
}

/// A queue this process holds, from its claim until it is given back.
///
/// # Invariants
///
/// Checked after every step of seeded random interleavings of reads, writes, hand-outs, URLs done
/// or failed back, leases lost and give-backs, with the time given as a value
/// (`hold/invariants.rs`):
///
/// 1. **A URL is in hand once.** A URL is at most once among those ready, never both ready and
///    out (handed out, not yet settled back), and out only if this hold handed it out.
/// 2. **No URL is handed out while it is in the topology**, whichever hold handed it out before.
///    A hand-out gives at most the room asked for, each URL under this hold's lease and key.
/// 3. **A release strands nothing.** When a drained hold is given back, the date it writes
///    ([`next_due`](Self::next_due), or the queue's `heldDue` when earlier) is no later than any
///    URL of the queue outside the topology and not being written — and no later than the
///    release itself when that URL is due already. What it read, what the writer noted in its
///    log, due URLs it left because they were busy and URLs failed back all count.
/// 4. **Drained means done.** A hold is [`drained`](Self::drained) only once read, its last read
///    not a full page of due URLs, nothing ready or out, no read owed
///    ([`reread_after`](Self::reread_after)) nor idle look due ([`note_idle`](Self::note_idle)),
///    and not closing. A closing hold asks no read.
/// 5. **Politeness across holders.** The time written as `leaseUntil` when it is given back
///    ([`given_back_at`](Self::given_back_at)) is no earlier than then, nor than the gap between
///    holders (the politeness delay, or the pace learned last where the policy learns one; the
///    queue's crawl delay when longer) after its last URL came back.
#[derive(Debug)]
pub(crate) struct Hold {
    /// The lease, its holder name and the writer's log, shared with the upkeep and the writer.
    pub shared: SharedHold,
    /// When it was claimed, for the longest hold.
    pub claimed_at: Instant,
    /// The claim's wall-clock time less the urls index's visibility: due dates written from then
    /// on by other processes may be missing from this process's reads, so a release folds them in
    /// (`heldDue`).
    pub seen_before: String,
    /// The queue's crawl delay learned from robots.txt (by any process).
    pub crawl_delay: Option<Duration>,
    /// The pace the queue's last holder learned, as the claim read it.
    pub pace: Option<LearnedPace>,
    /// URLs read (or written by this process) and not handed out yet, earliest first.
    ready: VecDeque<CrawlUrl>,
    /// The URLs of `ready`, to leave out a URL read twice.
    queued: HashSet<String>,
    /// URLs handed out and possibly still in the topology.
    pub outstanding: Vec<String>,
    /// URLs that left the topology so recently that the index may still show their old dates.
    recently_done: Vec<(String, Instant)>,
    /// Given back once its outstanding URLs are done; not read any more.
    pub closing: bool,
    /// Where its next read resumes.
    cursor: Option<Cursor>,
    /// When it was last read (wall clock); `None` before its first read.
    read_at: Option<DateTime<Utc>>,
    /// The last read was all due URLs: more may be due after them.
    more: bool,
    /// The date of the first URL not due at the last read (after the cursor).
    next: Option<DateTime<Utc>>,
    /// Due URLs known but not handed out (busy when their turn came): the queue stays due.
    due_left: Option<DateTime<Utc>>,
    /// Read again once the index shows writes made until then: writes just before the claim
    /// (typically a new host, claimed as soon as its queue appeared), or URLs this process wrote
    /// beyond what the log keeps.
    reread_at: Option<DateTime<Utc>>,
    /// An earlier read of writes made just before the claim, once one refresh has passed since
    /// them: the index usually shows them by then, and `reread_at` stays as the sure look.
    early_look: Option<DateTime<Utc>>,
    /// Reads made since it last ran out of work (see [`note_idle`](Self::note_idle)).
    idle_looks: u32,
    /// When its next idle look is due (see [`note_idle`](Self::note_idle)).
    idle_look_at: Option<DateTime<Utc>>,
    /// When a URL handed out last left the topology (fetched, or failed back): no earlier than
    /// the end of the queue's last fetch.
    last_done: Option<DateTime<Utc>>,
}

impl Hold {
    /// A queue just claimed.
    pub fn new(shared: SharedHold, claimed_at: Instant, seen_before: String) -> Self {
        Hold {
            shared,
            claimed_at,
            seen_before,
            crawl_delay: None,
            pace: None,
            ready: VecDeque::new(),
            queued: HashSet::new(),
            outstanding: Vec::new(),
            recently_done: Vec::new(),
            closing: false,
            cursor: None,
            read_at: None,
            more: false,
            next: None,
            due_left: None,
            reread_at: None,
            last_done: None,
            early_look: None,
            idle_looks: 0,
            idle_look_at: None,
        }
    }

    /// Reads again once `at` passed (no earlier read shows what was written before it).
    pub fn reread_after(&mut self, at: DateTime<Utc>) {
        self.reread_at = Some(self.reread_at.map_or(at, |t| t.max(at)));
    }

    /// Also reads at `at`, before the sure look of [`reread_after`](Self::reread_after): for writes
    /// the index most likely shows by then.
    pub fn look_early(&mut self, at: DateTime<Utc>) {
        self.early_look = Some(self.early_look.map_or(at, |t| t.min(at)));
    }

    /// URLs read and not handed out yet.
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// The queue's next read of `size` URLs for `kind`: where the last one ended when it runs low,
    /// else from the queue's start. A URL written before the cursor's date may show only after a
    /// read went past it (the urls index's shards refresh apart), so a read owed for writes, or a
    /// look for others' links, starts over; the URLs in hand it finds again are skipped.
    pub fn next_read(&self, key: &str, size: usize, kind: ReadKind) -> ReadRequest {
        ReadRequest {
            key: key.to_string(),
            size,
            after: match kind {
                ReadKind::RunningLow => self.cursor.clone(),
                ReadKind::First | ReadKind::Owed | ReadKind::IdleLook => None,
            },
        }
    }

    /// Why the queue is to be read now, if it is: on its first turn, when what it read runs low
    /// and more may be due, once writes it could not see have shown, or for an idle look; never
    /// while closing. `low` is the number of ready URLs under which it reads more.
    pub fn read_kind(&self, low: usize, now: DateTime<Utc>) -> Option<ReadKind> {
        if self.closing {
            return None;
        }
        if self.read_at.is_none() {
            return Some(ReadKind::First);
        }
        if self.more && self.ready.len() < low {
            return Some(ReadKind::RunningLow);
        }
        let unread_since =
            |at: &Option<DateTime<Utc>>| at.is_some_and(|at| now >= at && !self.read_since(at));
        if unread_since(&self.reread_at) || unread_since(&self.early_look) {
            return Some(ReadKind::Owed);
        }
        unread_since(&self.idle_look_at).then_some(ReadKind::IdleLook)
    }

    /// Takes a read's answer in: its due URLs join `ready` (unless busy), its next date is kept.
    pub fn take_read(&mut self, read: QueueRead, busy: &BusyUrls, read_at: DateTime<Utc>) {
        self.read_at = Some(read_at);
        self.more = read.more;
        if !read.more {
            self.next = read.next;
        }
        // Written during this hold: their dates are in the log, whatever the index still shows.
        let written: HashSet<String> = {
            let log = self.shared.log();
            read.due
                .iter()
                .map(|url| url.doc.url.url.as_str())
                .filter(|text| log.dates.contains_key(*text))
                .map(str::to_string)
                .collect()
        };
        for url in read.due {
            self.cursor.get_or_insert_with(Cursor::default).take(&url);
            let text = url.doc.url.url.as_str();
            let done_lately = self.recently_done.iter().any(|(done, _)| done == text);
            let written = written.contains(text);
            if done_lately || written || self.outstanding.iter().any(|o| o == text) {
                continue;
            }
            if busy.contains(text) {
                let date = DateTime::<Utc>::from_timestamp_millis(url.date).unwrap_or(read_at);
                self.note_due_left(date);
                continue;
            }
            self.push_ready(url.doc.url);
        }
    }

    /// Takes in what this process's writer noted: URLs created due now, ready at once.
    pub fn take_arrivals(&mut self, busy: &BusyUrls, now: DateTime<Utc>, visibility: TimeDelta) {
        let (arrivals, overflowed, found_known) = {
            let mut log = self.shared.log();
            (
                std::mem::take(&mut log.arrivals),
                std::mem::take(&mut log.overflowed),
                std::mem::take(&mut log.found_known),
            )
        };
        if overflowed {
            self.more = true;
            self.reread_after(now + visibility);
        }
        if found_known {
            // Written by someone else, perhaps just now: read once the index shows it.
            self.reread_after(now + visibility);
        }
        for url in arrivals {
            let text = url.url.as_str();
            if busy.contains(text) || self.outstanding.iter().any(|o| o == text) {
                continue;
            }
            self.push_ready(url);
        }
    }

    fn push_ready(&mut self, url: CrawlUrl) {
        if self.queued.insert(url.url.to_string()) {
            self.ready.push_back(url);
        }
    }

    fn note_due_left(&mut self, date: DateTime<Utc>) {
        self.due_left = Some(self.due_left.map_or(date, |d| d.min(date)));
    }

    /// Hands out up to `room` ready URLs under the lease, at `now`.
    pub fn hand_out(
        &mut self,
        key: &str,
        room: usize,
        busy: &BusyUrls,
        now: DateTime<Utc>,
        batch: &mut Vec<DueUrl>,
    ) {
        let hints = QueueHints {
            crawl_delay: self.crawl_delay,
            lease: Some(self.shared.lease.clone()),
            // A queue given back is not claimed again before its politeness delay has run from
            // its last fetch (see `given_back_at`), nor while a Retry-After holds it.
            last_fetch: None,
            blocked_until: None,
            // The fetcher takes it if it is newer than the pace it keeps for the queue.
            pace: self.pace,
        };
        let mut given = 0;
        while given < room {
            let Some(url) = self.ready.pop_front() else {
                break;
            };
            let text = url.url.to_string();
            self.queued.remove(&text);
            if busy.contains(&text) {
                // In the purgatory: still due, and not this lease's to hand out now.
                self.note_due_left(now);
                continue;
            }
            self.outstanding.push(text);
            batch.push(DueUrl {
                url,
                key: key.to_string(),
                hints: hints.clone(),
            });
            given += 1;
        }
    }

    /// Moves URLs that left the topology to the recently done list, forgetting those done longer
    /// ago than the index's visibility delay; `seen` and `now` are the time, on the process's
    /// clock and on the wall clock.
    pub fn settle(
        &mut self,
        busy: &BusyUrls,
        visibility: Duration,
        seen: Instant,
        now: DateTime<Utc>,
    ) {
        let (in_topology, done): (Vec<String>, Vec<String>) = self
            .outstanding
            .drain(..)
            .partition(|url| busy.in_topology(url));
        self.outstanding = in_topology;
        if !done.is_empty() {
            self.last_done = Some(now);
        }
        self.recently_done
            .extend(done.into_iter().map(|url| (url, seen)));
        self.recently_done
            .retain(|(_, at)| seen.saturating_duration_since(*at) < visibility);
    }

    /// A URL handed out failed at `now`: it stays due in the index, so the queue does too.
    pub fn failed(&mut self, url: &str, now: DateTime<Utc>) -> bool {
        let had = self.outstanding.iter().any(|o| o == url);
        self.outstanding.retain(|o| o != url);
        self.recently_done.retain(|(done, _)| done != url);
        if had {
            self.note_due_left(now);
            self.last_done = Some(now);
        }
        had
    }

    /// The pace learned last for the queue: by this process's fetcher during the hold (noted by
    /// the writer), else as the claim read it.
    pub fn latest_pace(&self) -> Option<LearnedPace> {
        LearnedPace::newer(self.pace, self.shared.log().pace)
    }

    /// The time to write as the queue's `leaseUntil` when it is given back at `now`: no process
    /// claims it before, so the first fetch of whoever takes it next (another process, or this
    /// crawl resumed) keeps `delay` (or the queue's crawl delay, when longer) after its last fetch.
    pub fn given_back_at(&self, now: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
        let delay = self.crawl_delay.map_or(delay, |crawl| crawl.max(delay));
        let polite = self
            .last_done
            .and_then(|done| done.checked_add_signed(TimeDelta::from_std(delay).ok()?));
        polite.map_or(now, |polite| polite.max(now))
    }

    /// Notes whether the queue ran out of work (read through, nothing ready, nothing out). While it
    /// is idle and no other queue waits for a process, it is read again each time the index shows
    /// what was written a visibility delay earlier, up to [`IDLE_LOOKS`] times, before it may go
    /// back: links to it found by other processes reach its URLs but not this process's log, and a
    /// queue given back would sit out the cool-down before anyone could fetch them.
    pub fn note_idle(&mut self, now: DateTime<Utc>, visibility: TimeDelta, queues_waiting: bool) {
        if !self.read_through() {
            self.idle_looks = 0;
            return;
        }
        let pending = [self.reread_at, self.idle_look_at]
            .into_iter()
            .flatten()
            .any(|at| !self.read_since(at));
        if !queues_waiting && !pending && self.idle_looks < IDLE_LOOKS {
            self.idle_looks += 1;
            self.idle_look_at = Some(now + visibility);
        }
    }

    /// Whether the queue is drained: read through, nothing ready, nothing out, nothing to read again.
    pub fn drained(&self, now: DateTime<Utc>) -> bool {
        !self.closing
            && self.read_through()
            && [self.reread_at, self.idle_look_at]
                .into_iter()
                .flatten()
                .all(|at| now >= at && self.read_since(at))
    }

    /// Whether it ran out of work: read, the last read not a full page of due URLs, nothing ready
    /// or out.
    fn read_through(&self) -> bool {
        self.read_at.is_some() && !self.more && self.ready.is_empty() && self.outstanding.is_empty()
    }

    /// Whether a read was made at `at` or later.
    fn read_since(&self, at: DateTime<Utc>) -> bool {
        self.read_at.is_some_and(|read| read >= at)
    }

    /// The queue's next date when it is given back: the earliest of the first URL not due at the
    /// last read, the dates this process wrote during the hold, and due URLs not handed out.
    pub fn next_due(&self) -> Option<DateTime<Utc>> {
        [self.next, self.shared.log().earliest(), self.due_left]
            .into_iter()
            .flatten()
            .min()
    }
}

#[cfg(test)]
mod invariants;

#[cfg(test)]
mod tests {
    use super::*;
    use squall::frontier::Lease;

    fn hold() -> Hold {
        let lease = Lease::until(Instant::now() + Duration::from_secs(60));
        let shared = SharedHold::new(lease, "owner#1.1".into(), Utc::now());
        Hold::new(shared, Instant::now(), String::new())
    }

    fn empty_read(hold: &mut Hold, at: DateTime<Utc>) {
        let read = QueueRead {
            due: Vec::new(),
            next: None,
            more: false,
        };
        hold.take_read(read, &BusyUrls::none(), at);
    }

    #[test]
    fn a_queue_written_just_before_its_claim_is_read_at_once_then_early_then_surely() {
        let written = Utc::now();
        let (early, sure) = (
            written + TimeDelta::milliseconds(1250),
            written + TimeDelta::seconds(3),
        );
        let mut hold = hold();
        hold.reread_after(sure);
        hold.look_early(early);
        let wants = |hold: &Hold, at| hold.read_kind(5, at).is_some();
        assert!(wants(&hold, written), "the first read is at once");
        empty_read(&mut hold, written);
        assert!(!wants(&hold, early - TimeDelta::milliseconds(1)));
        assert!(
            wants(&hold, early),
            "read again one refresh after the write"
        );
        empty_read(&mut hold, early);
        assert!(!hold.drained(early), "not drained before the sure look");
        assert!(!wants(&hold, sure - TimeDelta::milliseconds(1)));
        assert!(wants(&hold, sure), "and once the visibility delay passed");
        empty_read(&mut hold, sure);
        assert!(!wants(&hold, sure + TimeDelta::seconds(10)));
        assert!(hold.drained(sure));
    }

    #[test]
    fn an_idle_queue_looks_twice_after_any_owed_read_then_drains() {
        let (start, visibility) = (Utc::now(), TimeDelta::seconds(1));
        let mut hold = hold();
        assert_eq!(hold.read_kind(5, start), Some(ReadKind::First));
        empty_read(&mut hold, start);
        let mut at = start;
        for look in 1..=IDLE_LOOKS {
            hold.note_idle(at, visibility, false);
            assert_eq!(
                hold.read_kind(5, at),
                None,
                "look {look} waits a visibility delay"
            );
            assert!(
                !hold.drained(at),
                "look {look} is due before the queue goes back"
            );
            at += visibility;
            assert_eq!(hold.read_kind(5, at), Some(ReadKind::IdleLook));
            hold.reread_after(at);
            assert_eq!(
                hold.read_kind(5, at),
                Some(ReadKind::Owed),
                "a read owed for writes is the more pressing"
            );
            empty_read(&mut hold, at);
        }
        hold.note_idle(at, visibility, false);
        assert_eq!(hold.read_kind(5, at + visibility), None);
        assert!(hold.drained(at), "drained after {IDLE_LOOKS} looks");
        assert!(ReadKind::Owed < ReadKind::IdleLook && ReadKind::First < ReadKind::RunningLow);
    }
}
