//! The queue frontier (urls + queues indices, leases) against the real node.

use crate::support;
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use serde_json::json;
use squall::frontier::conformance::{FrontierPair, check_frontier};
use squall::frontier::{BusyUrls, Spout};
use squall::frontier::{StatusStore, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::EsClient;
use squall_engine::client::indices::ensure_index;
use squall_engine::queue::edit_apply::{EditOutcome, apply_edits};
use squall_engine::queue::edit_rules::{KeyedEdit, QueueEdit};
use squall_engine::queue::schema::queues_index_body;
use squall_engine::queue::{QueueSpout, QueueSpoutConfig, QueueStatusStore};
use squall_engine::status_index::schema::KeyField;

async fn indices(client: &EsClient) -> (String, String) {
    let urls = support::status_index(client, "q-urls", 2).await;
    let queues = support::unique_index("q-queues");
    ensure_index(client, &queues, queues_index_body(1, 0, "1s"))
        .await
        .expect("queues index");
    (urls, queues)
}

fn settings(urls: &str, queues: &str, owner: &str) -> QueueSpoutConfig {
    QueueSpoutConfig {
        owner: owner.to_string(),
        lease_ttl: Duration::from_secs(5),
        refresh_interval: Duration::from_secs(1),
        ..QueueSpoutConfig::new(urls, queues)
    }
}

fn write(url: &str, key: &str, status: Status, due_in: Option<TimeDelta>) -> StatusWrite {
    StatusWrite {
        url: CrawlUrl::seed(url::Url::parse(url).expect("url")),
        key: key.to_string(),
        status,
        next_fetch: due_in.map(|d| Utc::now() + d),
        queue: Default::default(),
    }
}

/// A DISCOVERED write of `url`, due `due_in` from now.
fn discovered(url: &str, key: &str, due_in: TimeDelta) -> StatusWrite {
    write(url, key, Status::Discovered, Some(due_in))
}

#[tokio::test]
async fn the_queue_frontier_is_conformant() {
    conformant(true).await;
}

#[tokio::test]
async fn the_queue_frontier_is_conformant_with_a_writer_of_another_process() {
    conformant(false).await;
}

/// The conformance suite over the queue frontier: its spout with the writer of its own process
/// (`paired`: writes for held queues are noted in the hold), or with a writer of its own.
async fn conformant(paired: bool) {
    let client = support::client().await;
    let created = std::sync::Mutex::new(Vec::new());
    let result = check_frontier(|| {
        let client = client.clone();
        let created = &created;
        async move {
            let (urls, queues) = indices(&client).await;
            if let Ok(mut list) = created.lock() {
                list.push(urls.clone());
                list.push(queues.clone());
            }
            let spout = QueueSpout::new(client.clone(), settings(&urls, &queues, "conformance"));
            let store = if paired {
                spout.status_store()
            } else {
                QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default())
            };
            FrontierPair::new(spout, store)
        }
    })
    .await;
    for index in created.lock().map(|l| l.clone()).unwrap_or_default() {
        support::delete_index(&client, &index).await;
    }
    assert_eq!(result, Ok(()));
}

