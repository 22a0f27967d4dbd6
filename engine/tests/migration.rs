//! The status-index migration against a real engine (`OPENSEARCH_URL`, default
//! http://127.0.0.1:9200; start one with `scripts/opensearch start`).

use crate::support;
use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{Value, json};
use squall::model::PartitionMode;
use squall_engine::client::Method;
use squall_engine::client::{ConnectionConfig, EsClient, RequestBody};
use squall_engine::migrate::{
    Checkpoint, MigrateError, MigrationOptions, SlicePosition, migrate, verify,
};
use squall_engine::queue::schema::queue_id;
use squall_engine::status_index::schema::{KeyField, document_id, format_date, urls_index_body};

const STATUSES: [&str; 5] = [
    "DISCOVERED",
    "FETCHED",
    "FETCH_ERROR",
    "REDIRECTION",
    "ERROR",
];
const HOSTS: usize = 20;
const DOCS: usize = 300;

/// Where a test source keeps its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyStyle {
    TopLevel,
    MetadataHostname,
}

/// A StormCrawler-format source index and what the migration must make of it.
struct Source {
    name: String,
    /// Documents by id, as written.
    docs: BTreeMap<String, Value>,
    /// The expected `nextDue` per key (`None`: no URL of the key has a date).
    expected: BTreeMap<String, Option<DateTime<Utc>>>,
}

fn base_date() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 5, 2, 10, 0, 0)
        .single()
        .expect("date")
}

/// Builds a source of 300 documents over 20 hosts plus `never.test` (5 documents, none with a
/// `nextFetchDate`): every 4th without a key, every 7th without `nextFetchDate`, dates in two forms.
async fn build_source(client: &EsClient, style: KeyStyle) -> Source {
    build_source_of(client, style, 3, DOCS).await
}

/// [`build_source`] with `shards` shards and `count` documents over the 20 hosts (plus the 5 of
/// `never.test`).
async fn build_source_of(client: &EsClient, style: KeyStyle, shards: u32, count: usize) -> Source {
    let name = support::status_index(client, "migration-source", shards).await;
    let mut docs = BTreeMap::new();
    let mut expected: BTreeMap<String, Option<DateTime<Utc>>> = BTreeMap::new();
    let mut add = |host: String, url: String, j: usize, date: Option<DateTime<Utc>>| {
        let mut doc = json!({
            "url": url,
            "status": STATUSES[j % STATUSES.len()],
            "metadata": { "depth": [(j % 3).to_string()], "url%2Epath": [format!("https://{host}/")] }
        });
        if let Some(date) = date {
            let text = if j.is_multiple_of(3) {
                date.format("%Y-%m-%dT%H:%M:%SZ").to_string()
            } else {
                format_date(date)
            };
            doc["nextFetchDate"] = json!(text);
        }
        if !j.is_multiple_of(4) {
            match style {
                KeyStyle::TopLevel => doc["key"] = json!(host),
                KeyStyle::MetadataHostname => doc["metadata"]["hostname"] = json!([host]),
            }
        }
        let entry = expected.entry(host).or_insert(None);
        if let Some(date) = date {
            *entry = Some(entry.map_or(date, |known| known.min(date)));
        }
        docs.insert(document_id(&url), doc);
    };
    for j in 0..count {
        let host = format!("host{}.test", j % HOSTS);
        let url = format!("https://{host}/page/{j}");
        let date = (!j.is_multiple_of(7))
            .then(|| base_date() + Duration::minutes(((j * 37) % 1000) as i64));
        add(host, url, j, date);
    }
    for j in 0..5 {
        add(
            "never.test".to_string(),
            format!("https://never.test/{j}"),
            j,
            None,
        );
    }
    let mut lines = Vec::new();
    for (id, doc) in &docs {
        lines.push(json!({ "index": { "_index": name, "_id": id } }));
        lines.push(doc.clone());
    }
    let answer = support::bulk(client, &name, lines).await;
    assert_eq!(answer["errors"], json!(false), "{answer}");
    Source {
        name,
        docs,
        expected,
    }
}

/// A client, a fresh source index in `style`, a temporary directory and the migration options
/// for them: what most tests start from.
async fn setup(style: KeyStyle) -> (EsClient, Source, tempfile::TempDir, MigrationOptions) {
    let client = support::client().await;
    let source = build_source(&client, style).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let options = options(&source, dir.path(), style);
    (client, source, dir, options)
}

