//! The four spouts side by side on the same generated frontier, at several sizes.
//!
//! Each spout runs inside the real [`SpoutRunner`], and the fetcher is replaced by an immediate ack:
//! every URL emitted is written back at once as FETCHED (due in 30 days) through that frontier's own
//! status writer, then acked. So the frontier (queries and writes) is the only thing measured. For
//! each spout, interleaved and repeated: URLs emitted per second over a fixed window, query latency
//! p50 and p99, time to the first URL, and distinct hosts per 1,000 URLs. Then, in a frontier that
//! keeps up (nothing due), the delay before a brand-new host's first URL. And the shard size skew of
//! the host-routed status index against the urls index.
//!
//! **Budgets.** Every spout of the headline gets the same budget: 100 hosts per query and 10 URLs
//! per host (status-index spouts: `es.status.max.buckets` 100, `max.urls.per.bucket` 10, hybrid
//! reload 10; queue spout: holds at most 100 queues, claims at most 100 per query, reads at most 10
//! URLs per queue). One extra row, `queue-1000` ("queue (1000 held)"), is the queue spout at its best
//! setting: it holds up to `QUEUES_HELD` queues (1,000), still claiming at most 100 per query and
//! handing out at most 10 URLs of a queue at once, but reading a queue as the spout does by default
//! (60 URLs a read, `HELD_READ`: one read serves a long hold). It runs by default but is not part
//! of the equal-budget comparison.
//!
//! **Order.** The spouts take turns within each run, and the order is balanced over runs (ABBA):
//! runs come in pairs; pair `p` uses the spouts rotated by `p` places, its first run in that order
//! and its second in reverse. Over each pair every spout's mean position is the middle one, so a
//! drift during the run (segment merges, caches warming) weighs the same on every spout, and no
//! spout is always first or last; the rotation changes who opens and closes each pair. An odd
//! `RUNS` leaves the last pair half done (unbalanced; the JSON says so). Every window starts from a
//! fresh copy of the kept frontier, so that no spout meets the due URLs an earlier one used up.
//!
//! **Where the time goes.** For every window: the engine's work from its node statistics (CPU,
//! and the time and shard-level operations of search, indexing, refresh, get and merge), the
//! spout's queries as the runner waited on them, the queue spout's own stages (listing, claiming,
//! reading, handing out, releasing) and the write-back alongside, each per URL emitted. And the
//! ceiling: a raw `_bulk` of the same node into the same urls index (documents rewritten as they
//! are, so the frontier does not change), before and after the windows.
//!
//! **Kept frontiers.** Each size is loaded once and kept in the node (`bench-kept-…`, see
//! `common/kept_frontier.rs`); every run works on a copy (`_clone`, seconds at any size), so that
//! publishing this section does not wait for a 10 M load. A kept frontier older than `KEPT_DAYS`
//! (3) is loaded again: its URLs not due at load come due from an hour after it on. Kept frontiers
//! are merged to one segment a shard before their first use, so that every size starts settled.
//!
//! `cargo bench --bench spouts` prints JSON. Needs a node: `SQUALL_BENCH_ES` (default
//! http://127.0.0.1:9200), with a 4 GB heap for the default sizes (scripts/bench starts one). Settings
//! (env, `SQUALL_BENCH_` prefix): `SIZES` (default `1000000,10000000`; quick `20000`),
//! `WINDOW` seconds (20; quick 3), `RUNS` (2, one ABBA pair; quick 1), `SHARDS` (2, primaries of
//! every index of both frontiers), `HOSTS` (largest size / 50: 200,000 at 10 M), `MIN_DELAY_MS`
//! (0), `SPOUTS` (names, default all five: aggregation, collapsing, hybrid, queue, queue-1000),
//! `QUEUES_HELD` (1000, the extra row),
//! `ALL_DUE` (the size of the "all due" case, default the largest size; 0 leaves it out),
//! `KEEP_BACKGROUND` (1: keep the largest frontier, nothing due, for the end-to-end benchmark,
//! whose crawls want 8 primaries: run it with `SHARDS=8`, or the end-to-end benchmark loads its own),
//! `NEW_HOSTS` (0 leaves the new-host trials out), `CEILING_DOCS` (documents of each raw `_bulk`,
//! 100,000; quick 5,000), `KEPT_DAYS` (3).
//!
//! **All due.** After the sizes, a frontier of `ALL_DUE` URLs over the same hosts with every URL
//! due (a frontier just seeded or just migrated: StormCrawler's issue 262 is this case for the
//! aggregation spout) is loaded into indices of its own, and every spout gets the same windows on
//! it, in the same orders.

