//! The catalog conformance check: what a [`Catalog`] must show of the URLs written through its
//! frontier's [`StatusStore`](crate::frontier::StatusStore), and what deleting must leave behind,
//! the spout included.

use std::collections::BTreeMap;

use chrono::{TimeDelta, Utc};

use super::{Check, FrontierPair, Nonconformance, due_urls, fail, store_all};
use crate::frontier::{Catalog, StatusWrite, StoreError, StoredUrl, UrlQuery};
use crate::model::{Status, keys};

/// What the frontier should hold: the last write of each URL, by URL.
type Expected = BTreeMap<String, StatusWrite>;

/// Runs the catalog checks on one empty frontier (`pair`) and its catalog: it writes URLs of three
/// queues with every status, then checks [`Catalog::lookup`] (metadata included), counts and
/// listings by queue, by text (with and without case, `*` and `?` taken literally) and by schedule
/// (due again or not), [`Catalog::count_queues`] for each of those queries, paging in
/// (queue, URL) order without repeats, [`Catalog::count_by_status`], [`Catalog::queues`] (a queue
/// none of whose URLs is due still counts), [`Catalog::delete_queue`] (the spout no longer returns
/// its URLs) and [`Catalog::delete_all`] (the frontier is empty and takes the same URLs again).
///
/// Writes are made visible with [`StatusStore::flush`](crate::frontier::StatusStore::flush);
/// deletions must be visible when they return.
pub async fn check_catalog(mut pair: FrontierPair, catalog: &dyn Catalog) -> Check {
    let mut expected = fill(&pair).await?;
    lookups_round_trip(catalog, &expected).await?;
    const QUERIES: &str = "catalog_counts_and_listings_follow_the_query";
    counts_and_listings_follow_the_query(QUERIES, catalog, &expected).await?;
    listings_page_in_order(catalog, &expected).await?;
    statuses_are_counted("catalog_statuses_are_counted", catalog, &expected).await?;
    queues_page_in_order(catalog, &expected).await?;
    deleting_a_queue_removes_it(&mut pair, catalog, &mut expected).await?;
    deleting_everything_empties_the_frontier(&mut pair, catalog, &expected).await
}

fn write(u: &str, key: &str, status: Status, due_in: Option<TimeDelta>) -> StatusWrite {
    let mut write = super::write(u, key, status, due_in);
    write.url.metadata.set("written.as", status.as_str());
    write
}

/// Writes the URLs of queues `a.test`, `b.test` and `c.test` (whose URLs are all fetched and never
/// due again), returning what the frontier should hold.
async fn fill(pair: &FrontierPair) -> Result<Expected, Nonconformance> {
    const CHECK: &str = "catalog_fill";
    let past = Some(TimeDelta::minutes(-1));
    let later = Some(TimeDelta::days(1));
    let mut first = write("http://a.test/1", "a.test", Status::Discovered, past);
    first
        .url
        .metadata
        .set_values("multi.value", vec!["x".into(), "y".into()]);
    first.url.metadata.set(keys::URL_PATH, "http://a.test/");
    let writes = vec![
        first,
        write("http://a.test/2", "a.test", Status::Fetched, later),
        write("http://a.test/3", "a.test", Status::Error, None),
        write("http://a.test/Post/4", "a.test", Status::FetchError, past),
        write("http://b.test/1?q=1", "b.test", Status::Discovered, past),
        write("http://b.test/2", "b.test", Status::Redirection, later),
        write("http://b.test/post/3", "b.test", Status::Fetched, later),
        write("http://c.test/1", "c.test", Status::Discovered, past),
        write("http://c.test/2", "c.test", Status::Discovered, past),
    ];
    store_all(pair, CHECK, writes.clone()).await?;
    let done = vec![
        write("http://c.test/1", "c.test", Status::Fetched, None),
        write("http://c.test/2", "c.test", Status::Fetched, None),
    ];
    store_all(pair, CHECK, done.clone()).await?;
    Ok(writes
        .into_iter()
        .chain(done)
        .map(|w| (w.url.url.to_string(), w))
        .collect())
}

fn failed(check: &'static str, what: &str, error: StoreError) -> Nonconformance {
    Nonconformance {
        check,
        detail: format!("{what} failed: {error}"),
    }
}

