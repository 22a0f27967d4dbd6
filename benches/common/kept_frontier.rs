//! Generated frontiers loaded once and kept in the node between benchmark runs.
//!
//! Loading 10 M URLs takes about a quarter of an hour; the spouts benchmark needs the same frontier
//! at several sizes in every run. So each size is loaded once into indices of its own, kept
//! read-only (`bench-kept-…`), and every run works on a writable copy made with the engine's
//! `_clone` (its segments are linked, not rewritten: seconds at any size), deleted after use.
//! Sizes are built in increasing order, each from a copy of the next smaller kept size.
//!
//! A kept frontier records its generator's epoch in the urls index's mapping (`_meta`): the
//! generated due dates are relative to it, URLs not due at load time come due from an hour after
//! it on, so a frontier older than [`KeptFrontiers::max_age`] is loaded again. A size whose
//! indices are missing, incomplete or of another shape (hosts, shards) is loaded again too.
//!
//! A kept frontier is merged down to one segment a shard (`_forcemerge`) before its first use, as
//! search benchmarks do after their load: what a load leaves behind depends on its timing (37 to 58
//! segments at 10 M in the runs of 2026-12-05, 7 at 1 M), and every read of every spout visits every
//! segment, so without it the sizes would be compared on the load's leftovers rather than on their
//! sizes. The windows' own writes add segments to the copies as a running crawl's would.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};
use squall_engine::client::{EsClient, Method};

use super::frontier_data::{
    EarliestDue, Generator, Targets, call, call_json, clone_index, create, delete, doc_count,
    finish_load, load, names,
};

/// The `_meta` key under which a kept frontier describes itself.
const META: &str = "squall_bench";

/// The kept frontiers of one shape: generated over `hosts` hosts into `shards` primaries.
#[derive(Debug, Clone)]
pub struct KeptFrontiers {
    /// Hosts of the generator.
    pub hosts: u64,
    /// Primaries of the status and urls indices.
    pub shards: u32,
    /// Every URL due (the "all due" case) rather than a third.
    pub all_due: bool,
    /// Refresh interval of the copies, e.g. "1s".
    pub refresh: String,
    /// A kept frontier older than this (since its epoch) is loaded again.
    pub max_age: TimeDelta,
}

/// A kept frontier ready to copy.
#[derive(Debug, Clone)]
pub struct Kept {
    /// Its indices.
    pub targets: Targets,
    /// The epoch of its generator.
    pub epoch: DateTime<Utc>,
    /// Seconds spent loading it in this run; `None` when it was kept from an earlier run.
    pub load_seconds: Option<f64>,
}

impl KeptFrontiers {
    /// The indices of the kept frontier of `size` URLs.
    pub fn targets(&self, size: u64) -> Targets {
        self.named(&size.to_string())
    }

    fn named(&self, what: &str) -> Targets {
        let kind = if self.all_due { "alldue" } else { "due" };
        let prefix = format!("bench-kept-{kind}-{}h-{}s-{what}", self.hosts, self.shards);
        Targets {
            status: Some(format!("{prefix}-status")),
            queue_frontier: Some((format!("{prefix}-urls"), format!("{prefix}-queues"))),
        }
    }

    /// The generator of these frontiers, for dates relative to `epoch`.
    pub fn generator(&self, epoch: DateTime<Utc>) -> Generator {
        if self.all_due {
            Generator::all_due(self.hosts, epoch)
        } else {
            Generator::new(self.hosts, epoch)
        }
    }

    /// Makes sure a kept frontier of each of `sizes` exists, loading what is missing (smallest
    /// first, each grown from a copy of the one before), and gives them in the order of `sizes`.
    pub async fn ensure(&self, client: &EsClient, sizes: &[u64]) -> Vec<(u64, Kept)> {
        let mut ascending: Vec<u64> = sizes.to_vec();
        ascending.sort_unstable();
        ascending.dedup();
        let mut kept: Vec<(u64, Kept)> = Vec::new();
        for &size in &ascending {
            let found = self.find(client, size).await;
            let frontier = match found {
                Some(frontier) => {
                    eprintln!("kept frontier: {size} URLs from {}", frontier.epoch);
                    frontier
                }
                None => self.build(client, size, kept.last()).await,
            };
            settle(client, &frontier.targets).await;
            kept.push((size, frontier));
        }
        sizes
            .iter()
            .filter_map(|size| kept.iter().find(|(s, _)| s == size).cloned())
            .collect()
    }

    /// The kept frontier of `size` if it is whole, of this shape and young enough.
    async fn find(&self, client: &EsClient, size: u64) -> Option<Kept> {
        let targets = self.targets(size);
        let (status, urls, queues) = split(&targets);
        let meta = read_meta(client, &urls).await?;
        let epoch = meta["epoch"]
            .as_str()
            .and_then(|d| DateTime::parse_from_rfc3339(d).ok())?
            .with_timezone(&Utc);
        let whole = meta["size"].as_u64() == Some(size)
            && doc_count(client, &status).await == Some(size)
            && doc_count(client, &urls).await == Some(size)
            && doc_count(client, &queues).await.is_some_and(|n| n > 0);
        let young = Utc::now() - epoch <= self.max_age;
        if !whole || !young {
            eprintln!(
                "kept frontier: {size} URLs present but not usable (whole {whole}, young {young})"
            );
            return None;
        }
        Some(Kept {
            targets,
            epoch,
            load_seconds: None,
        })
    }

