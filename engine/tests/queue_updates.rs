//! The queue frontier's edits of queue documents (lowering `nextDue`, renewing, releasing and
//! dropping leases, creating missing queues) on the real engine, made each way the engine serves:
//! Painless scripts (OpenSearch) and conditional writes retried on conflict (every engine; the only
//! way on an Elasticsearch node without Painless).
//!
//! - Random documents and random edits, applied on the engine and to an in-memory model (the Rust
//!   rules of [`QueueEdit::apply`]): every outcome and every document must match. On an engine
//!   with Painless this shows the scripts and the Rust rules agree.
//! - Every combination of the fields and parameters the rules compare (absent, or one of three
//!   dates, equal ones included), edited each way and compared with the model.
//! - Many writers editing the same few queues at once: no edit is lost (the final state is what
//!   applying all of them in any order gives).
//! - The automatic choice takes scripts exactly where a scripted update works.
//!
//! Reproducible from its seed: `SQUALL_QUEUE_UPDATES_SEED` (default: from the clock, printed).

use crate::support;
use std::collections::BTreeMap;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use squall_engine::client::indices::ensure_index;
use squall_engine::client::{BulkItem, BulkOperation, BulkRequest, EsClient, Method, RequestBody};
use squall_engine::queue::edit_apply::{EditOutcome, apply_edits};
use squall_engine::queue::edit_rules::{KeyedEdit, QueueEdit};
use squall_engine::queue::pace::PaceParams;
use squall_engine::queue::schema::{queue_id, queues_index_body};

/// Dates from a small pool, so that comparisons meet equal values too.
const DATES: &[&str] = &[
    "2025-01-01T00:00:00.000Z",
    "2025-01-01T00:00:01.000Z",
    "2026-01-01T00:00:00.000Z",
];
/// When the exhaustive cases' edits are made, and renewals' new end.
const LATER: &str = "2027-01-01T00:00:00.000Z";
const OWNERS: &[&str] = &["a", "b"];
const KEYS: usize = 30;

fn seed() -> u64 {
    let seed = std::env::var("SQUALL_QUEUE_UPDATES_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(1)
        });
    eprintln!("queue_updates: seed {seed} (SQUALL_QUEUE_UPDATES_SEED={seed} reproduces it)");
    seed
}

fn some_date(rng: &mut ChaCha8Rng) -> String {
    DATES.choose(rng).map(|d| d.to_string()).unwrap_or_default()
}

fn maybe_date(rng: &mut ChaCha8Rng) -> Option<String> {
    rng.random_bool(0.7).then(|| some_date(rng))
}

/// A queue document as any writer could have left it: each field absent, null or set.
fn random_queue(rng: &mut ChaCha8Rng, key: &str) -> Map<String, Value> {
    let mut doc = Map::new();
    doc.insert("key".into(), json!(key));
    for field in [
        "nextDue",
        "heldDue",
        "leaseUntil",
        "lastUpdated",
        "blockedUntil",
        "firstSeen",
    ] {
        match rng.random_range(0..4) {
            0 => {}
            1 => {
                doc.insert(field.into(), Value::Null);
            }
            _ => {
                doc.insert(field.into(), json!(some_date(rng)));
            }
        }
    }
    match rng.random_range(0..3) {
        0 => {}
        1 => {
            doc.insert("leaseOwner".into(), Value::Null);
        }
        _ => {
            doc.insert("leaseOwner".into(), json!(OWNERS.choose(rng)));
        }
    }
    if rng.random_bool(0.5) {
        doc.insert("crawlDelaySeconds".into(), json!([0.5, 2.5].choose(rng)));
    }
    if rng.random_bool(0.4) {
        random_pace(rng).write_to(&mut doc);
    }
    doc
}

/// A learned pace, dated from the pool.
fn random_pace(rng: &mut ChaCha8Rng) -> PaceParams {
    PaceParams {
        cause: ["http_429", "slow_answers", "recovering"]
            .choose(rng)
            .map(|c| c.to_string())
            .unwrap_or_default(),
        strikes: rng.random_range(0..4),
        ..pace_at(
            &some_date(rng),
            *[0.5, 2.0, 8.0].choose(rng).unwrap_or(&2.0),
        )
    }
}

fn pace_at(updated: &str, seconds: f64) -> PaceParams {
    PaceParams {
        seconds,
        cause: "http_429".into(),
        strikes: 1,
        limit_seconds: (seconds > 1.0).then_some(seconds / 2.0),
        updated: updated.to_string(),
    }
}

