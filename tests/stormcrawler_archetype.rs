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
use elasticsearch::indices::{IndicesGetMappingParts, IndicesRefreshParts};
use serde_json::{Value, json};
use squall_testsite::{ExpectedStatus, Scope, Site, SiteSpec};

mod support;

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

/// Every document of `index`: its `url` field (or `_id`) to its source.
async fn documents(client: &Elasticsearch, index: &str) -> BTreeMap<String, Value> {
    client
        .indices()
        .refresh(IndicesRefreshParts::Index(&[index]))
        .send()
        .await
        .expect("refresh");
    let answer: Value = client
        .search(elasticsearch::SearchParts::Index(&[index]))
        .body(json!({ "size": 10000, "query": { "match_all": {} } }))
        .send()
        .await
        .expect("search")
        .json()
        .await
        .expect("search answer");
    let hits = answer["hits"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    hits.into_iter()
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
async fn the_archetype_files_drive_a_crawl_to_completion() {
    let client = opensearch::client().await;
    let url = opensearch::base_url();
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("crawler");
    copy_project(&project);

    // The archetype's own script makes the indices, from its own mapping files.
    let init = Command::new("bash")
        .arg("OS_IndexInit.sh")
        .arg(&url)
        .current_dir(&project)
        .output()
        .expect("run OS_IndexInit.sh");
    let said = String::from_utf8_lossy(&init.stdout);
    assert!(init.status.success(), "OS_IndexInit.sh failed: {said}");
    assert_eq!(
        said.matches("\"acknowledged\":true").count(),
        3,
        "the script did not make the status and content indices and the metrics template: {said}"
    );

    // squall crawls with the files as they are; the command line picks the stages (the frontier and
    // the content index in OpenSearch, as the archetype's crawler.flux does), says where the node and
    // the site are, and shortens the politeness delay.
    let fetch_log = dir.path().join("fetch.jsonl");
    let crawl = Command::new(crawl_binary())
        .current_dir(&project)
        .args([
            "--config",
            "crawler-conf.yaml",
            "--config",
            "opensearch-conf.yaml",
        ])
        .args([
            "--frontier",
            "opensearch",
            "--indexer",
            "opensearch",
            "--until-idle",
        ])
        .arg("--fetch-log")
        .arg(&fetch_log)
        .args(["--set", &format!("opensearch.status.addresses={url}")])
        .args(["--set", &format!("opensearch.indexer.addresses={url}")])
        .args(["--set", "fetcher.server.delay=0.1"])
        .args(site_args(&site))
        .env("RUST_LOG", "info")
        .output()
        .expect("run the crawl");
    let stderr = String::from_utf8_lossy(&crawl.stderr);
    assert!(crawl.status.success(), "the crawl failed: {stderr}");

    // One warning names the keys squall does not implement.
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
        "opensearch.status.bulkActions",
        "opensearch.metrics.index.name",
    ] {
        assert!(
            warnings[0].contains(key),
            "{key} missing from: {}",
            warnings[0]
        );
    }

    // The crawl completed: every URL the archetype's filters keep has the status the site gives it.
    let statuses = documents(&client, "status").await;
    let expected = site.expected_with(Scope::SourceHost);
    let mut problems = Vec::new();
    for (page, status) in expected.statuses() {
        let stored = statuses.get(page).and_then(|d| d["status"].as_str());
        if stored != Some(status_name(*status)) {
            problems.push(format!("{page}: {stored:?}, expected {status:?}"));
        }
    }
    let left: Vec<&String> = statuses
        .iter()
        .filter(|(_, d)| d["status"] == "DISCOVERED")
        .map(|(u, _)| u)
        .collect();
    assert!(left.is_empty(), "still DISCOVERED: {left:?}\n{stderr}");
    assert!(
        problems.is_empty(),
        "{} problems: {problems:#?}",
        problems.len()
    );

    // The content index holds every HTML page fetched, with what the archetype maps into it.
    let content = documents(&client, "content").await;
    let pages: Vec<&String> = expected
        .statuses()
        .iter()
        .filter(|(u, s)| **s == ExpectedStatus::Fetched && !u.contains("/files/"))
        .map(|(u, _)| u)
        .collect();
    for page in &pages {
        let doc = content
            .get(page.as_str())
            .unwrap_or_else(|| panic!("{page} is not in the content index"));
        for field in ["title", "content", "host", "domain"] {
            assert!(
                doc[field].as_str().is_some_and(|v| !v.is_empty())
                    || doc[field].as_array().is_some_and(|v| !v.is_empty()),
                "{page}: no {field} in {doc}"
            );
        }
    }
    assert_eq!(content.len(), pages.len(), "content holds other documents");

    // squall used the script's indices as they were.
    let mapping: Value = client
        .indices()
        .get_mapping(IndicesGetMappingParts::Index(&["content"]))
        .send()
        .await
        .expect("mapping")
        .json()
        .await
        .expect("mapping answer");
    assert_eq!(
        mapping["content"]["mappings"]["properties"]["url"]["type"],
        "keyword"
    );
}