/// A count (or a deletion's count) that `doing` gave, refused unless it succeeded and is
/// `expected`; `wrong` says what a wrong count means.
fn count_is(
    check: &'static str,
    doing: &str,
    outcome: Result<u64, StoreError>,
    expected: usize,
    wrong: impl FnOnce(u64) -> String,
) -> Check {
    let count = outcome.map_err(|e| failed(check, doing, e))?;
    if count != expected as u64 {
        return fail(check, wrong(count));
    }
    Ok(())
}

/// What differs between a stored URL and the write it should show (dates to the millisecond).
fn difference(stored: &StoredUrl, write: &StatusWrite) -> Option<String> {
    let millis = |d: Option<chrono::DateTime<Utc>>| d.map(|d| d.timestamp_millis());
    let same = stored.url == write.url
        && stored.key == write.key
        && stored.status == write.status
        && millis(stored.next_fetch) == millis(write.next_fetch);
    (!same).then(|| {
        format!(
            "{} came back as key {:?}, {:?}, due {:?}, metadata {:?}; written as key {:?}, {:?}, \
             due {:?}, metadata {:?}",
            write.url.url,
            stored.key,
            stored.status,
            stored.next_fetch,
            stored.url.metadata,
            write.key,
            write.status,
            write.next_fetch,
            write.url.metadata
        )
    })
}

async fn lookups_round_trip(catalog: &dyn Catalog, expected: &Expected) -> Check {
    const CHECK: &str = "catalog_lookups_round_trip";
    for (u, write) in expected {
        let found = catalog
            .lookup(u)
            .await
            .map_err(|e| failed(CHECK, "a lookup", e))?;
        let Some(stored) = found else {
            return fail(CHECK, format!("{u} was written but not found"));
        };
        if let Some(difference) = difference(&stored, write) {
            return fail(CHECK, difference);
        }
    }
    match catalog.lookup("http://a.test/unknown").await {
        Ok(None) => Ok(()),
        Ok(Some(stored)) => fail(CHECK, format!("an unknown URL was found: {stored:?}")),
        Err(error) => Err(failed(CHECK, "a lookup of an unknown URL", error)),
    }
}

fn query(key: Option<&str>, contains: Option<&str>, ignore_case: bool) -> UrlQuery {
    UrlQuery {
        key: key.map(str::to_string),
        contains: contains.map(str::to_string),
        ignore_case,
        scheduled: None,
    }
}

/// `query` of queue `key` (or all) limited to the URLs due again, or to those never due again.
fn scheduled(key: Option<&str>, scheduled: Option<bool>) -> UrlQuery {
    UrlQuery {
        scheduled,
        ..query(key, None, false)
    }
}

/// [`Catalog::count_queues`] counts the queues of the URLs `query` covers.
async fn queues_follow_the_query(
    check: &'static str,
    catalog: &dyn Catalog,
    expected: &Expected,
    query: &UrlQuery,
) -> Check {
    let keys: std::collections::BTreeSet<&str> = covered(expected, query)
        .iter()
        .map(|w| w.key.as_str())
        .collect();
    let counted = catalog.count_queues(query).await;
    count_is(check, "a count of queues", counted, keys.len(), |counted| {
        format!("{query:?} counted {counted} queues, expected {keys:?}")
    })
}

/// The URLs `query` covers, in listing order (queue, then URL).
fn covered<'a>(expected: &'a Expected, query: &UrlQuery) -> Vec<&'a StatusWrite> {
    let mut writes: Vec<&StatusWrite> = expected
        .iter()
        .filter(|(u, w)| query.covers(u, &w.key, w.next_fetch.is_some()))
        .map(|(_, w)| w)
        .collect();
    writes.sort_by(|x, y| (&x.key, x.url.url.as_str()).cmp(&(&y.key, y.url.url.as_str())));
    writes
}

/// Whether `listed` is exactly `wanted`, in order.
fn same_listing(check: &'static str, listed: &[StoredUrl], wanted: &[&StatusWrite]) -> Check {
    let urls =
        |l: &[StoredUrl]| -> Vec<String> { l.iter().map(|s| s.url.url.to_string()).collect() };
    let wanted_urls: Vec<String> = wanted.iter().map(|w| w.url.url.to_string()).collect();
    if urls(listed) != wanted_urls {
        return fail(
            check,
            format!("listed {:?}, expected {wanted_urls:?}", urls(listed)),
        );
    }
    for (stored, write) in listed.iter().zip(wanted) {
        if let Some(difference) = difference(stored, write) {
            return fail(check, difference);
        }
    }
    Ok(())
}

