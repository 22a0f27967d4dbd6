//! The client against a real three-node cluster started by `scripts/opensearch` (its own ports and
//! home, so it runs beside the test node): with one replica per shard, the node holding most
//! primaries killed with SIGKILL, then another node paused with SIGSTOP past the client's timeout,
//! every request still succeeds through the other nodes and no acknowledged write is lost. Then, on
//! the same cluster: a crawl of the test site with each status-index spout (aggregation,
//! collapsing, hybrid) on an index with one replica, and a migration of a status index into the
//! queue frontier's two indices, interrupted, then resumed from its checkpoint while the node
//! holding most of the source's primaries is killed and started again; it ends verified.
//!
//! Set `SQUALL_CLUSTER_TESTS=0` to skip it (it starts three JVMs: about four minutes on 2 cores).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use squall_engine::client::Method;
use squall_engine::client::{ConnectionConfig, EsClient, RequestBody};
use squall_engine::migrate::{Checkpoint, MigrationOptions, migrate};
use squall_engine::status_index::schema::document_id;

use crate::support;
#[path = "../../tests/support/cluster.rs"]
mod cluster;

use cluster::Cluster;

/// First HTTP port of the test cluster (node I on +I-1; transport on +100).
const PORT: u16 = 9610;

/// Writes documents `from..to` with `refresh=wait_for`; panics if any fails.
async fn write(client: &EsClient, index: &str, from: u32, to: u32) {
    let mut lines = Vec::new();
    for i in from..to {
        lines.push(json!({ "index": { "_index": index, "_id": i.to_string() } }));
        lines.push(json!({ "n": i }));
    }
    let answer = support::bulk_with(client, index, "wait_for", lines).await;
    assert_eq!(answer["errors"], json!(false), "{answer}");
}