fn options(source: &Source, dir: &Path, style: KeyStyle) -> MigrationOptions {
    let urls = support::unique_index("migration-urls");
    let mut options = MigrationOptions::new(
        &source.name,
        &urls,
        &support::unique_index("migration-queues"),
    );
    options.batch_size = 50;
    options.urls_shards = 2;
    options.replicas = 0;
    options.checkpoint = dir.join("checkpoint.json");
    if style == KeyStyle::MetadataHostname {
        options.bucket_field = "metadata.hostname".to_string();
    }
    options
}

async fn get(client: &EsClient, index: &str, id: &str) -> Option<Value> {
    match client
        .request(Method::Get, &format!("/{index}/_doc/{id}"), &[], None)
        .await
    {
        Ok(answer) => Some(answer["_source"].clone()),
        Err(error) if error.status() == Some(404) => None,
        Err(error) => panic!("GET {index}/{id}: {error}"),
    }
}

async fn exists(client: &EsClient, index: &str) -> bool {
    match client
        .request(Method::Head, &format!("/{index}"), &[], None)
        .await
    {
        Ok(_) => true,
        Err(error) if error.status() == Some(404) => false,
        Err(error) => panic!("HEAD {index}: {error}"),
    }
}

/// Every urls document is the source document, plus the key where it had none; readable by id
/// without routing.
async fn check_urls(client: &EsClient, source: &Source, options: &MigrationOptions) {
    let key_field = KeyField::parse(&options.bucket_field);
    for (id, original) in &source.docs {
        let copied = get(client, &options.urls, id)
            .await
            .unwrap_or_else(|| panic!("document {id} is missing from urls"));
        let host = url::Url::parse(original["url"].as_str().expect("url"))
            .expect("url")
            .host_str()
            .expect("host")
            .to_string();
        let mut expected = original.clone();
        match &key_field {
            KeyField::TopLevel(field) => expected[field.as_str()] = json!(host),
            KeyField::Metadata(name) => expected["metadata"][name.as_str()] = json!([host]),
        }
        assert_eq!(copied, expected, "document {id}");
    }
    assert_eq!(
        support::count(client, &options.urls).await,
        source.docs.len() as u64
    );
}

/// One queue per key, with `nextDue` = the earliest date of its URLs (none for `never.test`).
async fn check_queues(client: &EsClient, source: &Source, options: &MigrationOptions) {
    assert_eq!(
        support::count(client, &options.queues).await,
        source.expected.len() as u64
    );
    for (key, due) in &source.expected {
        let queue = get(client, &options.queues, &queue_id(key))
            .await
            .unwrap_or_else(|| panic!("no queue for {key}"));
        assert_eq!(queue["key"], json!(key));
        assert_eq!(
            queue.get("nextDue").cloned(),
            due.map(|d| json!(format_date(d))),
            "nextDue of {key}"
        );
    }
}

/// An index setting (`refresh_interval`, `number_of_replicas`), as set on the index.
async fn index_setting(client: &EsClient, index: &str, name: &str) -> Value {
    let settings = client
        .request(Method::Get, &format!("/{index}/_settings"), &[], None)
        .await
        .expect("settings");
    settings[index]["settings"]["index"][name].clone()
}

async fn cleanup(client: &EsClient, indices: &[&str]) {
    for index in indices {
        support::delete_index(client, index).await;
    }
}