mod common;
#[path = "spouts/frontier.rs"]
mod frontier;
#[path = "spouts/kept.rs"]
mod kept;
#[path = "spouts/kind.rs"]
mod kind;
#[path = "spouts/summary.rs"]
mod summary;
#[path = "spouts/trial.rs"]
mod trial;

use std::time::Duration;

use common::frontier_data::{delete, doc_count, due_count, names, shard_docs, skew};
use common::{engine_client, env_or, print_result, quick};
use squall_bench_schema::Run;
use squall_bench_schema::spouts::{
    QueryBudget, RunOrder, Runner, ShardCounts, ShardSkew, SpoutSize, Spouts,
};
use squall_engine::client::EsClient;

use frontier::{Indices, nothing_due, release_leases};
use kept::{Start, ceiling, keep_background, kept_frontiers};
use kind::{HOSTS_PER_QUERY, Kind, URLS_PER_HOST, order, queues_held};
use summary::{slowest, spread, summarize};
use trial::{Trial, Until, run_trial};

/// The benchmark's settings, read from the environment (see the crate's doc).
struct Settings {
    /// The frontier sizes, in URLs.
    sizes: Vec<u64>,
    /// The largest of them.
    largest: u64,
    /// Each trial's window.
    window: Duration,
    /// Runs of every spout.
    runs: usize,
    /// Whether the order of the spouts is balanced over the runs (an even number of runs).
    balanced: bool,
    /// Primaries of every index of both frontiers.
    shards: u32,
    /// Hosts of the generated frontiers.
    hosts: u64,
    /// The spouts run.
    kinds: Vec<Kind>,
    /// The spouts' order in each run.
    orders: Vec<Vec<Kind>>,
}

impl Settings {
    fn read() -> Settings {
        let sizes: Vec<u64> = std::env::var("SQUALL_BENCH_SIZES")
            .unwrap_or_else(|_| {
                if quick() {
                    "20000".into()
                } else {
                    "1000000,10000000".into()
                }
            })
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
        let largest = sizes.iter().copied().max().unwrap_or(0);
        let window = Duration::from_secs_f64(env_or("WINDOW", if quick() { 3.0 } else { 20.0 }));
        let runs: usize = env_or("RUNS", if quick() { 1 } else { 2 }).max(1);
        let balanced = runs.is_multiple_of(2);
        if !balanced && !quick() {
            eprintln!(
                "spouts: {runs} runs is odd: the order of the spouts is not balanced (use an even number)"
            );
        }
        // One primary a core of the benchmark machine (2): measured side by side at 10 M, 8 primaries
        // (StormCrawler's archetype has 10) cost the spouts 40 to 50 % of their rate on two cores.
        let shards: u32 = env_or("SHARDS", 2);
        let hosts: u64 = env_or("HOSTS", (largest / 50).max(10));
        let kinds = Kind::selected();
        let orders: Vec<Vec<Kind>> = (0..runs).map(|r| order(&kinds, r)).collect();
        Settings {
            sizes,
            largest,
            window,
            runs,
            balanced,
            shards,
            hosts,
            kinds,
            orders,
        }
    }
}