/// Ten rounds of 50 documents from `from` on, each written then counted: every acknowledged write
/// is found.
async fn write_and_count(client: &EsClient, index: &str, from: u32) {
    for round in 0..10 {
        write(client, index, from + round * 50, from + 50 + round * 50).await;
        assert_eq!(
            support::count(client, index).await,
            u64::from(from + 50 + round * 50)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_go_on_through_the_other_nodes_when_one_is_killed_or_paused() {
    if std::env::var("SQUALL_CLUSTER_TESTS").as_deref() == Ok("0") {
        eprintln!("skipped: SQUALL_CLUSTER_TESTS=0");
        return;
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cluster = Cluster::start(&workspace, "opensearch-cluster-test", PORT);
    let mut settings = ConnectionConfig::new(&cluster.urls()).expect("addresses");
    // A short timeout, and retries enough to outlast the cluster's fault detection (a paused node is
    // dropped from the cluster after about 30 s of failed checks, its primaries' replicas promoted).
    settings.timeout = Duration::from_secs(3);
    settings.max_retries = 20;
    let client = EsClient::new(settings.clone()).expect("client");
    // Creating the index may outlast the short timeout (a retried create would find it there).
    settings.timeout = Duration::from_secs(60);
    let setup = EsClient::new(settings).expect("client");
    let index = "failover";
    setup
        .request(
            Method::Put,
            &format!("/{index}"),
            &[("wait_for_active_shards", "all")],
            Some(RequestBody::Json(json!({ "settings": {
                "number_of_shards": 6, "number_of_replicas": 1 } }))),
        )
        .await
        .expect("index created");
    write(&client, index, 0, 500).await;

    let killed = cluster.node_with_most_primaries(1, index);
    eprintln!("killing node {killed} (most primaries)");
    cluster.node(killed, "kill");
    write_and_count(&client, index, 500).await;

    cluster.node(killed, "start");
    // Not the node just restarted, and not the elected manager: a paused manager is a longer fault
    // (the others elect another before any can drop it). (Once, when the nodes still set
    // `cluster.no_cluster_manager_block: all`, a manager paused right after another node's restart
    // left that node's fresh copies failed, "master marked shard as active, but shard has not been
    // created", and the index red until the pause ended.)
    let manager = cluster.cluster_manager(killed);
    let paused = (1..=Cluster::NODES)
        .find(|&n| n != killed && Some(n) != manager)
        .unwrap_or(killed % Cluster::NODES + 1);
    eprintln!("node {killed} back; pausing node {paused}");
    cluster.node(paused, "pause");
    // Longer than the client's timeout: requests sent to the paused node time out and are retried.
    write_and_count(&client, index, 1000).await;
    cluster.node(paused, "resume");
    // Until it learns that it was dropped from the cluster, the resumed node may answer from its
    // own stale copies (seen once: a count short of 1,500 right after SIGCONT). Counted once it has
    // rejoined and every copy recovered.
    setup
        .request(
            Method::Get,
            "/_cluster/health",
            &[
                ("wait_for_status", "green"),
                ("wait_for_nodes", "3"),
                ("timeout", "120s"),
            ],
            None,
        )
        .await
        .expect("the cluster is green again");
    assert_eq!(support::count(&client, index).await, 1500);

    for kind in [
        support::Kind::Aggregation,
        support::Kind::Collapsing,
        support::Kind::Hybrid,
    ] {
        eprintln!("crawling the site with the {kind:?} spout on the cluster");
        support::crawl::crawl_site(&setup, kind, 1).await;
    }
    migrate_through_a_node_restart(&cluster, &setup).await;
    drop(cluster);
}

/// Documents in the migration's source.
const SOURCE_DOCS: usize = 20_000;

/// A status index of [`SOURCE_DOCS`] URLs over 200 hosts (3 shards, one replica) is migrated: a
/// first run stops after 5 batches; the resumed run goes on while the node holding most of the
/// source's primaries is killed; a run that fails is run again, from the checkpoint, once the node
/// is back. The last run completes, resumed, with every document copied and its checks passed.
async fn migrate_through_a_node_restart(cluster: &Cluster, client: &EsClient) {
    let source = support::status_index_with(client, "cluster-migration-source", 3, 1).await;
    for chunk in 0..SOURCE_DOCS / 5000 {
        let mut lines = Vec::new();
        for j in chunk * 5000..(chunk + 1) * 5000 {
            let host = format!("host{}.test", j % 200);
            let url = format!("https://{host}/page/{j}");
            lines.push(json!({ "index": { "_index": source, "_id": document_id(&url) } }));
            lines.push(json!({ "url": url, "key": host, "status": "DISCOVERED",
                "nextFetchDate": "2026-01-01T00:00:00.000Z", "metadata": {} }));
        }
        let answer = client
            .request(
                Method::Post,
                "/_bulk",
                &[("refresh", "true")],
                Some(RequestBody::NdJson(lines)),
            )
            .await
            .expect("fill the source");
        assert_eq!(answer["errors"], json!(false));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut options = MigrationOptions::new(
        &source,
        &support::unique_index("cluster-migration-urls"),
        &support::unique_index("cluster-migration-queues"),
    );
    options.batch_size = 200;
    options.replicas = 1;
    options.checkpoint = dir.path().join("checkpoint.json");
    options.stop_after_batches = Some(5);
    let first = migrate(client, &options).await.expect("the first run");
    assert!(!first.completed && first.documents == 1000, "{first:?}");
    options.stop_after_batches = None;

    let killed = cluster.node_with_most_primaries(1, &source);
    let resumed = {
        let (client, options) = (client.clone(), options.clone());
        tokio::spawn(async move { migrate(&client, &options).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let done = Checkpoint::load(&options.checkpoint)
        .ok()
        .flatten()
        .map_or(0, |c| c.documents_done);
    eprintln!(
        "migration resumed; killing node {killed} (most primaries of the source) with {done} of \
         {SOURCE_DOCS} documents copied"
    );
    assert!(
        done < SOURCE_DOCS as u64,
        "the migration was over before the kill"
    );
    tokio::task::block_in_place(|| cluster.node(killed, "kill"));
    let mut outcome = resumed.await.expect("the migration task");
    tokio::task::block_in_place(|| cluster.node(killed, "start"));
    let mut runs = 2;
    while let Err(error) = &outcome {
        eprintln!("migration run {runs} failed ({error}); running it again from its checkpoint");
        assert!(runs < 5, "the migration failed {runs} times: {error}");
        runs += 1;
        outcome = migrate(client, &options).await;
    }
    let report = outcome.expect("a completed run");
    eprintln!(
        "migration completed in {runs} runs: {} documents, resumed from {:?}",
        report.documents, report.resumed_from
    );
    assert!(report.completed, "{report:?}");
    assert!(
        report.resumed_from.is_some(),
        "the last run resumed from the checkpoint"
    );
    assert_eq!(report.documents, SOURCE_DOCS as u64);
    assert!(
        report.verification.ok,
        "{:?}",
        report.verification.problems()
    );
    for index in [&source, &options.urls, &options.queues] {
        support::delete_index(client, index).await;
    }
}
