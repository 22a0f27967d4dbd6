//! A StormCrawler user's project, unchanged: the OpenSearch archetype's `crawler-conf.yaml`,
//! `opensearch-conf.yaml`, `urlfilters.json`, `parsefilters.json`, `jsoupfilters.json` and its
//! `OS_IndexInit.sh` with `status.mapping` and `indexer.mapping` (tests/fixtures/stormcrawler/
//! archetype, README there) drive a squall crawl of the local site to completion on the real node.
//!
//! The script makes the `status` and `content` indices (and deletes them first, as it does for a
//! StormCrawler user): no other test uses those names.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use elasticsearch::Elasticsearch;
use elasticsearch::indices::IndicesGetSettingsParts;
use serde_json::Value;
use squall_testsite::{Expectation, ExpectedStatus, Scope, Site, SiteSpec};

use crate::support;
use support::binary::{crawl_binary, site_args};
use support::opensearch;

/// The archetype's project folder, copied so that the run leaves nothing in the source tree.
fn copy_project(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stormcrawler/archetype");
    copy_dir(&from, to);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the project folder");
    for entry in std::fs::read_dir(from).expect("read the fixture folder") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a fixture file");
        }
    }
}

/// Every document of `index`, by its `url` field.
async fn documents(client: &Elasticsearch, index: &str) -> BTreeMap<String, Value> {
    opensearch::all_hits(client, index)
        .await
        .into_iter()
        .map(|hit| {
            let source = hit["_source"].clone();
            let url = source["url"].as_str().unwrap_or_default().to_string();
            (url, source)
        })
        .collect()
}

fn status_name(status: ExpectedStatus) -> &'static str {
    match status {
        ExpectedStatus::Fetched => "FETCHED",
        ExpectedStatus::Redirection => "REDIRECTION",
        ExpectedStatus::FetchError => "FETCH_ERROR",
        ExpectedStatus::RobotsDenied => "ERROR",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_archetype_files_drive_a_crawl_to_completion_with_each_status_index_spout() {
    let _indices = opensearch::archetype_indices().await;
    let client = opensearch::client().await;
    let site = Site::start(SiteSpec::small()).await.expect("site");
    // The spout is the one choice the archetype's files leave to the topology (its crawler.flux
    // names AggregationSpout); each starts from indices the script makes afresh.
    for spout in ["aggregation", "collapsing", "hybrid"] {
        crawl_with(&client, &site, spout).await;
    }
}

/// Makes the indices with the archetype's script, crawls the site with the archetype's files and
/// `spout`, and checks the status index, the content index and the warning.
async fn crawl_with(client: &Elasticsearch, site: &Site, spout: &str) {
    let url = opensearch::base_url();
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("crawler");
    copy_project(&project);
    init_indices(&project, &url);
    let stderr = run_crawl(&project, &dir.path().join("fetch.jsonl"), &url, site, spout);
    check_warning(&stderr);
    let expected = site.expected_with(Scope::SourceHost);
    let statuses = documents(client, "status").await;
    check_statuses(&expected, &statuses, spout, &stderr);
    let content = documents(client, "content").await;
    check_content(&expected, &content, spout);
    // squall used the script's status index as it was: 10 shards, refreshed every 5 s.
    let settings: Value = client
        .indices()
        .get_settings(IndicesGetSettingsParts::Index(&["status"]))
        .send()
        .await
        .expect("settings")
        .json()
        .await
        .expect("settings answer");
    let index = &settings["status"]["settings"]["index"];
    assert_eq!(index["number_of_shards"], "10", "{settings}");
    assert_eq!(index["refresh_interval"], "5s", "{settings}");
}

/// Runs the archetype's `OS_IndexInit.sh`, which deletes and makes the `status` and `content`
/// indices and the metrics template from its own mapping files.
fn init_indices(project: &Path, url: &str) {
    let init = Command::new("bash")
        .arg("OS_IndexInit.sh")
        .arg(url)
        .current_dir(project)
        .output()
        .expect("run OS_IndexInit.sh");
    let said = String::from_utf8_lossy(&init.stdout);
    assert!(init.status.success(), "OS_IndexInit.sh failed: {said}");
    assert_eq!(
        said.matches("\"acknowledged\":true").count(),
        3,
        "the script did not make the status and content indices and the metrics template: {said}"
    );
}

/// The crawl binary in the project's folder with the archetype's files as they are; the command
/// line picks the stages (the frontier and the content index in OpenSearch, as the archetype's
/// crawler.flux does, and the spout), says where the node and the site are, and shortens the
/// politeness delay. Returns what it logged.
fn run_crawl(project: &Path, fetch_log: &Path, url: &str, site: &Site, spout: &str) -> String {
    let crawl = Command::new(crawl_binary())
        .current_dir(project)
        .args(["--config", "crawler-conf.yaml"])
        .args(["--config", "opensearch-conf.yaml"])
        .args(["--frontier", "opensearch", "--indexer", "opensearch"])
        .args(["--spout", spout, "--until-idle"])
        .arg("--fetch-log")
        .arg(fetch_log)
        .args(["--set", &format!("opensearch.status.addresses={url}")])
        .args(["--set", &format!("opensearch.indexer.addresses={url}")])
        .args(["--set", "fetcher.server.delay=0.1"])
        .args(site_args(site))
        .env("RUST_LOG", "info")
        .output()
        .expect("run the crawl");
    let stderr = String::from_utf8_lossy(&crawl.stderr).to_string();
    assert!(
        crawl.status.success(),
        "{spout}: the crawl failed: {stderr}"
    );
    stderr
}

/// One warning names the keys of the files that squall does not implement.
fn check_warning(stderr: &str) {
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not implemented by squall"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    for key in [
        "topology.workers",
        "topology.kryo.register",
        "http.protocol.implementation",
        "parser.mimetype.whitelist",
        "textextractor.include.pattern",
        "opensearch.status.bulkActions",
        "opensearch.metrics.sniff",
    ] {
        assert!(
            warnings[0].contains(key),
            "{key} missing from: {}",
            warnings[0]
        );
    }
    for implemented in [
        "indexer.md.mapping",
        "urlfilters.config.file",
        "fetcher.threads.number",
        "opensearch.metrics.index.name",
        "topology.metrics.consumer.register",
    ] {
        assert!(
            !warnings[0].contains(implemented),
            "{implemented} is implemented"
        );
    }
}