async fn counts_and_listings_follow_the_query(
    check: &'static str,
    catalog: &dyn Catalog,
    expected: &Expected,
) -> Check {
    let queries = [
        query(None, None, false),
        query(Some("a.test"), None, false),
        query(Some("nowhere.test"), None, false),
        query(None, Some("/post"), false),
        query(None, Some("/post"), true),
        query(Some("a.test"), Some("POST"), true),
        query(None, Some("?"), false),
        query(None, Some("*"), false),
        query(None, Some("\\"), false),
        scheduled(None, Some(true)),
        scheduled(None, Some(false)),
        scheduled(Some("c.test"), Some(true)),
        scheduled(Some("a.test"), Some(false)),
    ];
    for query in &queries {
        queues_follow_the_query(check, catalog, expected, query).await?;
        let wanted = covered(expected, query);
        let count = catalog.count(query).await;
        count_is(check, "a count", count, wanted.len(), |count| {
            format!("{query:?} counted {count}, expected {}", wanted.len())
        })?;
        let listed = catalog
            .list(query, 0, 100)
            .await
            .map_err(|e| failed(check, "a listing", e))?;
        same_listing(check, &listed, &wanted).map_err(|e| Nonconformance {
            check,
            detail: format!("{query:?}: {}", e.detail),
        })?;
    }
    Ok(())
}

async fn listings_page_in_order(catalog: &dyn Catalog, expected: &Expected) -> Check {
    const CHECK: &str = "catalog_listings_page_in_order";
    let all = query(None, None, false);
    let wanted = covered(expected, &all);
    let mut paged = Vec::new();
    for start in (0..=wanted.len() as u64).step_by(4) {
        let page = catalog
            .list(&all, start, 4)
            .await
            .map_err(|e| failed(CHECK, "a listing", e))?;
        paged.extend(page);
    }
    same_listing(CHECK, &paged, &wanted)?;
    let queue = query(Some("b.test"), None, false);
    let page = catalog
        .list(&queue, 1, 1)
        .await
        .map_err(|e| failed(CHECK, "a listing", e))?;
    same_listing(CHECK, &page, &covered(expected, &queue)[1..2])?;
    for (start, size) in [(0, 0), (100, 4)] {
        let empty = catalog
            .list(&all, start, size)
            .await
            .map_err(|e| failed(CHECK, "a listing", e))?;
        if !empty.is_empty() {
            return fail(CHECK, format!("list({start}, {size}) listed {empty:?}"));
        }
    }
    Ok(())
}

/// The status counts `expected` should give, statuses with none left out.
fn status_counts(expected: &Expected) -> BTreeMap<&'static str, u64> {
    let mut counts = BTreeMap::new();
    for write in expected.values() {
        *counts.entry(write.status.as_str()).or_insert(0) += 1;
    }
    counts
}

async fn statuses_are_counted(
    check: &'static str,
    catalog: &dyn Catalog,
    expected: &Expected,
) -> Check {
    let counts = catalog
        .count_by_status()
        .await
        .map_err(|e| failed(check, "a count by status", e))?;
    let seen: BTreeMap<&'static str, u64> = counts.iter().map(|(s, n)| (s.as_str(), *n)).collect();
    if seen.len() != counts.len() || seen != status_counts(expected) {
        return fail(
            check,
            format!(
                "counted {counts:?}, expected {:?} (statuses with none left out)",
                status_counts(expected)
            ),
        );
    }
    Ok(())
}

/// Whether the queue pages of the catalog are those of the queues `keys` (in key order).
async fn same_queues(check: &'static str, catalog: &dyn Catalog, keys: &[&str]) -> Check {
    let total = keys.len() as u64;
    for (start, size) in [(0, 10), (1, 1), (total, 2)] {
        let page = catalog
            .queues(start, size)
            .await
            .map_err(|e| failed(check, "a queue listing", e))?;
        let wanted: Vec<&str> = keys
            .iter()
            .copied()
            .skip(start as usize)
            .take(size as usize)
            .collect();
        if page.keys != wanted || page.total != total {
            return fail(
                check,
                format!(
                    "queues({start}, {size}) gave {:?} of {}, expected {wanted:?} of {total}",
                    page.keys, page.total
                ),
            );
        }
    }
    Ok(())
}

