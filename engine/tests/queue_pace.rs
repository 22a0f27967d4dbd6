//! A pace the fetcher learned, kept in the queues index against the real node: written with the
//! status writes that report it (never over a pace learned later, and without touching
//! `lastUpdated`), kept between holders when the queue is given back, handed to the next holder
//! (another process, or this crawl after a restart), and added to a queues index made before it.

use crate::support;
use std::time::Duration;

use chrono::{DateTime, SubsecRound, TimeDelta, Utc};
use serde_json::{Value, json};
use squall::config::ConfigBuilder;
use squall::frontier::StatusWrite;
use squall::frontier::{BusyUrls, LearnedPace, PaceCause, QueueReport, Spout, StatusStore};
use squall::model::{CrawlUrl, Status};
use squall_engine::client::indices::ensure_index;
use squall_engine::client::{EsClient, Method};
use squall_engine::queue::pace::pace_properties;
use squall_engine::queue::schema::queues_index_body;
use squall_engine::queue::{PaceBounds, QueueSpout, QueueSpoutConfig, QueueStatusStore};
use squall_engine::status_index::schema::KeyField;

const KEY: &str = "paced.test";

/// A spout whose policy learns a pace, with a 1 s politeness delay.
fn learning(urls: &str, queues: &str, owner: &str) -> QueueSpoutConfig {
    QueueSpoutConfig {
        owner: owner.to_string(),
        lease_ttl: Duration::from_secs(5),
        refresh_interval: Duration::from_secs(1),
        politeness_delay: Duration::from_secs(1),
        pace_bounds: Some(PaceBounds {
            floor: Duration::from_millis(500),
            max: Duration::from_secs(30),
            decay: Duration::from_secs(3600),
        }),
        ..QueueSpoutConfig::new(urls, queues)
    }
}

fn write(url: &str, status: Status, due_in: TimeDelta, pace: Option<LearnedPace>) -> StatusWrite {
    StatusWrite {
        url: CrawlUrl::seed(url::Url::parse(url).expect("url")),
        key: KEY.to_string(),
        status,
        next_fetch: Some(Utc::now() + due_in),
        queue: QueueReport {
            pace,
            ..QueueReport::default()
        },
    }
}

/// A page the server pushed back on, due again now, reported with the pace it taught.
fn paced(url: &str, pace: LearnedPace) -> StatusWrite {
    write(url, Status::FetchError, TimeDelta::zero(), Some(pace))
}

/// A 429's pace, learned `ago` before now (to the millisecond, as the index keeps dates).
fn pushed_back(delay: Duration, ago: TimeDelta) -> LearnedPace {
    LearnedPace {
        delay,
        cause: PaceCause::Http(429),
        strikes: 1,
        limit: Some(delay / 2),
        at: (Utc::now() - ago).trunc_subsecs(3),
    }
}

async fn queue_source(client: &EsClient, queues: &str) -> Value {
    support::queue_doc(client, queues, KEY)
        .await
        .expect("the queue's document")["_source"]
        .clone()
}

fn date_of(source: &Value, field: &str) -> DateTime<Utc> {
    let text = source[field].as_str().unwrap_or_default();
    DateTime::parse_from_rfc3339(text)
        .map(|d| d.with_timezone(&Utc))
        .unwrap_or_else(|_| panic!("{field} is a date: {source}"))
}

