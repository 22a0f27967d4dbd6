//! The frontier conformance suite: the behaviour every [`Spout`] + [`StatusStore`] pair must have,
//! whatever it keeps its URLs in.
//!
//! Call [`check_frontier`] from a test with a factory that makes an empty frontier:
//!
//! ```
//! # #[tokio::main]
//! # async fn main() {
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use squall::frontier::{EmbeddedFrontier, QueryLimits, conformance};
//!
//! let root = tempfile::tempdir().expect("a temporary directory");
//! let made = AtomicUsize::new(0);
//! conformance::check_frontier(|| {
//!     let dir = root.path().join(made.fetch_add(1, Ordering::Relaxed).to_string());
//!     async move {
//!         let frontier = EmbeddedFrontier::open(&dir).expect("frontier");
//!         conformance::FrontierPair::new(frontier.spout(QueryLimits::default()), frontier)
//!     }
//! })
//! .await
//! .expect("conformant");
//! # }
//! ```
//!
//! Frontiers whose writes become visible to reads only after a refresh make it happen in
//! [`StatusStore::flush`], which the suite calls after every write.
//!
//! A frontier that is also a [`Catalog`](crate::frontier::Catalog) passes [`check_catalog`] too,
//! on one empty frontier and its catalog.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use url::Url;

use crate::frontier::{BusyUrls, DueUrl, Spout};
use crate::frontier::{StatusStore, StatusWrite};
use crate::model::{CrawlUrl, Metadata, Status, keys};

mod catalog;

pub use catalog::check_catalog;

/// An empty frontier under test.
pub struct FrontierPair {
    /// Its spout.
    pub spout: Box<dyn Spout>,
    /// Its store.
    pub store: Box<dyn StatusStore>,
}

impl FrontierPair {
    /// Pairs a spout with the store it reads from.
    pub fn new(spout: impl Spout + 'static, store: impl StatusStore + 'static) -> Self {
        FrontierPair {
            spout: Box::new(spout),
            store: Box::new(store),
        }
    }
}

/// A broken rule: which check, and what was seen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("frontier conformance check `{check}` failed: {detail}")]
pub struct Nonconformance {
    /// The check.
    pub check: &'static str,
    /// What went wrong.
    pub detail: String,
}

type Check = Result<(), Nonconformance>;

fn fail(check: &'static str, detail: impl Into<String>) -> Check {
    Err(Nonconformance {
        check,
        detail: detail.into(),
    })
}

/// Runs every check, each on a fresh frontier from `make`.
pub async fn check_frontier<F, Fut>(make: F) -> Check
where
    F: Fn() -> Fut,
    Fut: Future<Output = FrontierPair>,
{
    discovered_urls_are_due(make().await).await?;
    discovered_is_create_only(make().await).await?;
    other_statuses_overwrite(make().await).await?;
    scheduled_urls_wait_until_due(make().await).await?;
    never_means_never(make().await).await?;
    metadata_round_trips(make().await).await?;
    busy_urls_are_not_required(make().await).await?;
    Ok(())
}

fn url(s: &str) -> Url {
    match Url::parse(s) {
        Ok(url) => url,
        Err(_) => Url::parse("http://invalid.test/").unwrap_or_else(|_| unreachable!()),
    }
}

fn write(u: &str, key: &str, status: Status, due_in: Option<TimeDelta>) -> StatusWrite {
    let mut metadata = Metadata::new();
    metadata.set(keys::DEPTH, "1");
    StatusWrite {
        url: CrawlUrl {
            url: url(u),
            metadata,
        },
        key: key.to_string(),
        status,
        next_fetch: due_in.map(|d| Utc::now() + d),
        queue: crate::frontier::QueueReport::default(),
    }
}

async fn store_all(pair: &FrontierPair, check: &'static str, writes: Vec<StatusWrite>) -> Check {
    let count = writes.len();
    let outcomes = pair.store.store(writes).await;
    if outcomes.len() != count {
        return fail(
            check,
            format!("{count} writes gave {} outcomes", outcomes.len()),
        );
    }
    for outcome in outcomes {
        if let Err(error) = outcome {
            return fail(check, format!("a write failed: {error}"));
        }
    }
    if let Err(error) = pair.store.flush().await {
        return fail(check, format!("flush failed: {error}"));
    }
    Ok(())
}