async fn queues_page_in_order(catalog: &dyn Catalog, expected: &Expected) -> Check {
    let mut keys: Vec<&str> = expected.values().map(|w| w.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    same_queues("catalog_queues_page_in_order", catalog, &keys).await
}

async fn deleting_a_queue_removes_it(
    pair: &mut FrontierPair,
    catalog: &dyn Catalog,
    expected: &mut Expected,
) -> Check {
    const CHECK: &str = "catalog_deleting_a_queue_removes_it";
    let gone: Vec<String> = expected
        .iter()
        .filter(|(_, w)| w.key == "b.test")
        .map(|(u, _)| u.clone())
        .collect();
    let deleted = catalog.delete_queue("b.test").await;
    count_is(CHECK, "deleting a queue", deleted, gone.len(), |deleted| {
        format!(
            "deleting b.test reported {deleted} URLs, expected {}",
            gone.len()
        )
    })?;
    expected.retain(|_, w| w.key != "b.test");
    for u in &gone {
        if let Some(stored) = catalog
            .lookup(u)
            .await
            .map_err(|e| failed(CHECK, "a lookup", e))?
        {
            return fail(
                CHECK,
                format!("a URL of the deleted queue was found: {stored:?}"),
            );
        }
    }
    match catalog.delete_queue("nowhere.test").await {
        Ok(0) => {}
        Ok(n) => {
            return fail(
                CHECK,
                format!("deleting an unknown queue reported {n} URLs"),
            );
        }
        Err(error) => return Err(failed(CHECK, "deleting an unknown queue", error)),
    }
    counts_and_listings_follow_the_query(CHECK, catalog, expected).await?;
    statuses_are_counted(CHECK, catalog, expected).await?;
    same_queues(CHECK, catalog, &["a.test", "c.test"]).await?;
    let due = due_urls(pair, CHECK).await?;
    if due != ["http://a.test/1", "http://a.test/Post/4"] {
        return fail(
            CHECK,
            format!(
                "after b.test was deleted the spout returned {due:?}, expected the due URLs of a.test"
            ),
        );
    }
    Ok(())
}

async fn deleting_everything_empties_the_frontier(
    pair: &mut FrontierPair,
    catalog: &dyn Catalog,
    expected: &Expected,
) -> Check {
    const CHECK: &str = "catalog_deleting_everything_empties_the_frontier";
    let deleted = catalog.delete_all().await;
    count_is(
        CHECK,
        "deleting everything",
        deleted,
        expected.len(),
        |deleted| {
            format!(
                "deleting everything reported {deleted} URLs, expected {}",
                expected.len()
            )
        },
    )?;
    let empty = Expected::new();
    counts_and_listings_follow_the_query(CHECK, catalog, &empty).await?;
    statuses_are_counted(CHECK, catalog, &empty).await?;
    same_queues(CHECK, catalog, &[]).await?;
    if let Some(stored) = catalog
        .lookup("http://a.test/1")
        .await
        .map_err(|e| failed(CHECK, "a lookup", e))?
    {
        return fail(CHECK, format!("a deleted URL was found: {stored:?}"));
    }
    let due = due_urls(pair, CHECK).await?;
    if !due.is_empty() {
        return fail(
            CHECK,
            format!("after everything was deleted the spout returned {due:?}"),
        );
    }
    // A URL written again is new: a DISCOVERED write creates it.
    let again = write(
        "http://a.test/1",
        "a.test",
        Status::Discovered,
        Some(TimeDelta::zero()),
    );
    store_all(pair, CHECK, vec![again.clone()]).await?;
    let found = catalog
        .lookup("http://a.test/1")
        .await
        .map_err(|e| failed(CHECK, "a lookup", e))?;
    match found {
        Some(stored) => match difference(&stored, &again) {
            None => Ok(()),
            Some(difference) => fail(CHECK, format!("written again after deletion: {difference}")),
        },
        None => fail(CHECK, "a URL written again after deletion was not found"),
    }
}