/// The "all due" case: a frontier of `size` URLs, every one due (just seeded or just migrated), in
/// indices of its own; one window of each spout per run, in the same orders.
async fn all_due_phase(client: &EsClient, size: u64, settings: &Settings) -> SpoutSize {
    let Settings {
        hosts,
        shards,
        window,
        ref orders,
        ..
    } = *settings;
    let run = std::process::id();
    let indices = Indices::named("bench-alldue", run);
    let targets = indices.targets();
    let kept_frontiers = kept_frontiers(hosts, shards, true);
    let kept = kept_frontiers.ensure(client, &[size]).await;
    let Some((_, kept)) = kept.first() else {
        panic!("no kept frontier of {size} URLs, all due");
    };
    let start = Start {
        frontiers: &kept_frontiers,
        kept,
        targets: &targets,
    };
    start.copy(client).await;
    let due_urls = due_count(client, &indices.urls).await;
    let phase = format!("{run}-all-due-{size}");
    let first_ceiling = ceiling(&kept_frontiers, kept.epoch, &indices.urls, size).await;
    let trials = windows(client, &indices, orders, &phase, window, &start).await;
    let last_ceiling = ceiling(&kept_frontiers, kept.epoch, &indices.urls, size).await;
    let mut kinds: Vec<Kind> = orders.first().cloned().unwrap_or_default();
    kinds.sort_by_key(|k| Kind::ALL.iter().position(|a| a == k));
    let spouts = summarize(&kinds, &trials, &[], window);
    let mut names = names(&targets);
    names.push(indices.workers());
    delete(
        client,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    SpoutSize {
        urls: size,
        hosts: Some(hosts),
        hosts_present: None,
        due_urls: Some(due_urls),
        load_seconds: kept.load_seconds,
        raw_bulk_docs_per_second: spread(&[first_ceiling, last_ceiling]),
        frontier_epoch: Some(kept.epoch.to_rfc3339()),
        shards: None,
        spouts,
    }
}

/// The delay before a brand-new host's first URL, once per spout and run, in a frontier made to
/// keep up (nothing due).
async fn new_host_trials(
    client: &EsClient,
    indices: &Indices,
    orders: &[Vec<Kind>],
    phase: &str,
) -> Vec<(Kind, Option<Duration>)> {
    eprintln!("spouts: {phase}, new hosts in a frontier that keeps up");
    nothing_due(client, indices).await;
    let mut new_hosts = Vec::new();
    for (r, kinds) in orders.iter().enumerate() {
        for &kind in kinds {
            let until = Until::NewHost {
                host: format!("new-{}-{phase}-{r}.test", kind.name()),
                settle: Duration::from_secs(3),
                limit: Duration::from_secs(60),
            };
            let owner = format!("bench-new-{phase}-{r}-{}", kind.name());
            let trial = run_trial(kind, client, indices, &owner, until).await;
            eprintln!("  {}: new host after {:?}", kind.name(), trial.new_host);
            new_hosts.push((kind, trial.new_host));
            release_leases(client, indices).await;
        }
    }
    new_hosts
}

/// One window of every spout in each run's order, leases given back between them.
async fn windows(
    client: &EsClient,
    indices: &Indices,
    orders: &[Vec<Kind>],
    phase: &str,
    window: Duration,
    start: &Start<'_>,
) -> Vec<(Kind, Trial)> {
    let mut trials = Vec::new();
    for (r, kinds) in orders.iter().enumerate() {
        for &kind in kinds {
            eprintln!("spouts: {phase}, run {r}, {}", kind.name());
            start.copy(client).await;
            let owner = format!("bench-{phase}-{r}-{}", kind.name());
            let trial = run_trial(kind, client, indices, &owner, Until::Window(window)).await;
            eprintln!(
                "  {} URLs in {:?}, {} queries; slowest: {}",
                trial.keys.len(),
                window,
                trial.latencies_ms.len(),
                slowest(&trial.latencies_ms, 4)
            );
            trials.push((kind, trial));
            release_leases(client, indices).await;
        }
    }
    trials
}

/// One size of the headline: a fresh copy of its kept frontier (`start`), its shards, the
/// ceiling before and after the windows of every spout, then the new-host trials; the largest
/// kept as the end-to-end benchmark's background when asked.
async fn size_phase(
    client: &EsClient,
    settings: &Settings,
    indices: &Indices,
    start: &Start<'_>,
    size: u64,
) -> SpoutSize {
    let kept = start.kept;
    start.copy(client).await;
    let status_docs = shard_docs(client, &indices.status).await;
    let urls_docs = shard_docs(client, &indices.urls).await;
    let due_urls = due_count(client, &indices.urls).await;
    let hosts_present = doc_count(client, &indices.queues).await;

    let first_ceiling = ceiling(start.frontiers, kept.epoch, &indices.urls, size).await;
    let phase = format!("{}-{size}", std::process::id());
    let orders = &settings.orders;
    let trials = windows(client, indices, orders, &phase, settings.window, start).await;
    let last_ceiling = ceiling(start.frontiers, kept.epoch, &indices.urls, size).await;
    let new_hosts_measured = env_or("NEW_HOSTS", 1) == 1;
    let new_hosts = if new_hosts_measured {
        new_host_trials(client, indices, orders, &phase).await
    } else {
        Vec::new()
    };
    let spouts = summarize(&settings.kinds, &trials, &new_hosts, settings.window);
    let shard_skew = |docs: Vec<u64>| ShardSkew {
        skew: Some(skew(&docs)),
        docs,
    };
    let result = SpoutSize {
        urls: size,
        hosts: Some(settings.hosts),
        hosts_present,
        due_urls: Some(due_urls),
        load_seconds: kept.load_seconds,
        raw_bulk_docs_per_second: spread(&[first_ceiling, last_ceiling]),
        frontier_epoch: Some(kept.epoch.to_rfc3339()),
        shards: Some(ShardCounts {
            status_routed: Some(shard_skew(status_docs)),
            urls: Some(shard_skew(urls_docs)),
        }),
        spouts,
    };
    if size == settings.largest && env_or("KEEP_BACKGROUND", 0) == 1 {
        if !new_hosts_measured {
            nothing_due(client, indices).await;
        }
        keep_background(client, start.targets).await;
    }
    result
}

/// The benchmark's JSON: its settings, each size's figures and the "all due" case's.
fn spouts_result(settings: &Settings, sizes: Vec<SpoutSize>, all_due: Option<SpoutSize>) -> Spouts {
    Spouts {
        run: Run::named("spouts"),
        window_seconds: Some(settings.window.as_secs_f64()),
        runs: Some(settings.runs as u64),
        order: Some(RunOrder {
            scheme: Some(
                "ABBA: pair p of runs uses the spouts rotated by p places, first run in that \
                 order, second reversed"
                    .to_string(),
            ),
            balanced: Some(settings.balanced),
            runs: settings
                .orders
                .iter()
                .map(|o| o.iter().map(|k| k.name().to_string()).collect())
                .collect(),
        }),
        shards: Some(u64::from(settings.shards)),
        runner: Some(Runner {
            min_delay_ms: Some(env_or::<u64>("MIN_DELAY_MS", 0) as f64),
            max_pending: Some(2000),
            purgatory_seconds: Some(30.0),
        }),
        query_budget: Some(QueryBudget {
            hosts_per_query: Some(HOSTS_PER_QUERY as u64),
            urls_per_host: Some(URLS_PER_HOST as u64),
            queues_held: Some(HOSTS_PER_QUERY as u64),
            claims_per_query: Some(HOSTS_PER_QUERY as u64),
            extra_queues_held: Some(queues_held() as u64),
        }),
        sizes,
        all_due,
    }
}

#[tokio::main]
async fn main() {
    let client = engine_client();
    let settings = Settings::read();
    let indices = Indices::named("bench", std::process::id());
    let targets = indices.targets();
    let kept_frontiers = kept_frontiers(settings.hosts, settings.shards, false);
    let mut results = Vec::new();
    for (size, kept) in kept_frontiers.ensure(&client, &settings.sizes).await {
        let start = Start {
            frontiers: &kept_frontiers,
            kept: &kept,
            targets: &targets,
        };
        results.push(size_phase(&client, &settings, &indices, &start, size).await);
    }
    delete(
        &client,
        &[
            &indices.status,
            &indices.urls,
            &indices.queues,
            &indices.workers(),
        ],
    )
    .await;
    let all_due_size: u64 = env_or("ALL_DUE", settings.largest);
    let all_due = if all_due_size > 0 {
        Some(all_due_phase(&client, all_due_size, &settings).await)
    } else {
        None
    };
    print_result(&spouts_result(&settings, results, all_due));
}