fn random_edit(rng: &mut ChaCha8Rng, key: &str) -> KeyedEdit {
    let owner = OWNERS
        .choose(rng)
        .map(|o| o.to_string())
        .unwrap_or_default();
    let edit = match rng.random_range(0..5) {
        0 => QueueEdit::Lower {
            due: maybe_date(rng),
            blocked: rng.random_bool(0.3).then(|| some_date(rng)),
            delay: rng
                .random_bool(0.3)
                .then(|| *[0.5, 2.5].choose(rng).unwrap_or(&0.5)),
            pace: rng.random_bool(0.3).then(|| random_pace(rng)),
            now: some_date(rng),
        },
        1 => QueueEdit::Renew {
            owner,
            until: some_date(rng),
        },
        2 => QueueEdit::Release {
            owner,
            next: maybe_date(rng),
            seen_before: some_date(rng),
            now: some_date(rng),
        },
        3 => QueueEdit::DropLease {
            owner,
            now: some_date(rng),
        },
        _ => QueueEdit::Keep,
    };
    let upsert = rng
        .random_bool(0.5)
        .then(|| json!({ "key": key, "firstSeen": some_date(rng), "nextDue": some_date(rng) }));
    KeyedEdit {
        key: key.to_string(),
        edit,
        upsert,
    }
}

/// The model's outcome of one edit on its documents.
fn model_apply(model: &mut BTreeMap<String, Map<String, Value>>, edit: &KeyedEdit) -> EditOutcome {
    match model.get_mut(&edit.key) {
        Some(doc) => {
            if edit.edit.apply(doc) {
                EditOutcome::Changed
            } else {
                EditOutcome::Unchanged
            }
        }
        None => match &edit.upsert {
            Some(upsert) => {
                let doc = upsert.as_object().cloned().unwrap_or_default();
                model.insert(edit.key.clone(), doc);
                EditOutcome::Created
            }
            None => EditOutcome::Missing,
        },
    }
}

async fn queues_index(client: &EsClient) -> String {
    let index = support::unique_index("queue-updates");
    ensure_index(client, &index, queues_index_body(1, 0, "1s"))
        .await
        .expect("queues index");
    index
}

/// Every queue document of `index`, by key (realtime reads by id).
async fn stored(
    client: &EsClient,
    index: &str,
    keys: &[String],
) -> BTreeMap<String, Map<String, Value>> {
    let ids: Vec<String> = keys.iter().map(|k| queue_id(k)).collect();
    let answer = client
        .request(
            Method::Post,
            &format!("/{index}/_mget"),
            &[],
            Some(RequestBody::Json(json!({ "ids": ids }))),
        )
        .await
        .expect("mget");
    let mut found = BTreeMap::new();
    for (key, doc) in keys
        .iter()
        .zip(answer["docs"].as_array().cloned().unwrap_or_default())
    {
        if doc["found"] == true {
            let source = doc["_source"].as_object().cloned().expect("a source");
            found.insert(key.clone(), source);
        }
    }
    found
}

async fn put(client: &EsClient, index: &str, key: &str, doc: &Map<String, Value>) {
    client
        .request(
            Method::Put,
            &format!("/{index}/_doc/{}", queue_id(key)),
            &[],
            Some(RequestBody::Json(Value::Object(doc.clone()))),
        )
        .await
        .expect("put a queue");
}

#[tokio::test]
async fn each_way_of_editing_gives_what_the_rules_give_on_random_queues() {
    let seed = seed();
    for mode in support::update_modes().await {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let client = support::client_updating(mode).await;
        let index = queues_index(&client).await;
        let keys: Vec<String> = (0..KEYS).map(|i| format!("host-{i}.test")).collect();
        let mut model = BTreeMap::new();
        for key in &keys {
            // A few queues are missing: the edits then create them from the upsert or find nothing.
            if rng.random_bool(0.8) {
                let doc = random_queue(&mut rng, key);
                put(&client, &index, key, &doc).await;
                model.insert(key.clone(), doc);
            }
        }
        let mut applied = 0;
        for round in 0..60 {
            // One edit per key at most in a batch: the engine applies a batch's items in any order.
            let mut batch = Vec::new();
            for key in &keys {
                if rng.random_bool(0.6) {
                    batch.push(random_edit(&mut rng, key));
                }
            }
            let outcomes = apply_edits(&client, &index, &batch).await.expect("edits");
            for (edit, outcome) in batch.iter().zip(&outcomes) {
                let expected = model_apply(&mut model, edit);
                assert_eq!(
                    outcome, &expected,
                    "seed {seed}, {mode:?}, round {round}: {edit:?}"
                );
            }
            applied += batch.len();
            let on_engine = stored(&client, &index, &keys).await;
            assert_eq!(on_engine, model, "seed {seed}, {mode:?}, round {round}");
        }
        eprintln!("{mode:?}: {applied} edits on {KEYS} queues, engine and model agree");
        support::delete_index(&client, &index).await;
    }
}