/// Everything due, read through the spout (several queries, until one brings nothing new).
async fn read_due(pair: &mut FrontierPair) -> Result<BTreeMap<String, DueUrl>, String> {
    let mut seen = BTreeMap::new();
    for _ in 0..20 {
        let batch = pair
            .spout
            .next_batch(&BusyUrls::none())
            .await
            .map_err(|e| e.to_string())?;
        let before = seen.len();
        for due in batch {
            seen.insert(due.url.url.to_string(), due);
        }
        if seen.len() == before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(seen)
}

/// Everything the spout returns, as URLs.
pub(super) async fn due_urls(
    pair: &mut FrontierPair,
    check: &'static str,
) -> Result<Vec<String>, Nonconformance> {
    read_due(pair)
        .await
        .map(|m| m.into_keys().collect())
        .map_err(|detail| Nonconformance {
            check,
            detail: format!("query failed: {detail}"),
        })
}

async fn discovered_urls_are_due(mut pair: FrontierPair) -> Check {
    const CHECK: &str = "discovered_urls_are_due";
    let zero = Some(TimeDelta::zero());
    store_all(
        &pair,
        CHECK,
        vec![
            write("http://a.test/1", "a.test", Status::Discovered, zero),
            write("http://a.test/2", "a.test", Status::Discovered, zero),
            write("http://b.test/1", "b.test", Status::Discovered, zero),
        ],
    )
    .await?;
    let due = read_due(&mut pair).await.map_err(|detail| Nonconformance {
        check: CHECK,
        detail,
    })?;
    let urls: Vec<&str> = due.keys().map(String::as_str).collect();
    if urls != ["http://a.test/1", "http://a.test/2", "http://b.test/1"] {
        return fail(CHECK, format!("due URLs were {urls:?}"));
    }
    for (u, d) in &due {
        let expected = if u.contains("a.test") {
            "a.test"
        } else {
            "b.test"
        };
        if d.key != expected {
            return fail(
                CHECK,
                format!("{u} came with key {:?}, expected {expected:?}", d.key),
            );
        }
    }
    Ok(())
}

async fn discovered_is_create_only(mut pair: FrontierPair) -> Check {
    let url = "http://a.test/done";
    let fetched = write(url, "a.test", Status::Fetched, Some(TimeDelta::days(1)));
    let discovered = write(url, "a.test", Status::Discovered, Some(TimeDelta::zero()));
    let batches = vec![vec![fetched], vec![discovered]];
    due_after(
        &mut pair,
        "discovered_is_create_only",
        batches,
        &[],
        |due| format!("a DISCOVERED write reset a fetched URL: {due:?} became due"),
    )
    .await
}

async fn other_statuses_overwrite(mut pair: FrontierPair) -> Check {
    let url = "http://a.test/x";
    let fetched = write(url, "a.test", Status::Fetched, Some(TimeDelta::days(1)));
    let failed = write(
        url,
        "a.test",
        Status::FetchError,
        Some(TimeDelta::seconds(-5)),
    );
    let batches = vec![vec![fetched], vec![failed]];
    due_after(
        &mut pair,
        "other_statuses_overwrite",
        batches,
        &[url],
        |due| format!("the FETCH_ERROR overwrite did not reschedule the URL: due {due:?}"),
    )
    .await
}

/// Stores each of `batches` in turn, then checks that the URLs due are `expected`; `wrong` says
/// what other URLs due mean.
async fn due_after(
    pair: &mut FrontierPair,
    check: &'static str,
    batches: Vec<Vec<StatusWrite>>,
    expected: &[&str],
    wrong: impl FnOnce(&[String]) -> String,
) -> Check {
    for batch in batches {
        store_all(pair, check, batch).await?;
    }
    let due = due_urls(pair, check).await?;
    if due != expected {
        return fail(check, wrong(&due));
    }
    Ok(())
}

async fn scheduled_urls_wait_until_due(mut pair: FrontierPair) -> Check {
    let later = write(
        "http://a.test/later",
        "a.test",
        Status::Fetched,
        Some(TimeDelta::hours(1)),
    );
    let now = write(
        "http://a.test/now",
        "a.test",
        Status::Fetched,
        Some(TimeDelta::seconds(-1)),
    );
    let batches = vec![vec![later, now]];
    due_after(
        &mut pair,
        "scheduled_urls_wait_until_due",
        batches,
        &["http://a.test/now"],
        |due| format!("expected only the URL whose date passed, got {due:?}"),
    )
    .await
}

async fn never_means_never(mut pair: FrontierPair) -> Check {
    let writes = vec![
        write("http://a.test/gone", "a.test", Status::Error, None),
        write("http://b.test/gone", "b.test", Status::Error, None),
        write(
            "http://b.test/due",
            "b.test",
            Status::Discovered,
            Some(TimeDelta::zero()),
        ),
    ];
    due_after(
        &mut pair,
        "never_means_never",
        vec![writes],
        &["http://b.test/due"],
        |due| {
            format!(
                "due: {due:?}; a URL scheduled never became due, or its queue's due URL did not"
            )
        },
    )
    .await
}

async fn metadata_round_trips(mut pair: FrontierPair) -> Check {
    const CHECK: &str = "metadata_round_trips";
    let mut w = write(
        "http://a.test/m",
        "a.test",
        Status::Discovered,
        Some(TimeDelta::zero()),
    );
    w.url
        .metadata
        .set_values("multi.value", vec!["x".into(), "y".into()]);
    w.url.metadata.set(keys::URL_PATH, "http://a.test/");
    let expected = w.url.metadata.clone();
    store_all(&pair, CHECK, vec![w]).await?;
    let due = read_due(&mut pair).await.map_err(|detail| Nonconformance {
        check: CHECK,
        detail,
    })?;
    match due.get("http://a.test/m") {
        Some(d) if d.url.metadata == expected => Ok(()),
        Some(d) => fail(
            CHECK,
            format!(
                "metadata came back as {:?}, expected {expected:?}",
                d.url.metadata
            ),
        ),
        None => fail(CHECK, "the URL was not returned"),
    }
}

async fn busy_urls_are_not_required(mut pair: FrontierPair) -> Check {
    const CHECK: &str = "many_queues_are_all_reached";
    let writes = (0..30)
        .map(|i| {
            write(
                &format!("http://h{i}.test/"),
                &format!("h{i}.test"),
                Status::Discovered,
                Some(TimeDelta::zero()),
            )
        })
        .collect();
    store_all(&pair, CHECK, writes).await?;
    let due = due_urls(&mut pair, CHECK).await?;
    if due.len() != 30 {
        return fail(
            CHECK,
            format!("30 queues with one due URL each gave {} URLs", due.len()),
        );
    }
    Ok(())
}
