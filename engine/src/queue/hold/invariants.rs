//! Seeded random interleavings of holds of one queue — reads, the writer's writes (begun and
//! finished apart), hand-outs, URLs done or failed back, leases lost, the queue given back and
//! claimed again — on the pure state, with the time passed in as a value and the urls index a map.
//! After every step the invariants of [`Hold`] and [`SharedHolds`] are checked; a failure names
//! its seed, and `SQUALL_SEED=<n>` runs the seeds from `n` on.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use squall::frontier::{BusyUrls, LearnedPace, Lease, PaceCause};
use squall::model::CrawlUrl;

use super::Hold;
use crate::queue::reads::{QueueRead, ReadRequest, ReadUrl};
use crate::queue::settings::{PaceBounds, QueueSpoutConfig};
use crate::queue::shared_holds::{MAX_ARRIVALS, NotedWrite, SharedHold, SharedHolds};
use crate::status_index::schema::StoredDocument;

const KEY: &str = "q.test";
const VISIBILITY: Duration = Duration::from_secs(3);
const POLITENESS: Duration = Duration::from_secs(1);
/// The bounds of a learned pace, for the seeds whose policy learns one.
const PACE_BOUNDS: PaceBounds = PaceBounds {
    floor: Duration::from_millis(250),
    max: Duration::from_secs(20),
    decay: Duration::from_secs(30),
};

fn crawl_url(url: &str) -> CrawlUrl {
    CrawlUrl::new(url::Url::parse(url).expect("a test URL"))
}

fn millis(n: u64) -> TimeDelta {
    TimeDelta::milliseconds(i64::try_from(n).unwrap_or(i64::MAX))
}

/// One URL written: its date, and how the urls index took it.
#[derive(Clone)]
struct Write {
    url: String,
    due: Option<DateTime<Utc>>,
    /// A new document (else it replaced one).
    created: bool,
    /// A DISCOVERED write of a URL the index has: it changes nothing.
    known: bool,
}

/// Writes begun on a hold and not finished yet (a page's links being written).
struct Pending {
    hold: SharedHold,
    writes: Vec<Write>,
}

struct World {
    seed: u64,
    rng: fastrand::Rng,
    /// The wall clock, and the process's clock, moved together by the test.
    now: DateTime<Utc>,
    seen: Instant,
    /// The urls index: each URL of the queue and its due date (`None`: never due again).
    index: BTreeMap<String, Option<DateTime<Utc>>>,
    holds: SharedHolds,
    hold: Hold,
    /// URLs in the topology: handed out and not done or failed yet, by any hold.
    topology: BTreeSet<String>,
    /// `topology` as a [`BusyUrls`], until it changes.
    busy: Option<BusyUrls>,
    /// URLs handed out by the current hold and not failed back.
    handed: BTreeSet<String>,
    pending: Vec<Pending>,
    /// The queue document's `heldDue`: the earliest date written since the last release by the
    /// writes that edited the queue (those not noted in a hold, or dated before its floor).
    held_due: Option<DateTime<Utc>>,
    /// The spout's settings: the politeness delay, and the pace bounds when the policy learns.
    settings: QueueSpoutConfig,
    /// The queue document's learned pace: the one learned last, by any holder.
    stored_pace: Option<LearnedPace>,
    urls_made: u64,
    claims: u64,
    releases: u64,
}

impl World {
    fn new(seed: u64) -> Self {
        let now = DateTime::<Utc>::from_timestamp_millis(1_700_000_000_000).expect("a date");
        let mut world = World {
            seed,
            rng: fastrand::Rng::with_seed(seed),
            now,
            seen: Instant::now(),
            index: BTreeMap::new(),
            holds: SharedHolds::default(),
            hold: Hold::new(new_shared(0, now), Instant::now(), String::new()),
            topology: BTreeSet::new(),
            busy: None,
            handed: BTreeSet::new(),
            pending: Vec::new(),
            held_due: None,
            settings: QueueSpoutConfig::new("urls", "queues"),
            stored_pace: None,
            urls_made: 0,
            claims: 0,
            releases: 0,
        };
        world.settings.politeness_delay = POLITENESS;
        // Two seeds in three under a policy that learns (not drawn: the seeds play as before).
        world.settings.pace_bounds = (!seed.is_multiple_of(3)).then_some(PACE_BOUNDS);
        for _ in 0..world.rng.usize(0..8) {
            let (due, url) = (world.some_date(), world.new_url());
            world.index.insert(url, due);
        }
        world.claim();
        world
    }