    /// Loads the frontier of `size`, starting from a copy of `from` (a smaller kept frontier) when
    /// there is one, and keeps it.
    async fn build(&self, client: &EsClient, size: u64, from: Option<&(u64, Kept)>) -> Kept {
        let started = std::time::Instant::now();
        let target = self.targets(size);
        let builder = self.named("building");
        delete_all(client, &target).await;
        delete_all(client, &builder).await;
        let (epoch, loaded, mut earliest) = match from {
            Some((from_size, kept)) => {
                copy(client, &kept.targets, &builder, true).await;
                let (_, _, queues) = split(&builder);
                let earliest = read_earliest(client, &queues).await;
                (kept.epoch, *from_size, earliest)
            }
            None => {
                create(client, &builder, self.shards).await;
                (Utc::now(), 0, EarliestDue::new())
            }
        };
        eprintln!(
            "kept frontier: loading {size} URLs over {} hosts (from {loaded})",
            self.hosts
        );
        let (_, urls, _) = split(&builder);
        let off = json!({ "index": { "refresh_interval": "-1" } });
        let all = names(&builder).join(",");
        call_json(client, Method::Put, &format!("/{all}/_settings"), off).await;
        let generator = self.generator(epoch);
        load(client, &generator, &builder, loaded..size, &mut earliest).await;
        finish_load(client, &builder, &self.refresh).await;
        let meta = json!({ "_meta": { META: { "epoch": epoch.to_rfc3339(), "size": size } } });
        call_json(client, Method::Put, &format!("/{urls}/_mapping"), meta).await;
        copy(client, &builder, &target, false).await;
        delete_all(client, &builder).await;
        let load_seconds = started.elapsed().as_secs_f64();
        eprintln!("kept frontier: {size} URLs kept after {load_seconds:.0} s");
        Kept {
            targets: target,
            epoch,
            load_seconds: Some(load_seconds),
        }
    }

    /// A writable copy of the kept frontier `kept` under the names of `to` (replacing them).
    pub async fn working_copy(&self, client: &EsClient, kept: &Kept, to: &Targets) {
        delete_all(client, to).await;
        copy(client, &kept.targets, to, true).await;
    }
}

/// Copies every index of `from` to the same place in `to`.
async fn copy(client: &EsClient, from: &Targets, to: &Targets, writable: bool) {
    for (source, target) in names(from).iter().zip(names(to)) {
        clone_index(client, source, &target, writable).await;
    }
}

/// Merges every index of `targets` down to one segment a shard (nothing to do, and at once, when it
/// is there already).
async fn settle(client: &EsClient, targets: &Targets) {
    for index in names(targets) {
        let started = std::time::Instant::now();
        call(
            client,
            Method::Post,
            &format!("/{index}/_forcemerge"),
            &[("max_num_segments", "1")],
            None,
        )
        .await;
        let seconds = started.elapsed().as_secs_f64();
        if seconds >= 1.0 {
            eprintln!("kept frontier: {index} merged to one segment a shard in {seconds:.0} s");
        }
    }
}

/// Deletes every index of `targets`.
pub async fn delete_all(client: &EsClient, targets: &Targets) {
    let names = names(targets);
    delete(
        client,
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
}

/// The status, urls and queues index names of `targets` (which has all three).
fn split(targets: &Targets) -> (String, String, String) {
    let status = targets.status.clone().unwrap_or_default();
    let (urls, queues) = targets.queue_frontier.clone().unwrap_or_default();
    (status, urls, queues)
}

/// What a kept frontier's urls index says of itself, if it exists and says anything.
async fn read_meta(client: &EsClient, urls: &str) -> Option<Value> {
    let answer = client
        .request(Method::Get, &format!("/{urls}/_mapping"), &[], None)
        .await
        .ok()?;
    let meta = answer[urls]["mappings"]["_meta"][META].clone();
    (!meta.is_null()).then_some(meta)
}

/// Every queue's `nextDue` in `queues`, the state a further load lowers.
async fn read_earliest(client: &EsClient, queues: &str) -> EarliestDue {
    let mut earliest = EarliestDue::new();
    let mut after: Option<Value> = None;
    loop {
        let mut body = json!({ "size": 10_000, "_source": ["key", "nextDue"],
            "sort": [ { "key": "asc" } ], "track_total_hits": false });
        if let Some(after) = &after {
            body["search_after"] = after.clone();
        }
        let answer = call_json(client, Method::Post, &format!("/{queues}/_search"), body).await;
        let hits = answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let Some(last) = hits.last() else {
            return earliest;
        };
        after = Some(last["sort"].clone());
        for hit in &hits {
            let source = &hit["_source"];
            if let (Some(key), Some(due)) = (source["key"].as_str(), source["nextDue"].as_str()) {
                earliest.insert(key.to_string(), due.to_string());
            }
        }
    }
}
