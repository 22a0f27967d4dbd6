//! The dual-index queue frontier: a urls index (StormCrawler-shaped documents, no routing) and a
//! queues index (one document per key, with `nextDue`, a lease and shared politeness state), shared
//! by any number of crawler processes.
//!
//! # Words
//!
//! - A **claim** takes a queue: a conditional update of its document that writes a lease.
//! - A **hold** is this process holding a queue, from its claim until it gives the queue back:
//!   `Hold` (`hold.rs`) is the spout's side of it, `SharedHold` the part shared with the upkeep
//!   and the writer (the lease, the holder, the writer's log: `shared_holds.rs`), `SharedHolds`
//!   all of them.
//! - The **holder** is the hold's name, written in `leaseOwner`: the process's owner, `#`, and a
//!   name of its own (`host-42#1f3a9c07.12`); every later edit of the lease names it.
//! - Giving a queue back is a **release** (which dates the queue: `nextDue`) or a **drop**
//!   (which leaves `nextDue` as it is).
//! - `seen_before` is a claim's time less the urls index's visibility delay: what was written
//!   before it shows in the reads the hold makes.
//!
//! # Files
//!
//! | file | its job |
//! |---|---|
//! | `spout.rs` | the spout's rounds: drop and claim at once, read, hand out, release |
//! | `claiming.rs` | the claim protocol: list due queues, claim them in one conditional `_bulk` |
//! | `hold.rs` | one hold on the spout's side: what it read, handed out, reads next, its next date |
//! | `shared_holds.rs` | what the spout shares of its holds with the upkeep and the writer |
//! | `reads.rs` | reading held queues' URLs: one light query per queue, in `_msearch` |
//! | `upkeep.rs` | in the background: lease renewals, the heartbeat, the fair share |
//! | `writer.rs` | the `StatusStore`: URL writes, noted in holds or lowering their queues |
//! | `edit_rules.rs` | each change to a queue document, as a Painless script and as Rust |
//! | `edit_apply.rs` | applying those edits: scripted updates, or conditional rounds without Painless |
//! | `schema.rs` | the queues index's mapping, document id and upserts |
//! | `pace.rs` | a queue's learned pace: its fields, written by reports, read back by claims |
//! | `fields.rs` | the queues index's field names, declared once |
//! | `settings.rs` | the spout's settings, and the delays derived from them |
//! | `timings.rs` | where the spout's rounds spend their time |
//!
//! # Invariants
//!
//! 1. **At most one live lease per queue.** A process claims a queue only with a conditional update
//!    (`if_seq_no`) of the version its listing showed unleased (`leaseUntil` missing or past); of
//!    several processes racing for it, one wins and the others get a conflict. Renewals and
//!    releases do nothing unless `leaseOwner` is still the caller's holder: it names the process
//!    and the hold, so that an edit reaching the queue late (a release retried by the engine
//!    after a failover) cannot touch a later hold of the same process. Every change that depends on what
//!    a queue holds (renewals, releases, writers lowering `nextDue`) is atomic: a Painless script the
//!    engine runs, or, on an engine without Painless, the same rule in Rust written back only if
//!    the queue is still the version it was computed from ([`edit_rules`]; `es.queues.updates`).
//! 2. **A process fetches from a queue only while its lease is valid.** Leases are renewed in the
//!    background every quarter TTL, not by the query loop. Each URL handed out carries
//!    the queue's [`Lease`](squall::frontier::Lease), which this process trusts for four fifths of the
//!    TTL after the request that set it was sent; the fetcher checks it before each fetch and fails
//!    the URL back unfetched once it lapsed or was revoked (fencing). Another process can claim the
//!    queue only after the full TTL, by its clock.
//! 3. **For a queue nobody holds, `nextDue` is no later than its earliest URL's date**, once writes
//!    are visible. A writer of a queue this process does not hold only lowers `nextDue` (one upsert
//!    per key per batch, before the URL documents, so no URL is ever written without its queue).
//!    While a process holds a queue, its `nextDue` is no later than the time it was listed as due
//!    (only a release raises it), so the holder's own writes dated from then on need not edit the
//!    queue: they are noted in the hold's log (`shared_holds.rs`) instead. Only a release raises `nextDue`: to the
//!    earliest of the first URL not due at the holder's last read, the dates it wrote during the
//!    hold and any due URL it did not hand out, or to `heldDue` — the earliest due date another
//!    writer wrote since the claim — when that write came after the claim less the urls index's
//!    visibility delay ([`QueueSpoutConfig::visibility`]), since it may not have shown in the
//!    read. A queue is given back only when no write of the holder is in flight on it, so a write
//!    is either noted before the release or finds the queue no longer held and edits it. A holder
//!    that dies leaves `nextDue` as it was, no later than anything it wrote. A DISCOVERED write of a
//!    URL that already exists changes nothing and touches no queue. A queue given back early (hold
//!    ended, share exceeded, process stopping, lease lost) keeps its `nextDue` untouched.
//!    A queue is claimed only once the visibility delay passed since its last lease ended, so its
//!    new holder's reads show what the last holder wrote (no URL fetched twice for a stale date).
//! 4. **Every due URL is eventually emitted.** By 3, a queue with a due URL is listed as due once
//!    unheld; by 5 it is claimed within a bound; its holder reads its earliest URLs when it claims it
//!    (and again while the last read was all due URLs, or once writes just before the claim show),
//!    and hands out what its own writer created for it meanwhile, leaving out only those in its
//!    topology, done within the visibility delay, or written during the hold (whose dates the
//!    release takes from the hold).
//! 5. **Fairness.** Listing puts never-held queues first, then those given back longest ago. A
//!    process holds at most its share (the queues with work divided by the live processes, from a
//!    heartbeat in the workers index), and gives back a queue held longer than
//!    [`max_hold`](QueueSpoutConfig::max_hold) while due queues wait. With D due queues and C
//!    queues held by all processes together, a due queue is claimed within about
//!    ⌈D / C⌉ × (`max_hold` + the time to finish the URLs it handed out + a refresh).
//!    A drained queue goes back at once while due queues wait (the links its own pages found to it
//!    were noted in the hold before those pages were acked). Otherwise it is read again, up to
//!    twice a visibility delay apart, and goes back only if those reads find nothing: links to it
//!    found by other processes reach the index but not its hold, and given back it would sit out
//!    the cool-down before anyone could fetch them. A link of its own pages that finds a URL the
//!    hold did not write (another process found it first) has it read again once the index shows
//!    that URL.
//! 6. **Politeness across holders, at the pace learned.** A queue given back carries in
//!    `leaseUntil` the end of its last fetch plus the gap between holders, and nobody claims it
//!    before: the politeness delay, or, under a policy that learns (`fetcher.pace.policy` other
//!    than `fixed`), the pace learned last for the queue (`pace.rs`: kept on the queue document by
//!    every report, newest first, aged and bounded as the fetcher ages a pace it adopts); the
//!    crawl delay when longer. Its next holder's fetcher starts from that pace.
//!
//! # Index settings, and the visibility rules that follow from them
//!
//! Indices this crawler creates (an existing index keeps its own settings, which are read back):
//!
//! - **urls index**: `es.status.index.shards` primaries (2 by default, where a status index has
//!   StormCrawler's 10: every shard takes part in each read and each refresh, which at 10 shards
//!   cost the engine about twice as much per crawled page; no routing, so every shard holds about
//!   as many URLs, and a read of one queue is a term query each shard answers from its own
//!   postings), sorted on disk by `nextFetchDate` then `url` (reads stop at their page),
//!   and a **1 s refresh**.
//! - **queues index**: 1 primary (one small document per host: 200,000 hosts are a few tens of
//!   MB) and a 1 s refresh.
//!
//! The refresh interval `r` of the urls index is read from the index when the frontier opens;
//! with refresh off, 30 s is assumed. The **visibility delay** is `2 r + 1 s` (one refresh, and one
//! more for a replica refreshing on its own schedule, plus a margin:
//! [`QueueSpoutConfig::visibility`]). From it:
//!
//! - This process's own writes for the queues it holds are handed out at once, whatever `r`: they
//!   are noted in the hold, not read back.
//! - A URL written for a queue nobody holds (a new host, or another process's link) is handed out
//!   once the urls index shows it: a queue whose last write is less than the visibility delay
//!   older than its claim is read at once, again one refresh (and a quarter of a second) after
//!   that write, when the index most likely shows it, and a last time once the visibility delay
//!   has passed.
//! - A queue given back is not claimed again (by anyone) within the visibility delay, so that the
//!   next holder's reads show what the last one wrote: no URL is handed out with a date already
//!   replaced.
//! - A date another writer wrote after the claim less the visibility delay is kept in `heldDue`
//!   and folded into the release.
//!
//! Why 1 s and not StormCrawler's 5 s: in the end-to-end benchmark (2,000 hosts at 1 s, published
//! at 2e65a31) refreshes cost 0.20 ms of the engine's 0.58 ms per crawled page, so a 5 s refresh
//! could save at most about a third of the engine's work; but it would make every new host wait
//! up to 11 s before its first URL (the aim is ≤ 2 s), and a queue given back sit out 11 s before
//! another process could take it. A user who prefers the lower cost sets the refresh on the index
//! (`PUT /<urls>/_settings`), and the delays above follow it.

mod claiming;
pub mod edit_apply;
pub mod edit_rules;
pub mod fields;
mod hold;
pub mod pace;
mod reads;
pub mod schema;
mod settings;
mod shared_holds;
pub mod spout;
pub mod timings;
mod upkeep;
mod writer;

pub use settings::{PaceBounds, QueueSpoutConfig, default_owner};
pub use spout::{QueueLeases, QueueSpout};
pub use writer::QueueStatusStore;