#[tokio::test]
async fn the_writer_keeps_next_due_at_the_earliest_url_and_creates_queues_at_once() {
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let outcomes = store
        .store(vec![
            discovered("http://a.test/later", "a.test", TimeDelta::hours(2)),
            discovered("http://a.test/sooner", "a.test", TimeDelta::hours(1)),
            write("http://b.test/never", "b.test", Status::Error, None),
        ])
        .await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    // A later write with an earlier date lowers it; one with a later date does not raise it.
    let outcomes = store
        .store(vec![
            discovered("http://a.test/soonest", "a.test", TimeDelta::minutes(30)),
            discovered("http://a.test/much-later", "a.test", TimeDelta::days(3)),
        ])
        .await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    let queue = support::queue_doc(&client, &queues, "a.test")
        .await
        .expect("queue a.test exists");
    let next_due = queue["_source"]["nextDue"].as_str().expect("nextDue");
    let soonest = support::url_doc(&client, &urls, "http://a.test/soonest").await;
    assert_eq!(Some(next_due), soonest["_source"]["nextFetchDate"].as_str());
    // A key whose only URL is never due gets no queue that could ever become due.
    let b = support::queue_doc(&client, &queues, "b.test").await;
    assert!(
        b.is_err(),
        "no queue for a key with nothing ever due: {b:?}"
    );
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

#[tokio::test]
async fn a_queue_is_held_by_one_process_and_taken_over_after_its_lease() {
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let writes = (0..4)
        .map(|i| {
            write(
                &format!("http://shared.test/{i}"),
                "shared.test",
                Status::Discovered,
                Some(TimeDelta::seconds(-1)),
            )
        })
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");

    let mut first = QueueSpout::new(client.clone(), settings(&urls, &queues, "first"));
    let mut second = QueueSpout::new(client.clone(), settings(&urls, &queues, "second"));
    let busy = BusyUrls::none();
    let from_first = first.next_batch(&busy).await.expect("first");
    assert_eq!(from_first.len(), 4);
    store.flush().await.expect("refresh");
    let from_second = second.next_batch(&busy).await.expect("second");
    assert!(
        from_second.is_empty(),
        "the queue is leased to the first process: {from_second:?}"
    );
    assert_eq!(first.held_keys(), ["shared.test"]);

    // The first process dies (it never renews): after the lease and the visibility delay, the
    // second takes the queue over.
    drop(first);
    tokio::time::sleep(Duration::from_secs(9)).await;
    let taken = second.next_batch(&busy).await.expect("second again");
    assert_eq!(
        taken.len(),
        4,
        "nothing is lost: the unprocessed URLs come back"
    );
    assert_eq!(second.held_keys(), ["shared.test"]);
    let doc = support::queue_doc(&client, &queues, "shared.test")
        .await
        .expect("queue");
    let holder = doc["_source"]["leaseOwner"].as_str().unwrap_or_default();
    assert!(holder.starts_with("second#"), "held by {holder}");
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

/// An edit that reaches a queue late changes nothing of a later claim by the same owner: here the
/// release of a claim by a process that died, arriving after a process of the same owner (say,
/// the same host and PID) claimed the queue again, as the engine delivers a release retried after
/// a failover. (Were claims named by their owner alone, that release would end the new claim,
/// and a third process could claim the queue while the second still fetched from it.)
#[tokio::test]
async fn a_late_release_of_an_earlier_claim_leaves_a_later_claim_of_the_same_owner_alone() {
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let writes = (0..4)
        .map(|i| {
            discovered(
                &format!("http://late.test/{i}"),
                "late.test",
                TimeDelta::seconds(-1),
            )
        })
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    let busy = BusyUrls::none();
    let lease_owner = |doc: serde_json::Value| doc["_source"]["leaseOwner"].clone();

    let mut first = QueueSpout::new(client.clone(), settings(&urls, &queues, "proc"));
    assert_eq!(first.next_batch(&busy).await.expect("first").len(), 4);
    let first_claim = support::queue_doc(&client, &queues, "late.test")
        .await
        .map(lease_owner);
    drop(first);
    tokio::time::sleep(Duration::from_secs(9)).await;
    let mut again = QueueSpout::new(client.clone(), settings(&urls, &queues, "proc"));
    assert_eq!(again.next_batch(&busy).await.expect("again").len(), 4);
    let later = support::queue_doc(&client, &queues, "late.test")
        .await
        .expect("queue");
    let later_claim = lease_owner(later);

    let late_release = QueueEdit::Release {
        owner: first_claim
            .expect("queue")
            .as_str()
            .unwrap_or_default()
            .to_string(),
        next: None,
        seen_before: squall_engine::status_index::schema::format_date(Utc::now()),
        now: squall_engine::status_index::schema::format_date(Utc::now()),
    };
    let edit = KeyedEdit {
        key: "late.test".into(),
        edit: late_release,
        upsert: None,
    };
    let outcome = apply_edits(&client, &queues, &[edit])
        .await
        .expect("edit sent");
    assert_eq!(
        outcome,
        [EditOutcome::Unchanged],
        "the late release found its claim over"
    );
    let after = support::queue_doc(&client, &queues, "late.test")
        .await
        .expect("queue");
    assert_eq!(lease_owner(after.clone()), later_claim);
    assert!(
        !after["_source"]["leaseUntil"].is_null(),
        "still leased: {after}"
    );
    assert_eq!(again.held_keys(), ["late.test"]);
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

#[tokio::test]
async fn a_date_written_while_the_queue_is_held_survives_its_release() {
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let first = discovered("http://held.test/a", "held.test", TimeDelta::seconds(-1));
    let later = discovered("http://held.test/b", "held.test", TimeDelta::days(1));
    assert!(
        store
            .store(vec![first, later])
            .await
            .iter()
            .all(Result::is_ok)
    );
    store.flush().await.expect("refresh");
    // Past the window in which the spout distrusts a freshly written queue.
    tokio::time::sleep(Duration::from_millis(3100)).await;

    let mut spout = QueueSpout::new(client.clone(), settings(&urls, &queues, "holder"));
    let busy = BusyUrls::none();
    let batch = spout.next_batch(&busy).await.expect("first read");
    assert_eq!(batch.len(), 1, "only /a is due: {batch:?}");
    // Fetched and failed: due again in a minute, sooner than /b, written while the queue is held.
    let retry = write(
        "http://held.test/a",
        "held.test",
        Status::FetchError,
        Some(TimeDelta::minutes(1)),
    );
    assert!(store.store(vec![retry]).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    // Drained: given back once the write of /a shows (no other queue waits, so it is kept until
    // then).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !spout.held_keys().is_empty() && std::time::Instant::now() < deadline {
        let again = spout.next_batch(&busy).await.expect("later read");
        assert!(again.is_empty(), "nothing is due now: {again:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        spout.held_keys().is_empty(),
        "the drained queue is given back"
    );

    let queue = support::queue_doc(&client, &queues, "held.test")
        .await
        .expect("queue");
    let url = support::url_doc(&client, &urls, "http://held.test/a").await;
    assert_eq!(
        queue["_source"]["nextDue"].as_str(),
        url["_source"]["nextFetchDate"].as_str(),
        "the queue is due again when /a is, not when /b is: {queue}"
    );
    assert_eq!(queue["_source"]["leaseOwner"], json!(null));
    assert!(queue["_source"].get("heldDue").is_none(), "{queue}");
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

#[tokio::test]
async fn retry_after_holds_and_crawl_delays_are_shared_through_the_queue() {
    use squall::frontier::QueueReport;
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    // One process got a 429 with Retry-After from blocked.test, and learned a 2.5 s Crawl-delay
    // from slow.test's robots.txt.
    let mut held = write(
        "http://blocked.test/1",
        "blocked.test",
        Status::FetchError,
        Some(TimeDelta::seconds(-1)),
    );
    let until = Utc::now() + TimeDelta::hours(1);
    held.queue = QueueReport {
        blocked_until: Some(until),
        ..QueueReport::default()
    };
    let mut slow = write(
        "http://slow.test/1",
        "slow.test",
        Status::Fetched,
        Some(TimeDelta::seconds(-1)),
    );
    slow.queue.crawl_delay = Some(Duration::from_millis(2500));
    assert!(
        store
            .store(vec![held, slow])
            .await
            .iter()
            .all(Result::is_ok)
    );
    store.flush().await.expect("refresh");

    let doc = support::queue_doc(&client, &queues, "slow.test")
        .await
        .expect("queue");
    assert_eq!(doc["_source"]["crawlDelaySeconds"], json!(2.5));
    let url_doc = support::url_doc(&client, &urls, "http://slow.test/1").await;
    assert!(
        url_doc["_source"]["metadata"]
            .get("queue%2Ecrawl%2Edelay")
            .is_none(),
        "queue state stays on the queue"
    );

    // Another process: it does not take the held queue, and it keeps the learned delay.
    let mut other = QueueSpout::new(client.clone(), settings(&urls, &queues, "other"));
    let batch = other.next_batch(&BusyUrls::none()).await.expect("batch");
    let keys_emitted: Vec<&str> = batch.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(
        keys_emitted,
        ["slow.test"],
        "blocked.test is held back until its Retry-After ends"
    );
    assert_eq!(
        batch[0].hints.crawl_delay,
        Some(std::time::Duration::from_millis(2500))
    );
    assert!(
        batch[0].hints.lease.as_ref().is_some_and(|l| l.is_valid()),
        "handed out under the queue's lease"
    );
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

#[tokio::test]
async fn a_spout_holding_hundreds_of_queues_reads_them_all() {
    // A queue read after its cursor counts twice against the engine's 1,024 nested clauses: 700 of
    // them in one search would be refused and every read would fail (too_many_nested_clauses).
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let (hosts, per_host) = (700, 3);
    let writes = (0..hosts)
        .flat_map(|h| (0..per_host).map(move |p| (h, p)))
        .map(|(h, p)| {
            let key = format!("host-{h}.test");
            discovered(&format!("http://{key}/{p}"), &key, TimeDelta::seconds(-1))
        })
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");

    let mut spout = QueueSpout::new(
        client.clone(),
        QueueSpoutConfig {
            max_queues: 1_000,
            max_claims_per_query: 1_000,
            max_urls_per_queue: 2,
            // The subject is the size of a read, not leases: a lease long enough that a slow
            // machine's rounds (tests alongside, the engine busy) never see one lapse, which would
            // give queues back and keep them from being claimed again within the rounds below.
            lease_ttl: Duration::from_secs(120),
            ..settings(&urls, &queues, "many")
        },
    );
    let busy = BusyUrls::none();
    let mut seen = std::collections::BTreeSet::new();
    // A round reads 50 queues at most: 14 rounds read them all once and 14 more the third URL of
    // each, 28 at best; rounds that hand out less (a queue given back, then claimed again) take the
    // rest. The loop ends as soon as every URL is seen.
    for round in 0..100 {
        if seen.len() == hosts * per_host {
            break;
        }
        let batch = spout.next_batch(&busy).await.expect("a read of 700 queues");
        seen.extend(batch.into_iter().map(|due| due.url.url.to_string()));
        if round == 0 {
            // Later rounds may give drained queues back (when the upkeep's count of waiting
            // queues predates the claims), so the claims are counted after the first.
            assert_eq!(
                spout.held_keys().len(),
                hosts,
                "every queue claimed at once"
            );
        }
    }
    assert_eq!(seen.len(), hosts * per_host, "every URL of every queue");
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

/// Queues dated due whose URLs are not (as the end of a crawl leaves them) are all read in the
/// query that claimed them: a round reads 50 queues at most, and a round that hands out nothing
/// while reads are left reads again at once, up to four rounds, rather than leaving them to the
/// next query, which an idle runner sends only after `spout.min.delay.queries`.
#[tokio::test]
async fn queues_claimed_with_nothing_due_are_read_in_the_query_that_claimed_them() {
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let hosts = 200;
    let keys: Vec<String> = (0..hosts).map(|h| format!("idle-{h}.test")).collect();
    let at = |key: &String| format!("http://{key}/");
    let due = keys
        .iter()
        .map(|key| discovered(&at(key), key, TimeDelta::seconds(-1)))
        .collect();
    assert!(store.store(due).await.iter().all(Result::is_ok));
    // Fetched since: the URL is due in a day, the queue stays dated due.
    let fetched = keys
        .iter()
        .map(|key| write(&at(key), key, Status::Fetched, Some(TimeDelta::days(1))))
        .collect();
    assert!(store.store(fetched).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    // Past the visibility delay of those writes: no read is owed for them after the first.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let mut spout = QueueSpout::new(
        client.clone(),
        QueueSpoutConfig {
            max_queues: 1_000,
            max_claims_per_query: 1_000,
            lease_ttl: Duration::from_secs(120),
            ..settings(&urls, &queues, "ender")
        },
    );
    let batch = spout.next_batch(&BusyUrls::none()).await.expect("a query");
    assert!(batch.is_empty(), "nothing is due: {batch:?}");
    let reading = spout.timings().snapshot()[&squall_engine::queue::timings::Stage::Reading];
    assert_eq!(
        (reading.rounds, reading.items),
        (4, hosts as u64),
        "every queue claimed read in the same query, 50 a round"
    );
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

/// A queue given back (the process stopping, or done with it) is not claimed again, by any
/// process, before the politeness delay has run from its last fetch: a crawl resumed at once, or
/// another process taking over, keeps `fetcher.server.delay` from the first fetch.
#[tokio::test]
async fn a_queue_given_back_is_not_claimed_again_before_its_politeness_delay() {
    let client = support::client().await;
    let (urls, queues) = indices(&client).await;
    let store = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let writes = (0..3)
        .map(|i| {
            discovered(
                &format!("http://polite.test/{i}"),
                "polite.test",
                TimeDelta::seconds(-1),
            )
        })
        .collect();
    assert!(store.store(writes).await.iter().all(Result::is_ok));
    store.flush().await.expect("refresh");
    let polite = |owner: &str| QueueSpoutConfig {
        politeness_delay: Duration::from_secs(3),
        ..settings(&urls, &queues, owner)
    };
    let mut first = QueueSpout::new(client.clone(), polite("first"));
    let handed = first.next_batch(&BusyUrls::none()).await.expect("first");
    assert_eq!(handed.len(), 3);
    // The URLs leave the topology (fetched, and failed back so that they stay due), then the
    // process stops and gives its queue back.
    let _ = first.next_batch(&BusyUrls::none()).await.expect("settles");
    for due in &handed {
        first.fail(&due.url).await;
    }
    let last_fetch = Utc::now();
    first.close().await;
    let doc = support::queue_doc(&client, &queues, "polite.test")
        .await
        .expect("queue");
    let until = doc["_source"]["leaseUntil"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let until = chrono::DateTime::parse_from_rfc3339(&until).expect("leaseUntil is a date");
    assert!(
        until >= last_fetch + TimeDelta::milliseconds(2900),
        "given back until {until}"
    );

    let mut second = QueueSpout::new(client.clone(), polite("second"));
    let mut taken = Vec::new();
    for _ in 0..40 {
        taken = second.next_batch(&BusyUrls::none()).await.expect("second");
        if !taken.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let claimed = Utc::now();
    assert_eq!(taken.len(), 3, "taken over once the delay ran");
    assert!(
        claimed >= last_fetch + TimeDelta::seconds(3),
        "claimed {} ms after the last fetch",
        (claimed - last_fetch).num_milliseconds()
    );
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}