#[tokio::test]
async fn a_stopped_migration_resumes_and_a_second_run_is_harmless() {
    let (client, source, _dir, mut options) = setup(KeyStyle::TopLevel).await;
    let total = source.docs.len() as u64;
    assert_eq!(total, 305);
    assert_eq!(source.expected.len(), HOSTS + 1);

    // Stopped after the first batch: 50 documents, a checkpoint to continue from.
    options.stop_after_batches = Some(1);
    let first = migrate(&client, &options).await.expect("first run");
    assert!(!first.completed);
    assert_eq!(first.documents, 50);
    assert!(!first.verification.performed);
    let checkpoint = Checkpoint::load(&options.checkpoint)
        .expect("readable checkpoint")
        .expect("a checkpoint after the first batch");
    assert_eq!(checkpoint.documents_done, 50);
    assert_eq!(
        checkpoint.slices.len(),
        3,
        "one slice per shard of the source"
    );
    let moved: Vec<&SlicePosition> = checkpoint
        .slices
        .iter()
        .filter(|slice| slice.after.is_some())
        .collect();
    assert_eq!(moved.len(), 1, "{:?}", checkpoint.slices);
    assert_eq!(moved[0].documents, 50);
    assert_eq!(checkpoint.settings[0].index, options.urls);
    assert_eq!(
        checkpoint.settings[0].refresh_interval.as_deref(),
        Some("5s")
    );
    // The stopped run put the settings back already.
    assert_eq!(
        index_setting(&client, &options.urls, "refresh_interval").await,
        json!("5s")
    );

    // Resumed: the rest, and everything checks out.
    options.stop_after_batches = None;
    let second = migrate(&client, &options).await.expect("resumed run");
    assert!(second.completed);
    let resumed = second.resumed_from.as_ref().expect("resumed");
    assert_eq!(resumed.documents, 50);
    assert_eq!(second.documents, total);
    assert_eq!(second.documents_this_run, total - 50);
    assert!(
        second.verification.ok,
        "{:?}",
        second.verification.problems()
    );
    assert_eq!(second.verification.distinct_keys, (HOSTS + 1) as u64);
    assert_eq!(second.verification.queue_docs, (HOSTS + 1) as u64);
    assert_eq!(second.verification.status_counts_source.len(), 5);
    assert!(
        !options.checkpoint.exists(),
        "checkpoint deleted on success"
    );
    check_urls(&client, &source, &options).await;
    check_queues(&client, &source, &options).await;

    // The urls index was created with refresh off; it is back to 5 s.
    assert_eq!(
        index_setting(&client, &options.urls, "refresh_interval").await,
        json!("5s")
    );

    // A second full run changes nothing.
    let again = migrate(&client, &options).await.expect("second full run");
    assert!(again.completed && again.resumed_from.is_none());
    assert!(again.verification.ok, "{:?}", again.verification.problems());
    assert_eq!(again.documents, total);
    assert_eq!(again.queues_created, 0);
    assert!(again.indices_created.is_empty());
    check_urls(&client, &source, &options).await;
    check_queues(&client, &source, &options).await;

    // The source is untouched.
    assert_eq!(support::count(&client, &source.name).await, total);
    for (id, original) in source.docs.iter().take(10) {
        assert_eq!(
            get(&client, &source.name, id).await.as_ref(),
            Some(original)
        );
    }
    cleanup(&client, &[&source.name, &options.urls, &options.queues]).await;
}

#[tokio::test]
async fn keys_in_metadata_are_kept_or_computed() {
    let (client, source, _dir, mut options) = setup(KeyStyle::MetadataHostname).await;
    options.batch_size = 64;
    options.partition_mode = PartitionMode::ByHost;
    let report = migrate(&client, &options).await.expect("migration");
    assert!(report.completed);
    assert!(
        report.verification.ok,
        "{:?}",
        report.verification.problems()
    );
    let without_key = source
        .docs
        .values()
        .filter(|doc| doc["metadata"].get("hostname").is_none())
        .count() as u64;
    assert_eq!(report.keys_added, without_key);
    assert_eq!(
        report.documents_without_next_fetch_date,
        source
            .docs
            .values()
            .filter(|doc| doc.get("nextFetchDate").is_none())
            .count() as u64
    );
    check_urls(&client, &source, &options).await;
    check_queues(&client, &source, &options).await;
    cleanup(&client, &[&source.name, &options.urls, &options.queues]).await;
}

#[tokio::test]
async fn a_dry_run_writes_nothing() {
    let (client, source, _dir, mut options) = setup(KeyStyle::TopLevel).await;
    options.dry_run = true;
    let report = migrate(&client, &options).await.expect("dry run");
    assert!(report.dry_run && report.completed);
    assert_eq!(report.documents, source.docs.len() as u64);
    assert_eq!(report.distinct_keys_seen, (HOSTS + 1) as u64);
    assert_eq!(report.verification.distinct_keys, (HOSTS + 1) as u64);
    assert!(report.queues_written >= (HOSTS + 1) as u64);
    assert_eq!(
        report.indices_created,
        vec![options.urls.clone(), options.queues.clone()]
    );
    assert_eq!(
        report
            .verification
            .status_counts_source
            .values()
            .sum::<u64>(),
        source.docs.len() as u64
    );
    assert!(!exists(&client, &options.urls).await);
    assert!(!exists(&client, &options.queues).await);
    assert!(!options.checkpoint.exists());
    assert_eq!(
        support::count(&client, &source.name).await,
        source.docs.len() as u64
    );
    cleanup(&client, &[&source.name]).await;
}