/// A field's possible values in the exhaustive cases: absent, or one of the dates.
fn date_choices() -> Vec<Option<&'static str>> {
    std::iter::once(None)
        .chain(DATES.iter().copied().map(Some))
        .collect()
}

/// Every combination of the fields and parameters an edit's rule compares, one case each.
fn exhaustive_cases() -> Vec<(Map<String, Value>, QueueEdit)> {
    let mut cases = Vec::new();
    let doc = |fields: &[(&str, Option<Value>)]| -> Map<String, Value> {
        fields
            .iter()
            .filter_map(|(name, value)| value.clone().map(|v| (name.to_string(), v)))
            .collect()
    };
    let dates = date_choices();
    let owners = [None, Some("a"), Some("b")];
    let delays = [None, Some(0.5), Some(2.5)];
    for (next_due, held, written) in iproduct3(&dates, &dates, &dates) {
        for owner in owners {
            for (next, seen_before) in
                iproduct2(&dates, &DATES.iter().copied().map(Some).collect::<Vec<_>>())
            {
                let source = doc(&[
                    ("nextDue", next_due.map(|d| json!(d))),
                    ("heldDue", held.map(|d| json!(d))),
                    ("lastUpdated", written.map(|d| json!(d))),
                    ("leaseOwner", owner.map(|o| json!(o))),
                ]);
                let release = QueueEdit::Release {
                    owner: "a".into(),
                    next: next.map(str::to_string),
                    seen_before: seen_before.unwrap_or_default().to_string(),
                    now: LATER.into(),
                };
                cases.push((source, release));
            }
        }
    }
    for (next_due, held, blocked_until) in iproduct3(&dates, &dates, &dates) {
        for stored_delay in delays {
            for (due, blocked) in iproduct2(&dates, &dates) {
                for delay in delays {
                    let source = doc(&[
                        ("nextDue", next_due.map(|d| json!(d))),
                        ("heldDue", held.map(|d| json!(d))),
                        ("blockedUntil", blocked_until.map(|d| json!(d))),
                        ("crawlDelaySeconds", stored_delay.map(|d| json!(d))),
                    ]);
                    let lower = QueueEdit::Lower {
                        due: due.map(str::to_string),
                        blocked: blocked.map(str::to_string),
                        delay,
                        pace: None,
                        now: LATER.into(),
                    };
                    cases.push((source, lower));
                }
            }
        }
    }
    // A pace reported against none stored, an older, the same or a newer one; alone or with a date.
    for (stored, reported) in iproduct2(&dates, &dates) {
        for due in [None, Some(DATES[1])] {
            let mut source = doc(&[("lastUpdated", Some(json!(DATES[0])))]);
            if let Some(stored) = stored {
                pace_at(stored, 2.0).write_to(&mut source);
            }
            let lower = QueueEdit::Lower {
                due: due.map(str::to_string),
                blocked: None,
                delay: None,
                pace: reported.map(|updated| pace_at(updated, 8.0)),
                now: LATER.into(),
            };
            cases.push((source, lower));
        }
    }
    // A pace date stored in another form than squall writes (the date mapping takes it).
    let mut source = doc(&[("lastUpdated", Some(json!(DATES[0])))]);
    pace_at(DATES[2], 2.0).write_to(&mut source);
    source.insert("paceUpdated".into(), json!("2025-01-01"));
    let lower = QueueEdit::Lower {
        due: None,
        blocked: None,
        delay: None,
        pace: Some(pace_at(DATES[0], 8.0)),
        now: LATER.into(),
    };
    cases.push((source, lower));
    for owner in owners {
        let source = doc(&[
            ("leaseOwner", owner.map(|o| json!(o))),
            ("leaseUntil", Some(json!(DATES[0]))),
        ]);
        cases.push((
            source.clone(),
            QueueEdit::Renew {
                owner: "a".into(),
                until: LATER.into(),
            },
        ));
        cases.push((
            source.clone(),
            QueueEdit::DropLease {
                owner: "a".into(),
                now: LATER.into(),
            },
        ));
        cases.push((source, QueueEdit::Keep));
    }
    cases
}

fn iproduct2<A: Copy, B: Copy>(a: &[A], b: &[B]) -> Vec<(A, B)> {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| (*x, *y)))
        .collect()
}

fn iproduct3<A: Copy>(a: &[A], b: &[A], c: &[A]) -> Vec<(A, A, A)> {
    iproduct2(a, b)
        .into_iter()
        .flat_map(|(x, y)| c.iter().map(move |z| (x, y, *z)))
        .collect()
}