    fn new_url(&mut self) -> String {
        self.urls_made += 1;
        format!("http://{KEY}/{}", self.urls_made)
    }

    /// A due date: most often due already, else soon, sometimes never.
    fn some_date(&mut self) -> Option<DateTime<Utc>> {
        match self.rng.u32(0..10) {
            0..=5 => Some(self.now - millis(self.rng.u64(0..20_000))),
            6..=8 => Some(self.now + millis(self.rng.u64(1..20_000))),
            _ => None,
        }
    }

    /// The topology as the spout sees it (built again only when it changed).
    fn busy(&mut self) -> BusyUrls {
        if let Some(busy) = &self.busy {
            return busy.clone();
        }
        let busy = BusyUrls::in_topology_of(self.topology.iter().cloned());
        self.busy = Some(busy.clone());
        busy
    }

    /// Claims the queue: a new hold, perhaps last written just before (read again later).
    fn claim(&mut self) {
        self.claims += 1;
        let shared = new_shared(self.claims, self.now);
        self.holds.map().insert(KEY.to_string(), shared.clone());
        self.hold = Hold::new(shared, self.seen, String::new());
        self.hold.pace = self.stored_pace;
        self.handed.clear();
        if self.rng.bool() {
            let written = self.now - millis(self.rng.u64(0..5_000));
            self.hold
                .reread_after(written + TimeDelta::from_std(VISIBILITY).expect("a delay"));
            self.hold
                .look_early(written + TimeDelta::milliseconds(1_250));
        }
    }

    fn step(&mut self) {
        match self.rng.u32(0..100) {
            0..=13 => self.read(),
            14..=27 => self.hand_out(),
            28..=39 => self.complete(),
            40..=43 => self.fail(),
            44..=52 => self.begin_links(),
            53..=61 => self.finish_links(),
            62..=67 => self.settle(),
            68..=73 => {
                let (visibility, busy) = (
                    TimeDelta::from_std(VISIBILITY).expect("a delay"),
                    self.busy(),
                );
                self.hold.take_arrivals(&busy, self.now, visibility);
            }
            74..=79 => {
                let visibility = TimeDelta::from_std(VISIBILITY).expect("a delay");
                let waiting = self.rng.bool();
                self.hold.note_idle(self.now, visibility, waiting);
            }
            80..=89 => self.give_back(),
            90 => self.close(),
            91 => self.lose_lease(),
            _ => {
                let step = self.rng.u64(0..1_500);
                self.now += millis(step);
                self.seen += Duration::from_millis(step);
            }
        }
        self.check();
    }

    /// The fetch of a URL taught the fetcher a pace for the queue (out of the bounds at times):
    /// the writer notes it in the hold and writes it to the queue document. Drawn from the clock,
    /// not the seed's generator, so that the seeds play the interleavings they played before.
    fn learn_pace(&mut self) {
        let millis = self.now.timestamp_millis().unsigned_abs();
        let pace = LearnedPace {
            delay: Duration::from_millis(millis.wrapping_mul(7_919) % 40_000),
            cause: PaceCause::Http(429),
            strikes: (millis % 4) as u32,
            limit: None,
            at: self.now,
        };
        self.hold.shared.log().note_pace(Some(pace));
        self.stored_pace = LearnedPace::newer(self.stored_pace, Some(pace));
    }

    /// The least gap between holders the queue must keep, worked out apart from the spout's
    /// code: the pace learned last, halved for every decay it aged (in whole milliseconds), within
    /// the bounds, when the policy learns; else the politeness delay.
    fn expected_gap(&self) -> Duration {
        let (Some(bounds), Some(pace)) = (self.settings.pace_bounds, self.stored_pace) else {
            return POLITENESS;
        };
        let age = (self.now - pace.at).num_milliseconds().max(0) as u128;
        let halvings = (age / bounds.decay.as_millis()).min(64) as u32;
        let millis = pace.delay.as_millis() >> halvings;
        let floor = bounds.floor.as_millis();
        Duration::from_millis(millis.clamp(floor, bounds.max.as_millis()) as u64)
    }