#[tokio::test]
async fn the_checks_find_a_broken_invariant_and_missing_queues() {
    let (client, source, _dir, options) = setup(KeyStyle::TopLevel).await;
    let report = migrate(&client, &options).await.expect("migration");
    assert!(report.verification.ok);

    // A queue due later than its earliest URL, and a queue gone.
    let late = "host1.test";
    client
        .request(
            Method::Post,
            &format!("/{}/_update/{}", options.queues, queue_id(late)),
            &[("refresh", "true")],
            Some(RequestBody::Json(
                json!({ "doc": { "nextDue": "2099-01-01T00:00:00.000Z" } }),
            )),
        )
        .await
        .expect("raise nextDue");
    client
        .request(
            Method::Delete,
            &format!("/{}/_doc/{}", options.queues, queue_id("host2.test")),
            &[("refresh", "true")],
            None,
        )
        .await
        .expect("delete a queue");
    let key_field = KeyField::default();
    let checked = verify(
        &client,
        &source.name,
        &options.urls,
        &options.queues,
        &key_field,
    )
    .await
    .expect("verification");
    assert!(!checked.ok);
    assert_eq!(checked.keys_without_queue, vec!["host2.test".to_string()]);
    assert_eq!(checked.invariant_violation_count, 1);
    assert_eq!(checked.invariant_violations[0].key, late);
    assert_eq!(
        checked.invariant_violations[0].earliest_next_fetch_date,
        format_date(source.expected[late].expect("a date"))
    );

    // Running the migration again repairs both: the queue is recreated, and nextDue lowered back.
    let repaired = migrate(&client, &options).await.expect("second run");
    assert!(
        repaired.verification.ok,
        "{:?}",
        repaired.verification.problems()
    );
    check_queues(&client, &source, &options).await;
    cleanup(&client, &[&source.name, &options.urls, &options.queues]).await;
}

