//! Seeded random interleavings of several queue spouts sharing one frontier on the real node:
//! claims, reads, acks with new due dates, new URLs and new hosts written mid-lease, instances
//! dropped without giving anything back (a crash) and instances paused past their lease. Checked
//! against a model of every date written:
//!
//! - online, at every hand-out and every "fetch": no other instance holds a valid lease on the
//!   queue (one live lease per queue; a process fetches only under its lease);
//! - after each epoch, once quiet: nothing due is left unemitted, every URL has the date last
//!   written for it, and every queue nobody holds has `nextDue` no later than its earliest URL.
//!
//! Run once per way the engine makes queue updates (Painless scripts where served, conditional
//! writes always). Reproducible from its seed. `SQUALL_INTERLEAVINGS_SEED` (default: from the clock, printed),
//! `SQUALL_INTERLEAVINGS_OPS` operations per epoch (default 250), `SQUALL_INTERLEAVINGS_SECONDS`
//! (default 0: one epoch; otherwise epochs until that long). The long run:
//!
//! ```sh
//! SQUALL_INTERLEAVINGS_SECONDS=1800 cargo test -p squall-engine --test engine queue_interleavings:: -- --nocapture
//! ```

use crate::support;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use squall::frontier::{BusyUrls, DueUrl, Lease, Spout};
use squall::frontier::{StatusStore, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::Method;
use squall_engine::client::indices::ensure_index;
use squall_engine::client::{EsClient, RequestBody, UpdateMode};
use squall_engine::queue::schema::queues_index_body;
use squall_engine::queue::{QueueSpout, QueueSpoutConfig, QueueStatusStore};
use squall_engine::status_index::schema::{KeyField, format_date};

const INSTANCES: usize = 3;
const LEASE_TTL: Duration = Duration::from_secs(3);

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One spout instance, as one crawler process would run it.
struct Instance {
    spout: QueueSpout,
    /// The process's writer, which notes its writes for the queues the spout holds.
    store: QueueStatusStore,
    /// URLs handed out and not yet acked or failed.
    outstanding: Vec<DueUrl>,
    /// Paused (no query, no fetch, no renewal) until then.
    paused_until: Option<Instant>,
}

/// What was written, and what happened.
#[derive(Default)]
struct Model {
    /// Every URL's last written due date, with its key.
    dates: BTreeMap<String, (String, DateTime<Utc>)>,
    hosts: Vec<String>,
    violations: Vec<String>,
    counts: BTreeMap<&'static str, u64>,
}

impl Model {
    fn count(&mut self, what: &'static str, n: u64) {
        *self.counts.entry(what).or_default() += n;
    }
}

struct World {
    client: EsClient,
    urls: String,
    queues: String,
    /// A writer of no process's: every write it makes edits its queue.
    store: QueueStatusStore,
    instances: Vec<Instance>,
    generation: usize,
    model: Model,
    rng: ChaCha8Rng,
}

impl World {
    async fn new(seed: u64, mode: UpdateMode) -> Self {
        let client = support::client_updating(mode).await;
        let urls = support::status_index(&client, "interleave-urls", 2).await;
        let queues = support::unique_index("interleave-queues");
        ensure_index(&client, &queues, queues_index_body(1, 0, "1s"))
            .await
            .expect("queues index");
        let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
        let mut world = World {
            client,
            urls,
            queues,
            store,
            instances: Vec::new(),
            generation: 0,
            model: Model::default(),
            rng: ChaCha8Rng::seed_from_u64(seed),
        };
        for _ in 0..INSTANCES {
            let instance = world.instance();
            world.instances.push(instance);
        }
        world
    }

    fn instance(&mut self) -> Instance {
        self.generation += 1;
        let settings = QueueSpoutConfig {
            owner: format!("instance-{}", self.generation),
            lease_ttl: LEASE_TTL,
            max_queues: 3,
            max_claims_per_query: 2,
            max_urls_per_queue: 4,
            max_hold: Duration::from_secs(2),
            refresh_interval: Duration::from_secs(1),
            ..QueueSpoutConfig::new(&self.urls, &self.queues)
        };
        let spout = QueueSpout::new(self.client.clone(), settings);
        Instance {
            store: spout.status_store(),
            spout,
            outstanding: Vec::new(),
            paused_until: None,
        }
    }

    fn awake(&self, i: usize) -> bool {
        self.instances[i]
            .paused_until
            .is_none_or(|until| Instant::now() >= until)
    }

    /// Whether an instance other than `i` holds a valid lease on `key`.
    fn other_holder(&self, i: usize, key: &str) -> Option<usize> {
        (0..self.instances.len()).find(|&j| {
            j != i
                && self.instances[j].outstanding.iter().any(|due| {
                    due.key == key && due.hints.lease.as_ref().is_some_and(Lease::is_valid)
                })
        })
    }

    /// Writes through instance `by`'s writer, or the writer of no process's.
    async fn write(&mut self, by: Option<usize>, writes: Vec<StatusWrite>) {
        let store = match by {
            Some(i) => &self.instances[i].store,
            None => &self.store,
        };
        let outcomes = store.store(writes.clone()).await;
        for (write, outcome) in writes.into_iter().zip(outcomes) {
            match outcome {
                Ok(()) => {
                    let known = self.model.dates.contains_key(write.url.url.as_str());
                    if let Some(due) = write.next_fetch
                        && !(known && write.status == Status::Discovered)
                    {
                        self.model
                            .dates
                            .insert(write.url.url.to_string(), (write.key, due));
                    }
                }
                Err(error) => self
                    .model
                    .violations
                    .push(format!("a write failed: {} {error}", write.url.url)),
            }
        }
    }

    /// New URLs, on known hosts or a new one, due now or a little before.
    async fn discover(&mut self) {
        let new_host = self.model.hosts.is_empty()
            || (self.model.hosts.len() < 150 && self.rng.random_bool(0.2));
        let host = if new_host {
            let host = format!("h{}.test", self.model.hosts.len());
            self.model.hosts.push(host.clone());
            host
        } else {
            let i = self.rng.random_range(0..self.model.hosts.len());
            self.model.hosts[i].clone()
        };
        let n = self.rng.random_range(1..6);
        let mut writes = Vec::new();
        for _ in 0..n {
            let page = self.rng.random_range(0..40);
            let url = format!("http://{host}/p{page}");
            let due = Utc::now() - TimeDelta::milliseconds(self.rng.random_range(0..60_000));
            writes.push(status_write(&url, &host, Status::Discovered, due));
        }
        self.model
            .count("urls written as discovered", writes.len() as u64);
        // Outlinks found by one of the processes (its writer notes those of its own queues), or
        // URLs written by another program.
        let by = self.rng.random_range(0..=self.instances.len());
        let by = (by < self.instances.len()).then_some(by);
        self.write(by, writes).await;
    }

    async fn query(&mut self, i: usize) {
        let busy = BusyUrls::in_topology_of(
            self.instances[i]
                .outstanding
                .iter()
                .map(|due| due.url.url.to_string()),
        );
        let batch = match self.instances[i].spout.next_batch(&busy).await {
            Ok(batch) => batch,
            Err(error) => {
                self.model.count("failed queries", 1);
                eprintln!("query failed (retried later): {error}");
                return;
            }
        };
        self.model.count("queries", 1);
        self.model.count("urls handed out", batch.len() as u64);
        for due in batch {
            if !due.hints.lease.as_ref().is_some_and(Lease::is_valid) {
                self.model
                    .violations
                    .push(format!("{} handed out without a valid lease", due.url.url));
            }
            if let Some(j) = self.other_holder(i, &due.key) {
                self.model.violations.push(format!(
                    "{} handed out to instance {i} while instance {j} holds a valid lease on {}",
                    due.url.url, due.key
                ));
            }
            let stale = self
                .model
                .dates
                .get(due.url.url.as_str())
                .is_some_and(|(_, date)| *date > Utc::now());
            if stale {
                self.model.count("handed out with a date since moved", 1);
            }
            self.instances[i].outstanding.push(due);
        }
    }

    /// "Fetches" one outstanding URL of instance `i` and writes its new date, or fails it back if
    /// its lease lapsed (fencing).
    async fn fetch(&mut self, i: usize) {
        if self.instances[i].outstanding.is_empty() {
            return;
        }
        let pick = self
            .rng
            .random_range(0..self.instances[i].outstanding.len());
        let due = self.instances[i].outstanding.swap_remove(pick);
        if !due.hints.may_fetch() {
            self.model.count("fenced (failed back unfetched)", 1);
            self.instances[i].spout.fail(&due.url).await;
            return;
        }
        if let Some(j) = self.other_holder(i, &due.key) {
            self.model.violations.push(format!(
                "{} fetched by instance {i} while instance {j} holds a valid lease on {}",
                due.url.url, due.key
            ));
        }
        let roll = self.rng.random_range(0..4);
        let (status, next) = match roll {
            0 => (Status::FetchError, Utc::now() - TimeDelta::seconds(1)),
            1 => (
                Status::Fetched,
                Utc::now() + TimeDelta::milliseconds(self.rng.random_range(500..5000)),
            ),
            _ => (Status::Fetched, Utc::now() + TimeDelta::days(1)),
        };
        self.model.count("fetches", 1);
        let write = status_write(due.url.url.as_str(), &due.key, status, next);
        self.write(Some(i), vec![write]).await;
        self.instances[i].spout.ack(&due.url).await;
    }

    /// Drops instance `i` without closing it, as a process killed with SIGKILL; a new one starts.
    fn crash(&mut self, i: usize) {
        self.model.count("crashes", 1);
        let replacement = self.instance();
        self.instances[i] = replacement;
    }

    /// Pauses instance `i` past its lease TTL, as SIGSTOP would.
    fn pause(&mut self, i: usize) {
        self.model.count("pauses", 1);
        let instance = &mut self.instances[i];
        instance.spout.suspend_upkeep();
        instance.paused_until = Some(Instant::now() + LEASE_TTL * 3 / 2);
    }

    async fn step(&mut self) {
        let i = self.rng.random_range(0..self.instances.len());
        let roll = self.rng.random_range(0..100);
        if !self.awake(i) && roll < 90 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            return;
        }
        match roll {
            0..30 => self.query(i).await,
            30..60 => {
                // Any awake instance with URLs to fetch.
                let ready: Vec<usize> = (0..self.instances.len())
                    .filter(|&j| self.awake(j) && !self.instances[j].outstanding.is_empty())
                    .collect();
                if !ready.is_empty() {
                    let j = ready[self.rng.random_range(0..ready.len())];
                    self.fetch(j).await;
                }
            }
            60..75 => self.discover().await,
            75..77 => self.crash(i),
            77..79 => self.pause(i),
            _ => {
                let pause = self.rng.random_range(0..300);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
        }
    }

    /// Runs every instance without faults, fetching everything with a date a day ahead, until
    /// nothing is due and nothing is held; a due URL never handed out is a violation.
    async fn quiesce(&mut self) {
        let started = Instant::now();
        for instance in &mut self.instances {
            instance.paused_until = None;
        }
        let mut quiet_rounds = 0;
        while started.elapsed() < Duration::from_secs(120) {
            let mut emitted = 0;
            for i in 0..self.instances.len() {
                self.query(i).await;
                emitted += self.instances[i].outstanding.len();
                while let Some(due) = self.instances[i].outstanding.pop() {
                    if !due.hints.may_fetch() {
                        self.instances[i].spout.fail(&due.url).await;
                        continue;
                    }
                    self.model.count("fetches while quiescing", 1);
                    let next = Utc::now() + TimeDelta::days(1);
                    let write = status_write(due.url.url.as_str(), &due.key, Status::Fetched, next);
                    self.write(Some(i), vec![write]).await;
                    self.instances[i].spout.ack(&due.url).await;
                }
            }
            let due_in_model = self
                .model
                .dates
                .values()
                .any(|(_, date)| *date <= Utc::now() + TimeDelta::hours(1));
            let mut idle = true;
            for instance in &mut self.instances {
                idle &= instance.spout.frontier_idle().await.unwrap_or(false);
            }
            quiet_rounds = if emitted == 0 && !due_in_model && idle {
                quiet_rounds + 1
            } else {
                0
            };
            if quiet_rounds >= 2 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let now = Utc::now();
        let never: Vec<&String> = self
            .model
            .dates
            .iter()
            .filter(|(_, (_, date))| *date <= now)
            .map(|(url, _)| url)
            .take(10)
            .collect();
        self.model.violations.push(format!(
            "not quiet after 120 s; due URLs never handed out (first 10): {never:?}"
        ));
    }

    /// The index against the model, and the queues against their URLs.
    async fn check_indices(&mut self) {
        self.refresh().await;
        let stored = self.stored_dates().await;
        for (url, (_, date)) in &self.model.dates {
            let expected = format_date(*date);
            match stored.get(url) {
                Some(Some(found)) if *found == expected => {}
                other => self.model.violations.push(format!(
                    "{url}: last written date {expected}, stored {other:?}"
                )),
            }
        }
        let earliest = self.earliest_per_key().await;
        let now = format_date(Utc::now());
        for queue in self.queue_docs().await {
            let key = queue["key"].as_str().unwrap_or_default().to_string();
            let leased = queue["leaseUntil"]
                .as_str()
                .is_some_and(|until| until > now.as_str())
                && !queue["leaseOwner"].is_null();
            let Some(first) = earliest.get(&key) else {
                continue;
            };
            let next_due = queue["nextDue"].as_str();
            if !leased && next_due.is_none_or(|due| due > first.as_str()) {
                self.model.violations.push(format!(
                    "queue {key}: nextDue {next_due:?} later than its earliest URL {first}: {queue}"
                ));
            }
        }
    }

    async fn refresh(&self) {
        let path = format!("/{},{}/_refresh", self.urls, self.queues);
        self.client
            .request(Method::Post, &path, &[], None)
            .await
            .expect("refresh");
    }

    async fn search(&self, index: &str, body: Value) -> Value {
        self.client
            .request(
                Method::Post,
                &format!("/{index}/_search"),
                &[],
                Some(RequestBody::Json(body)),
            )
            .await
            .expect("search")
    }

    async fn stored_dates(&self) -> HashMap<String, Option<String>> {
        let answer = self
            .search(
                &self.urls,
                json!({ "size": 10000, "_source": ["url", "nextFetchDate"] }),
            )
            .await;
        answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|hit| {
                let url = hit["_source"]["url"].as_str()?.to_string();
                let date = hit["_source"]["nextFetchDate"].as_str().map(str::to_string);
                Some((url, date))
            })
            .collect()
    }

    async fn earliest_per_key(&self) -> HashMap<String, String> {
        let answer = self
            .search(
                &self.urls,
                json!({ "size": 0, "aggs": { "keys": {
                    "terms": { "field": "key", "size": 10000 },
                    "aggs": { "first": { "min": { "field": "nextFetchDate" } } }
                } } }),
            )
            .await;
        answer["aggregations"]["keys"]["buckets"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|bucket| {
                let key = bucket["key"].as_str()?.to_string();
                let millis = bucket["first"]["value"].as_f64()? as i64;
                Some((key, format_date(DateTime::from_timestamp_millis(millis)?)))
            })
            .collect()
    }

    async fn queue_docs(&self) -> Vec<Value> {
        let answer = self.search(&self.queues, json!({ "size": 10000 })).await;
        answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|hit| hit["_source"].clone())
            .collect()
    }

    async fn delete(self) {
        for index in [
            self.urls.clone(),
            self.queues.clone(),
            format!("{}-workers", self.queues),
        ] {
            support::delete_index(&self.client, &index).await;
        }
    }
}