    /// Reads the queue if the hold asks to, as the urls index answers (reads.rs's query).
    fn read(&mut self) {
        let (size, low) = (self.rng.usize(1..6), self.rng.usize(0..4));
        let Some(kind) = self.hold.read_kind(low, self.now) else {
            return;
        };
        let request = self.hold.next_read(KEY, size, kind);
        let (read, busy) = (self.answer(&request), self.busy());
        self.hold.take_read(read, &busy, self.now);
    }

    /// The index's answer to `request`: the queue's URLs after its cursor, by date, one more than
    /// asked; the due ones, then the date of the first that is not.
    fn answer(&self, request: &ReadRequest) -> QueueRead {
        let mut hits: Vec<(i64, &String)> = self
            .index
            .iter()
            .map(|(url, due)| (due.map_or(i64::MAX, |d| d.timestamp_millis()), url))
            .filter(|(date, url)| {
                request
                    .after
                    .as_ref()
                    .is_none_or(|after| *date >= after.date && !after.taken.contains(url))
            })
            .collect();
        hits.sort();
        hits.truncate(request.size.max(1) + 1);
        let mut read = QueueRead::default();
        for &(date, url) in &hits {
            if date > self.now.timestamp_millis() {
                read.next = DateTime::<Utc>::from_timestamp_millis(date);
                return read;
            }
            let doc = StoredDocument {
                created: None,
                url: crawl_url(url),
                key: Some(KEY.to_string()),
                status: None,
                next_fetch: DateTime::<Utc>::from_timestamp_millis(date),
            };
            read.due.push(ReadUrl {
                doc,
                id: url.clone(),
                date,
            });
        }
        read.more = hits.len() > request.size.max(1);
        read
    }

    fn hand_out(&mut self) {
        let room = self.rng.usize(0..4);
        let (mut batch, busy) = (Vec::new(), self.busy());
        self.hold.hand_out(KEY, room, &busy, self.now, &mut batch);
        let seed = self.seed;
        assert!(batch.len() <= room, "seed {seed}: more URLs than room");
        for due in batch {
            let url = due.url.url.to_string();
            assert!(
                !self.topology.contains(&url),
                "seed {seed}: {url} handed out while in the topology"
            );
            assert_eq!(due.key, KEY, "seed {seed}: handed out under another key");
            assert!(
                due.hints.lease.as_ref() == Some(&self.hold.shared.lease),
                "seed {seed}: {url} handed out without its hold's lease"
            );
            self.topology.insert(url.clone());
            self.busy = None;
            self.handed.insert(url);
        }
    }

    /// A URL of the topology fetched: its status written (its next date), then it leaves.
    fn complete(&mut self) {
        let Some(url) = self.pick_out() else {
            return;
        };
        let due = match self.rng.u32(0..4) {
            0 => None,
            1 => Some(self.now),
            _ => Some(self.now + millis(self.rng.u64(1..60_000))),
        };
        let write = Write {
            url: url.clone(),
            due,
            created: false,
            known: false,
        };
        if let Some(pending) = self.begin(vec![write]) {
            self.finish(pending);
        }
        self.learn_pace();
        self.topology.remove(&url);
        self.busy = None;
    }

    /// A URL of the topology failed back unfetched: it stays due.
    fn fail(&mut self) {
        let Some(url) = self.pick_out() else {
            return;
        };
        self.topology.remove(&url);
        self.busy = None;
        let ours = self.handed.remove(&url);
        let had = self.hold.failed(&url, self.now);
        assert_eq!(
            had, ours,
            "seed {}: {url} failed back, known to the hold: {had}, handed out by it: {ours}",
            self.seed
        );
    }

    fn pick_out(&mut self) -> Option<String> {
        let count = self.topology.len();
        if count == 0 {
            return None;
        }
        let at = self.rng.usize(0..count);
        self.topology.iter().nth(at).cloned()
    }

    /// A page's links to the queue: new URLs due now, or URLs the index has (DISCOVERED, known).
    fn begin_links(&mut self) {
        let mut writes = Vec::new();
        for _ in 0..self.rng.usize(1..4) {
            let existing = self
                .index
                .keys()
                .nth(self.rng.usize(0..self.index.len().max(1)));
            match existing {
                Some(url) if self.index.len() >= 20 || self.rng.u32(0..3) == 0 => {
                    writes.push(Write {
                        url: url.clone(),
                        due: self.index.get(url).copied().flatten(),
                        created: false,
                        known: true,
                    })
                }
                _ => {
                    let due = Some(self.now - millis(self.rng.u64(0..2_000)));
                    let url = self.new_url();
                    writes.push(Write {
                        url,
                        due,
                        created: true,
                        known: false,
                    });
                }
            }
        }
        if let Some(pending) = self.begin(writes) {
            self.pending.push(pending);
        }
    }