#[tokio::test]
async fn errors_name_the_problem() {
    let client = support::client().await;
    let dir = tempfile::tempdir().expect("temp dir");

    let missing = support::unique_index("migration-missing");
    let mut options = MigrationOptions::new(&missing, "migration-u", "migration-q");
    options.checkpoint = dir.path().join("c.json");
    let error = migrate(&client, &options).await.expect_err("no source");
    assert!(
        matches!(error, MigrateError::SourceMissing { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains(&missing), "{error}");
    assert!(!exists(&client, "migration-u").await);

    let same = MigrationOptions::new("a", "a", "b");
    let error = migrate(&client, &same).await.expect_err("same index");
    assert!(matches!(error, MigrateError::Options(_)), "{error:?}");

    let mut settings = ConnectionConfig::new("http://127.0.0.1:1").expect("settings");
    settings.max_retries = 0;
    let nowhere = EsClient::new(settings).expect("client");
    let error = migrate(&nowhere, &options).await.expect_err("no engine");
    assert!(error.to_string().contains("127.0.0.1:1"), "{error}");

    // A checkpoint of another migration is not used.
    let source = build_source(&client, KeyStyle::TopLevel).await;
    let mut options = options_for_checkpoint_test(&source, dir.path());
    let mut other = options.clone();
    other.source = "another-source".to_string();
    Checkpoint {
        version: Checkpoint::VERSION,
        source: other.source.clone(),
        source_uuid: "another-uuid".to_string(),
        urls: other.urls.clone(),
        queues: other.queues.clone(),
        bucket_field: "key".to_string(),
        partition_mode: "byHost".to_string(),
        slices: Vec::new(),
        documents_done: 0,
        queues_written: 0,
        batches: 0,
        settings: Vec::new(),
        updated: format_date(Utc::now()),
    }
    .save(&options.checkpoint)
    .expect("write a checkpoint");
    let error = migrate(&client, &options)
        .await
        .expect_err("foreign checkpoint");
    assert!(
        matches!(error, MigrateError::CheckpointMismatch { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("another-source"), "{error}");
    options.checkpoint = dir.path().join("fresh.json");
    assert!(
        migrate(&client, &options)
            .await
            .expect("migration")
            .verification
            .ok
    );
    cleanup(&client, &[&source.name, &options.urls, &options.queues]).await;
}

#[tokio::test]
async fn documents_without_url_are_copied_too_even_when_resumed() {
    let client = support::client().await;
    let name = support::status_index(&client, "migration-odd-source", 2).await;
    let mut lines = Vec::new();
    for j in 0..5 {
        let url = format!("https://odd.test/{j}");
        lines.push(json!({ "index": { "_index": name, "_id": document_id(&url) } }));
        lines.push(json!({ "url": url, "status": "DISCOVERED",
                           "nextFetchDate": format_date(base_date()) }));
    }
    for j in 0..3 {
        lines.push(json!({ "index": { "_index": name, "_id": format!("no-url-{j}") } }));
        lines.push(json!({ "status": "ERROR", "metadata": { "n": [j.to_string()] } }));
    }
    client
        .request(
            Method::Post,
            "/_bulk",
            &[("refresh", "true")],
            Some(RequestBody::NdJson(lines)),
        )
        .await
        .expect("fill the source");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut options = MigrationOptions::new(
        &name,
        &support::unique_index("migration-odd-urls"),
        &support::unique_index("migration-odd-queues"),
    );
    options.batch_size = 2;
    options.urls_shards = 1;
    options.replicas = 0;
    options.checkpoint = dir.path().join("checkpoint.json");

    // Two pages of two documents: documents with and without a URL are read in the same pass.
    options.stop_after_batches = Some(2);
    let first = migrate(&client, &options).await.expect("first run");
    assert!(!first.completed);
    let checkpoint = Checkpoint::load(&options.checkpoint)
        .expect("readable")
        .expect("a checkpoint");
    assert_eq!(checkpoint.documents_done, first.documents);
    assert!((3..=4).contains(&first.documents), "{first:?}");

    options.stop_after_batches = None;
    let second = migrate(&client, &options).await.expect("resumed run");
    assert!(second.completed);
    assert_eq!(second.documents, 8);
    assert_eq!(second.documents_this_run, 8 - first.documents);
    let without_key = first.documents_without_key + second.documents_without_key;
    assert_eq!(without_key, 3);
    assert!(
        second.verification.ok,
        "{:?}",
        second.verification.problems()
    );
    assert_eq!(second.verification.distinct_keys, 1);
    assert_eq!(
        get(&client, &options.urls, "no-url-1").await,
        Some(json!({ "status": "ERROR", "metadata": { "n": ["1"] } }))
    );
    let queue = get(&client, &options.queues, &queue_id("odd.test"))
        .await
        .expect("the queue");
    assert_eq!(queue["nextDue"], json!(format_date(base_date())));
    cleanup(&client, &[&name, &options.urls, &options.queues]).await;
}

/// A source of five shards read in slices, several at once, its pages written out of order and in
/// several bulks each: stopped after a few pages, its checkpoint then moved back on one slice (as
/// after a crash between a page's writes and the checkpoint), then resumed with other concurrency:
/// every document is there once, each queue right, the checks pass, and the settings of a urls
/// index that existed before are put back.
#[tokio::test]
async fn a_sliced_migration_over_several_shards_resumes_after_a_crash() {
    sliced_migration_resumes_after_a_crash(true).await;
}

/// The same, reading with sliced scrolls (as on an engine without point in time).
#[tokio::test]
async fn a_sliced_migration_with_scrolls_resumes_after_a_crash() {
    sliced_migration_resumes_after_a_crash(false).await;
}

async fn sliced_migration_resumes_after_a_crash(point_in_time: bool) {
    let client = support::client().await;
    let source = build_source_of(&client, KeyStyle::TopLevel, 5, 1000).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut options = options(&source, dir.path(), KeyStyle::TopLevel);
    options.batch_size = 40;
    options.max_slices = 3;
    options.bulk_concurrency = 4;
    options.bulk_bytes = 4096;
    options.point_in_time = point_in_time;
    client
        .request(
            Method::Put,
            &format!("/{}", options.urls),
            &[],
            Some(RequestBody::Json(urls_index_body(3, 0, "2s"))),
        )
        .await
        .expect("an existing urls index");

    options.stop_after_batches = Some(7);
    let first = migrate(&client, &options).await.expect("first run");
    assert!(!first.completed);
    assert_eq!(first.documents, 7 * 40, "{first:?}");
    let checkpoint = Checkpoint::load(&options.checkpoint)
        .expect("readable")
        .expect("a checkpoint");
    assert_eq!(checkpoint.slices.len(), 5);
    let documents: u64 = checkpoint.slices.iter().map(|s| s.documents).sum();
    assert_eq!(documents, 7 * 40);
    assert!(checkpoint.slices.iter().all(|s| !s.done));
    assert_eq!(
        checkpoint.settings[0].refresh_interval.as_deref(),
        Some("2s")
    );
    assert_eq!(
        index_setting(&client, &options.urls, "refresh_interval").await,
        json!("2s"),
        "put back after a stopped run"
    );

    // A crash after the pages of the slice furthest on were written, before the checkpoint said so.
    let mut crashed = checkpoint.clone();
    let furthest = crashed
        .slices
        .iter_mut()
        .max_by_key(|s| s.documents)
        .expect("a slice");
    crashed.documents_done -= furthest.documents;
    *furthest = SlicePosition {
        slice: furthest.slice,
        ..SlicePosition::default()
    };
    crashed
        .save(&options.checkpoint)
        .expect("rewound checkpoint");

    options.stop_after_batches = None;
    options.max_slices = 5;
    options.bulk_concurrency = 2;
    let second = migrate(&client, &options).await.expect("resumed run");
    assert!(second.completed);
    assert!(second.resumed_from.is_some());
    assert_eq!(second.documents, source.docs.len() as u64);
    assert!(
        second.verification.ok,
        "{:?}",
        second.verification.problems()
    );
    assert!(!options.checkpoint.exists());
    check_urls(&client, &source, &options).await;
    check_queues(&client, &source, &options).await;
    assert_eq!(
        index_setting(&client, &options.urls, "refresh_interval").await,
        json!("2s")
    );
    assert_eq!(
        index_setting(&client, &options.queues, "refresh_interval").await,
        json!("1s")
    );
    assert_eq!(
        index_setting(&client, &options.urls, "number_of_replicas").await,
        json!("0")
    );
    cleanup(&client, &[&source.name, &options.urls, &options.queues]).await;
}

fn options_for_checkpoint_test(source: &Source, dir: &Path) -> MigrationOptions {
    let mut options = options(source, dir, KeyStyle::TopLevel);
    options.checkpoint = dir.join("foreign.json");
    options
}

// The program is built only with the `cli` feature (scripts/test turns it on).
#[cfg(feature = "cli")]
#[tokio::test]
async fn the_command_line_tool_migrates_reports_and_fails_loudly() {
    let client = support::client().await;
    let source = build_source(&client, KeyStyle::TopLevel).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let urls = support::unique_index("migration-cli-urls");
    let queues = support::unique_index("migration-cli-queues");
    let report_path = dir.path().join("report.json");
    let run = |extra: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_migrate-status-index"));
        command
            .current_dir(dir.path())
            .args(["--es-url", &support::base_url()])
            .args([
                "--source",
                &source.name,
                "--urls",
                &urls,
                "--queues",
                &queues,
            ])
            .args([
                "--replicas",
                "0",
                "--urls-shards",
                "2",
                "--batch-size",
                "100",
            ])
            .args(extra)
            .env("NO_COLOR", "1");
        command.output().expect("run migrate-status-index")
    };

    let dry = run(&["--dry-run", "--report-json", "report.json"]);
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report"))
            .expect("JSON report");
    assert_eq!(report["dry_run"], json!(true));
    assert_eq!(report["documents"], json!(source.docs.len()));
    assert!(!exists(&client, &urls).await);

    let real = run(&["--report-json", "report.json"]);
    let stderr = String::from_utf8_lossy(&real.stderr);
    assert!(real.status.success(), "{stderr}");
    assert!(stderr.contains("verification: OK"), "{stderr}");
    assert!(stderr.contains("docs/s"), "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report"))
            .expect("JSON report");
    for field in [
        "source",
        "urls",
        "queues",
        "documents",
        "queues_written",
        "seconds",
        "docs_per_second",
        "resumed_from",
        "dry_run",
    ] {
        assert!(report.get(field).is_some(), "{field} in {report}");
    }
    let verification = &report["verification"];
    assert_eq!(verification["ok"], json!(true));
    assert_eq!(verification["distinct_keys"], json!(HOSTS + 1));
    assert_eq!(verification["queue_docs"], json!(HOSTS + 1));
    assert_eq!(verification["invariant_violations"], json!([]));
    assert_eq!(
        verification["status_counts_source"],
        verification["status_counts_urls"]
    );
    assert!(
        !dir.path()
            .join(format!("{urls}.migration-checkpoint.json"))
            .exists()
    );

    let bad_flag = run(&["--partition-mode", "byPlanet"]);
    assert_eq!(bad_flag.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_flag.stderr).contains("byPlanet"));

    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_migrate-status-index"))
        .current_dir(dir.path())
        .args(["--es-url", &support::base_url()])
        .args([
            "--source",
            "migration-no-such-index",
            "--urls",
            "u-x",
            "--queues",
            "q-x",
        ])
        .output()
        .expect("run");
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("migration-no-such-index"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    cleanup(&client, &[&source.name, &urls, &queues]).await;
}