fn status_write(url: &str, key: &str, status: Status, due: DateTime<Utc>) -> StatusWrite {
    StatusWrite {
        url: CrawlUrl::seed(url::Url::parse(url).expect("url")),
        key: key.to_string(),
        status,
        next_fetch: Some(due),
        queue: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_interleavings_keep_the_queue_frontier_invariants() {
    let seed = env_number(
        "SQUALL_INTERLEAVINGS_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(1),
    );
    let ops = env_number("SQUALL_INTERLEAVINGS_OPS", 250);
    let budget = Duration::from_secs(env_number("SQUALL_INTERLEAVINGS_SECONDS", 0));
    eprintln!("interleavings: seed {seed} (SQUALL_INTERLEAVINGS_SEED={seed} reproduces it)");
    // Each way the engine makes queue updates: Painless scripts where it serves them, and the
    // conditional writes every engine serves.
    for mode in support::update_modes().await {
        interleave(seed, ops, budget, mode).await;
    }
}

async fn interleave(seed: u64, ops: u64, budget: Duration, mode: UpdateMode) {
    let mut world = World::new(seed, mode).await;
    let started = Instant::now();
    let mut epochs = 0;
    loop {
        for _ in 0..8 {
            world.discover().await;
        }
        for _ in 0..ops {
            world.step().await;
        }
        world.quiesce().await;
        world.check_indices().await;
        epochs += 1;
        world.model.count("epochs", 1);
        if !world.model.violations.is_empty() || started.elapsed() >= budget {
            break;
        }
    }
    eprintln!(
        "interleavings ({mode:?}): seed {seed}, {epochs} epochs in {:.0} s, {} URLs, {} hosts: {:?}",
        started.elapsed().as_secs_f64(),
        world.model.dates.len(),
        world.model.hosts.len(),
        world.model.counts
    );
    let violations = std::mem::take(&mut world.model.violations);
    world.delete().await;
    assert!(
        violations.is_empty(),
        "seed {seed}, {mode:?}: {} invariant violations:\n{}",
        violations.len(),
        violations.join("\n")
    );
}