#[tokio::test]
async fn a_learned_pace_is_kept_on_the_queue_and_handed_to_its_next_holder() {
    let client = support::client().await;
    let urls = support::status_index(&client, "pace-urls", 1).await;
    let queues = support::unique_index("pace-queues");
    ensure_index(&client, &queues, queues_index_body(1, 0, "1s"))
        .await
        .expect("queues index");
    let writer = QueueStatusStore::new(client.clone(), &urls, &queues, KeyField::default());
    let seeds = (0..3)
        .map(|i| {
            let url = format!("http://{KEY}/{i}");
            write(&url, Status::Discovered, TimeDelta::seconds(-1), None)
        })
        .collect();
    assert!(writer.store(seeds).await.iter().all(Result::is_ok));
    writer.flush().await.expect("refresh");

    let mut first = QueueSpout::new(client.clone(), learning(&urls, &queues, "first"));
    let store = first.status_store();
    let handed = first.next_batch(&BusyUrls::none()).await.expect("first");
    assert_eq!(handed.len(), 3);
    assert_eq!(handed[0].hints.pace, None, "nothing learned yet");
    let before = queue_source(&client, &queues).await;

    // The server pushed back: the fetcher keeps 4 s between fetches and reports it with the page.
    let pace = pushed_back(Duration::from_secs(4), TimeDelta::zero());
    let fetched = paced(handed[0].url.url.as_ref(), pace);
    assert!(store.store(vec![fetched]).await.iter().all(Result::is_ok));
    let stored = queue_source(&client, &queues).await;
    assert_eq!(
        (
            &stored["paceSeconds"],
            &stored["paceCause"],
            &stored["paceStrikes"]
        ),
        (&json!(4.0), &json!("http_429"), &json!(1)),
        "{stored}"
    );
    assert_eq!(stored["paceLimitSeconds"], json!(2.0));
    assert_eq!(
        stored["lastUpdated"], before["lastUpdated"],
        "a pace is no write of the queue's URLs"
    );
    // A report learned earlier, arriving late, changes nothing.
    let stale = pushed_back(Duration::from_secs(1), TimeDelta::seconds(10));
    let late = paced(handed[1].url.url.as_ref(), stale);
    assert!(store.store(vec![late]).await.iter().all(Result::is_ok));
    assert_eq!(
        queue_source(&client, &queues).await["paceSeconds"],
        json!(4.0)
    );

    // The URLs leave the topology (failed back, so that they stay due), and the process stops:
    // it drops its hold, keeping the pace it noted.
    // To the millisecond, as the index keeps dates.
    let left = Utc::now().trunc_subsecs(3);
    let _ = first.next_batch(&BusyUrls::none()).await.expect("settles");
    for due in &handed {
        first.fail(&due.url).await;
    }
    first.close().await;
    let given_back = date_of(&queue_source(&client, &queues).await, "leaseUntil");
    assert!(
        given_back >= left + TimeDelta::seconds(4),
        "given back until {} ms after the URLs left: the 4 s pace, not the 1 s delay",
        (given_back - left).num_milliseconds()
    );

    // Another process takes the queue over once the pace ran, and starts from it.
    let mut second = QueueSpout::new(client.clone(), learning(&urls, &queues, "second"));
    let taken = take_over(&mut second).await;
    assert!(
        Utc::now() >= left + TimeDelta::seconds(4),
        "claimed within the pace"
    );
    assert_eq!(taken.len(), 3, "taken over once the pace ran");
    assert!(
        taken.iter().all(|due| due.hints.pace == Some(pace)),
        "the next holder starts from the pace learned: {:?}",
        taken[0].hints.pace
    );
    // It fetches them all (due again tomorrow) and releases the drained queue, keeping the pace
    // it only read.
    let store = second.status_store();
    let done: Vec<StatusWrite> = taken
        .iter()
        .map(|due| {
            write(
                due.url.url.as_ref(),
                Status::Fetched,
                TimeDelta::days(1),
                None,
            )
        })
        .collect();
    assert!(store.store(done).await.iter().all(Result::is_ok));
    let left = Utc::now().trunc_subsecs(3);
    let mut released = Value::Null;
    for _ in 0..120 {
        let _ = second.next_batch(&BusyUrls::none()).await.expect("second");
        released = queue_source(&client, &queues).await;
        if released["leaseOwner"].is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(released["leaseOwner"].is_null(), "released: {released}");
    let given_back = date_of(&released, "leaseUntil");
    assert!(
        given_back >= left + TimeDelta::seconds(4),
        "released until {} ms after the URLs left",
        (given_back - left).num_milliseconds()
    );
    second.close().await;
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}

/// Asks `spout` for URLs until it hands some out (the queue's gap and the index's refresh pass).
async fn take_over(spout: &mut QueueSpout) -> Vec<squall::frontier::DueUrl> {
    for _ in 0..80 {
        let taken = spout.next_batch(&BusyUrls::none()).await.expect("a batch");
        if !taken.is_empty() {
            return taken;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Vec::new()
}

#[tokio::test]
async fn a_queues_index_made_before_the_pace_gets_its_fields_when_the_frontier_opens() {
    let client = support::client().await;
    let urls = support::unique_index("pace-old-urls");
    let queues = support::unique_index("pace-old-queues");
    let mut old_body = queues_index_body(1, 0, "1s");
    let pace_fields = pace_properties();
    if let (Some(properties), Some(pace)) = (
        old_body["mappings"]["properties"].as_object_mut(),
        pace_fields.as_object(),
    ) {
        properties.retain(|field, _| !pace.contains_key(field));
    }
    ensure_index(&client, &queues, old_body)
        .await
        .expect("a queues index as squall made it before the pace");
    let mapped =
        |mapping: &Value| mapping[&queues]["mappings"]["properties"]["paceSeconds"].clone();
    let mapping_path = format!("/{queues}/_mapping");
    let before = client
        .request(Method::Get, &mapping_path, &[], None)
        .await
        .expect("mapping");
    assert_eq!(mapped(&before), Value::Null, "made without the pace");

    let config = ConfigBuilder::new()
        .set("http.agent.name=test")
        .and_then(|b| b.set("frontier.kind=opensearch"))
        .and_then(|b| b.set(&format!("es.status.addresses={}", support::base_url())))
        .and_then(|b| b.set(&format!("es.status.index.name={urls}")))
        .and_then(|b| b.set(&format!("es.queues.index.name={queues}")))
        .and_then(|b| b.set("es.status.spout=queue"))
        .and_then(|b| b.set("es.status.index.shards=1"))
        .and_then(|b| b.set("es.status.index.replicas=0"))
        .and_then(|b| b.build())
        .expect("config");
    for time in ["first", "second"] {
        let frontier = match squall_engine::setup::open(&config).await {
            Ok(frontier) => frontier,
            Err(error) => panic!("opened the {time} time: {error}"),
        };
        let after = client
            .request(Method::Get, &mapping_path, &[], None)
            .await
            .expect("mapping");
        assert_eq!(
            mapped(&after),
            json!({ "type": "float" }),
            "{time}: {after}"
        );
        // The strict index takes a queue's pace now.
        let pace = pushed_back(Duration::from_secs(3), TimeDelta::zero());
        let report = paced(&format!("http://{KEY}/{time}"), pace);
        let stored = frontier.store.store(vec![report]).await;
        assert!(stored.iter().all(Result::is_ok), "{time}: {stored:?}");
        assert_eq!(
            queue_source(&client, &queues).await["paceSeconds"],
            json!(3.0)
        );
    }
    support::delete_index(&client, &urls).await;
    support::delete_index(&client, &queues).await;
}