#[tokio::test]
async fn each_way_of_editing_gives_what_the_rules_give_in_every_small_case() {
    let cases = exhaustive_cases();
    for mode in support::update_modes().await {
        let client = support::client_updating(mode).await;
        let index = queues_index(&client).await;
        let mut model = BTreeMap::new();
        let keys: Vec<String> = (0..cases.len()).map(|i| format!("case-{i}")).collect();
        for (chunk_keys, chunk) in keys.chunks(1000).zip(cases.chunks(1000)) {
            let request: BulkRequest = chunk_keys
                .iter()
                .zip(chunk)
                .map(|(key, (doc, _))| {
                    BulkOperation::index(queue_id(key), Value::Object(doc.clone()))
                })
                .collect();
            let answer = client
                .bulk(Some(&index), &request, None)
                .await
                .expect("bulk");
            assert!(
                answer.items.iter().all(BulkItem::is_success),
                "documents written"
            );
            for (key, (doc, _)) in chunk_keys.iter().zip(chunk) {
                model.insert(key.clone(), doc.clone());
            }
            let edits: Vec<KeyedEdit> = chunk_keys
                .iter()
                .zip(chunk)
                .map(|(key, (_, edit))| KeyedEdit {
                    key: key.clone(),
                    edit: edit.clone(),
                    upsert: None,
                })
                .collect();
            let outcomes = apply_edits(&client, &index, &edits).await.expect("edits");
            for (edit, outcome) in edits.iter().zip(&outcomes) {
                let before = model[&edit.key].clone();
                let expected = model_apply(&mut model, edit);
                assert_eq!(outcome, &expected, "{mode:?}: {edit:?} on {before:?}");
            }
            let on_engine = stored(&client, &index, chunk_keys).await;
            for key in chunk_keys {
                assert_eq!(on_engine.get(key), model.get(key), "{mode:?}: {key}");
            }
        }
        eprintln!("{mode:?}: {} cases, engine and model agree", cases.len());
        support::delete_index(&client, &index).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_writers_on_the_same_queues_lose_no_edit() {
    const WRITERS: usize = 8;
    const BATCHES: usize = 15;
    let seed = seed();
    let keys: Vec<String> = (0..3).map(|i| format!("busy-{i}.test")).collect();
    for mode in support::update_modes().await {
        let client = support::client_updating(mode).await;
        let index = queues_index(&client).await;
        let mut writers = Vec::new();
        for writer in 0..WRITERS {
            let (client, index, keys) = (client.clone(), index.clone(), keys.clone());
            let mut rng = ChaCha8Rng::seed_from_u64(seed + writer as u64);
            writers.push(tokio::spawn(async move {
                let mut written: Vec<(String, String, String)> = Vec::new();
                for _ in 0..BATCHES {
                    let mut batch = Vec::new();
                    for key in &keys {
                        // Distinct dates per writer and batch: the earliest must win, whoever wrote it.
                        let due = format!(
                            "2025-01-{:02}T00:{:02}:{:02}.000Z",
                            rng.random_range(1..29),
                            rng.random_range(0..60),
                            rng.random_range(0..60)
                        );
                        let blocked =
                            format!("2026-02-{:02}T00:00:00.000Z", rng.random_range(1..29));
                        written.push((key.clone(), due.clone(), blocked.clone()));
                        batch.push(KeyedEdit {
                            key: key.clone(),
                            upsert: Some(json!({ "key": key, "nextDue": due, "heldDue": due,
                                                 "blockedUntil": blocked })),
                            edit: QueueEdit::Lower {
                                due: Some(due),
                                blocked: Some(blocked),
                                delay: None,
                                pace: None,
                                now: "2025-06-01T00:00:00.000Z".into(),
                            },
                        });
                    }
                    let outcomes = apply_edits(&client, &index, &batch).await.expect("edits");
                    for outcome in outcomes {
                        assert!(outcome.is_done(), "an edit failed: {outcome:?}");
                    }
                }
                written
            }));
        }
        let mut written = Vec::new();
        for writer in writers {
            written.extend(writer.await.expect("writer"));
        }
        let on_engine = stored(&client, &index, &keys).await;
        for key in &keys {
            let dues = written.iter().filter(|w| &w.0 == key).map(|w| w.1.as_str());
            let blocks = written.iter().filter(|w| &w.0 == key).map(|w| w.2.as_str());
            let doc = &on_engine[key];
            assert_eq!(doc["nextDue"], json!(dues.clone().min()), "{mode:?} {key}");
            assert_eq!(doc["heldDue"], json!(dues.min()), "{mode:?} {key}");
            assert_eq!(doc["blockedUntil"], json!(blocks.max()), "{mode:?} {key}");
        }
        eprintln!(
            "{mode:?}: {WRITERS} writers x {BATCHES} batches on {} queues, no edit lost",
            keys.len()
        );
        support::delete_index(&client, &index).await;
    }
}