/// The crawl completed: every URL the archetype's filters keep has the status the site gives it,
/// and none is left DISCOVERED.
fn check_statuses(
    expected: &Expectation,
    statuses: &BTreeMap<String, Value>,
    spout: &str,
    stderr: &str,
) {
    let left: Vec<&String> = statuses
        .iter()
        .filter(|(_, d)| d["status"] == "DISCOVERED")
        .map(|(u, _)| u)
        .collect();
    assert!(
        left.is_empty(),
        "{spout}: still DISCOVERED: {left:?}\n{stderr}"
    );
    let mut problems = Vec::new();
    for (page, status) in expected.statuses() {
        let stored = statuses.get(page).and_then(|d| d["status"].as_str());
        if stored != Some(status_name(*status)) {
            problems.push(format!("{page}: {stored:?}, expected {status:?}"));
        }
    }
    assert!(problems.is_empty(), "{spout}: {problems:#?}");
}

/// The content index holds every HTML page fetched, with what the archetype maps into it, and
/// nothing else.
fn check_content(expected: &Expectation, content: &BTreeMap<String, Value>, spout: &str) {
    let pages: Vec<&String> = expected
        .statuses()
        .iter()
        .filter(|(u, s)| **s == ExpectedStatus::Fetched && !u.contains("/files/"))
        .map(|(u, _)| u)
        .collect();
    for page in &pages {
        let doc = content
            .get(page.as_str())
            .unwrap_or_else(|| panic!("{spout}: {page} is not in the content index"));
        for field in ["title", "content", "host", "domain"] {
            assert!(
                doc[field].as_str().is_some_and(|v| !v.is_empty())
                    || doc[field].as_array().is_some_and(|v| !v.is_empty()),
                "{spout}: {page}: no {field} in {doc}"
            );
        }
    }
    assert_eq!(
        content.len(),
        pages.len(),
        "{spout}: content holds other documents"
    );
}