    fn finish_links(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = self.pending.remove(self.rng.usize(0..self.pending.len()));
        self.finish(pending);
    }

    /// Begins writes as the writer does: on the hold if the queue is held with a valid lease,
    /// else editing the queue first; the URL documents are written at once.
    fn begin(&mut self, writes: Vec<Write>) -> Option<Pending> {
        let held = self
            .holds
            .map()
            .get(KEY)
            .is_some_and(|hold| hold.lease.is_valid());
        let began = self.holds.begin_write(KEY);
        assert_eq!(
            began.is_some(),
            held,
            "seed {}: a write begun on a hold iff the queue is held under a valid lease",
            self.seed
        );
        for write in writes.iter().filter(|w| !w.known) {
            self.index.insert(write.url.clone(), write.due);
            let floor = began.as_ref().map(|hold| hold.due_floor);
            if floor.is_none_or(|floor| write.due.is_some_and(|due| due < floor)) {
                self.lower_held_due(write.due);
            }
        }
        began.map(|hold| Pending { hold, writes })
    }

    fn finish(&mut self, pending: Pending) {
        let seed = self.seed;
        let still_held = self
            .holds
            .map()
            .get(KEY)
            .is_some_and(|hold| *hold == pending.hold && hold.lease.is_valid());
        let (in_flight, dates) = {
            let log = pending.hold.log();
            (log.in_flight, log.dates.clone())
        };
        let notes = pending
            .writes
            .iter()
            .map(|write| NotedWrite {
                url: crawl_url(&write.url),
                due: write.due,
                arrived: write.created && write.due.is_some_and(|due| due <= self.now),
                known: write.known,
            })
            .collect();
        let noted = self.holds.finish_write(KEY, &pending.hold, notes);
        assert_eq!(
            noted, still_held,
            "seed {seed}: writes noted iff their hold is still held under a valid lease"
        );
        let log = pending.hold.log();
        assert_eq!(log.in_flight + 1, in_flight, "seed {seed}: in flight");
        if !noted {
            assert_eq!(
                log.dates, dates,
                "seed {seed}: a write noted on a lost hold"
            );
            drop(log);
            // The writer edits the queue instead, as a write of an unheld queue.
            for write in pending.writes.iter().filter(|w| !w.known) {
                self.lower_held_due(write.due);
            }
        }
    }

    fn lower_held_due(&mut self, due: Option<DateTime<Utc>>) {
        if let Some(due) = due {
            self.held_due = Some(self.held_due.map_or(due, |held| held.min(due)));
        }
    }

    fn settle(&mut self) {
        let busy = self.busy();
        self.hold.settle(&busy, VISIBILITY, self.seen, self.now);
    }

    /// Gives the queue back as the spout does, when it is drained (a release) or closing with
    /// nothing out or its lease lost (a drop), and claims it again.
    fn give_back(&mut self) {
        let lost = !self.hold.shared.lease.is_valid();
        let closed = self.hold.closing && self.hold.outstanding.is_empty();
        let drained = self.hold.drained(self.now);
        if lost {
            let taken = self.holds.take(KEY);
            assert!(taken.is_some(), "seed {}: a lost hold taken out", self.seed);
        } else if closed || drained {
            let in_flight = self.hold.shared.log().in_flight;
            let Some(taken) = self.holds.take_idle(KEY) else {
                assert!(
                    in_flight > 0,
                    "seed {}: a hold kept with no write in flight",
                    self.seed
                );
                return;
            };
            assert!(in_flight == 0, "seed {}: a hold taken mid-write", self.seed);
            assert!(
                taken == self.hold.shared,
                "seed {}: another hold",
                self.seed
            );
            if drained {
                self.check_release();
            }
        } else {
            return;
        }
        self.hold.shared.lease.revoke();
        self.claim();
    }

    /// A drained hold given back: the queue's `nextDue` (the hold's next date, or `heldDue` when
    /// earlier) is no later than any URL of the queue outside the topology and not being written
    /// — at once, when that URL is due already.
    fn check_release(&mut self) {
        self.releases += 1;
        let next_due = [self.hold.next_due(), self.held_due]
            .into_iter()
            .flatten()
            .min();
        let writing: BTreeSet<&String> = self
            .pending
            .iter()
            .flat_map(|pending| pending.writes.iter().map(|write| &write.url))
            .collect();
        for (url, due) in &self.index {
            let Some(due) = due else { continue };
            if self.topology.contains(url) || writing.contains(url) {
                continue;
            }
            assert!(
                next_due.is_some_and(|next| next <= (*due).max(self.now)),
                "seed {}: given back due at {next_due:?}, after {url} (due {due})",
                self.seed
            );
        }
        self.held_due = None;
    }

    /// The spout marks the hold for giving back (held long enough, or beyond its share).
    fn close(&mut self) {
        self.hold.closing = true;
    }

    /// The lease found taken, or run out: the writer stops noting, the spout drops the hold.
    fn lose_lease(&mut self) {
        self.hold.shared.lease.revoke();
    }

    /// The invariants of `Hold` and `SharedHolds`, after every step.
    fn check(&self) {
        let (hold, seed) = (&self.hold, self.seed);
        let ready: Vec<String> = hold.ready.iter().map(|url| url.url.to_string()).collect();
        let ready_set: BTreeSet<&String> = ready.iter().collect();
        assert_eq!(
            ready_set.len(),
            ready.len(),
            "seed {seed}: a URL twice ready"
        );
        let queued: BTreeSet<&String> = hold.queued.iter().collect();
        assert_eq!(
            queued, ready_set,
            "seed {seed}: queued is not what is ready"
        );
        for url in &hold.outstanding {
            assert!(!ready_set.contains(url), "seed {seed}: {url} ready and out");
            assert!(
                self.handed.contains(url),
                "seed {seed}: {url} out but not handed out by this hold"
            );
        }
        if hold.drained(self.now) {
            assert!(
                hold.ready.is_empty() && hold.outstanding.is_empty(),
                "seed {seed}: drained with URLs in hand"
            );
            assert!(
                hold.read_at.is_some() && !hold.more && !hold.closing,
                "seed {seed}: drained unread, mid-read or closing"
            );
            assert!(
                [hold.reread_at, hold.idle_look_at]
                    .into_iter()
                    .flatten()
                    .all(|at| hold.read_at.is_some_and(|read| read >= at)),
                "seed {seed}: drained with a read owed or an idle look due"
            );
        }
        if hold.closing {
            assert!(
                hold.read_kind(5, self.now).is_none(),
                "seed {seed}: a closing hold reads"
            );
        }
        assert_eq!(
            hold.latest_pace(),
            self.stored_pace,
            "seed {seed}: the hold knows another pace than the one learned last"
        );
        let gap = self
            .settings
            .gap_between_holders(hold.latest_pace(), self.now);
        let back = hold.given_back_at(self.now, gap);
        assert!(back >= self.now, "seed {seed}: given back in the past");
        if let Some(done) = hold.last_done {
            let polite = TimeDelta::from_std(self.expected_gap()).expect("a delay");
            assert!(
                back >= done + polite,
                "seed {seed}: given back within the gap between holders of its last fetch"
            );
        }
        let log = hold.shared.log();
        assert!(log.arrivals.len() <= MAX_ARRIVALS, "seed {seed}: arrivals");
    }
}

fn new_shared(claim: u64, now: DateTime<Utc>) -> SharedHold {
    // A lease far off, ended only by revoking it: the test never waits on the clock.
    let lease = Lease::until(Instant::now() + Duration::from_secs(24 * 3600));
    SharedHold::new(lease, format!("owner#test.{claim}"), now)
}

fn run(seed: u64) -> (u64, u64) {
    let mut world = World::new(seed);
    for _ in 0..2_000 {
        world.step();
    }
    (world.claims, world.releases)
}

#[test]
fn random_interleavings_keep_the_invariants_of_holds() {
    let (mut claims, mut releases) = (0, 0);
    for seed in squall_testsite::seeds(58, 100) {
        let (claimed, released) = run(seed);
        claims += claimed;
        releases += released;
    }
    // The runs went through whole holds, not only their first steps.
    assert!(claims > 1_000, "{claims} claims");
    assert!(releases > 100, "{releases} releases checked");
}
