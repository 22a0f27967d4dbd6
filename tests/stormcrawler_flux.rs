//! A StormCrawler 3.4.0 user's project with its flux files, unchanged
//! (tests/fixtures/stormcrawler/archetype-3.4, README there): `injection.flux` injects the seeds of
//! `seeds.txt` into the status index that `OS_IndexInit.sh` made, and `crawler.flux` crawls the
//! local site to completion from it, on the real node, with the crawl binary's `--flux`; the
//! placeholders of `crawler-conf.yaml` are filled by `--flux-filter dev.properties`, as Flux's
//! `--filter` does. And a flux naming a class squall does not know is refused with its name.
//!
//! The script makes the `status` and `content` indices (and deletes them first): no other test of
//! this binary uses those names (tests/stormcrawler_archetype.rs, another binary, runs apart).

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use squall::config::flux::{FluxTopology, Substitutions};
use squall::config::{ConfigBuilder, Frontiers};
use squall_testsite::{ExpectedStatus, Scope, Site, SiteSpec};

use crate::support;
use support::binary::{crawl_binary, resolve_args};
use support::opensearch;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stormcrawler/archetype-3.4")
}

/// The frontier kinds of the crawl binary, whose classes a flux may name.
fn frontiers() -> Frontiers {
    let mut frontiers = Frontiers::new();
    squall_engine::register(&mut frontiers);
    squall_urlfrontier::register(&mut frontiers);
    frontiers
}

/// The fixture's project, copied so that the run leaves nothing in the source tree.
fn copy_project(to: &Path) {
    let status = Command::new("cp")
        .arg("-r")
        .arg(fixture())
        .arg(to)
        .status()
        .expect("cp");
    assert!(status.success(), "copy the project");
}

#[test]
fn the_archetype_flux_maps_to_ten_aggregation_spouts_on_opensearch() {
    let filter =
        Substitutions::from_properties_file(&fixture().join("dev.properties")).expect("properties");
    let flux = FluxTopology::load(&fixture().join("crawler.flux"), &filter, &frontiers())
        .expect("crawler.flux");
    assert!(flux.crawls);
    let config = flux
        .apply(ConfigBuilder::new())
        .and_then(ConfigBuilder::build)
        .expect("the flux's configuration builds");
    assert_eq!(config.spout.parallelism, 10, "the spout's parallelism");
    assert_eq!(
        config.spout.max_pending, 100,
        "crawler-conf.yaml's pending, per instance"
    );
    assert_eq!(
        config.agent.name, "squall-flux-test",
        "filled by dev.properties"
    );
    assert_eq!(config.indexer.kind, squall::config::IndexerKind::Opensearch);
    let settings: Vec<String> = flux
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert!(
        settings.contains(&"es.status.spout=aggregation".to_string()),
        "{settings:?}"
    );
    let notes = flux.notes.join("\n");
    for id in ["tika", "partitioner", "deleter", "status_metrics"] {
        assert!(
            notes.contains(&format!("`{id}`")),
            "no note for {id}: {notes}"
        );
    }

    let injection = FluxTopology::load(&fixture().join("injection.flux"), &filter, &frontiers())
        .expect("injection.flux");
    assert!(!injection.crawls, "injection.flux only injects");
    let sources = &injection.seed_sources;
    assert_eq!(sources.len(), 1, "{sources:?}");
    assert_eq!(
        (sources[0].dir.to_str(), sources[0].pattern.as_str()),
        (Some("."), "seeds.txt")
    );
}

#[test]
fn a_flux_naming_an_unknown_class_is_refused_with_the_class() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("crawler");
    copy_project(&project);
    let text = std::fs::read_to_string(fixture().join("crawler.flux")).expect("read");
    let changed = text.replace(
        "org.apache.stormcrawler.bolt.JSoupParserBolt",
        "com.example.crawler.MyParserBolt",
    );
    let flux = project.join("crawler.flux");
    std::fs::write(&flux, changed).expect("write");
    let filter =
        Substitutions::from_properties_file(&project.join("dev.properties")).expect("properties");
    let error = FluxTopology::load(&flux, &filter, &frontiers()).expect_err("refused");
    let message = error.to_string();
    assert!(
        message.contains("com.example.crawler.MyParserBolt"),
        "{message}"
    );
    assert!(message.contains("bolt `parse`"), "{message}");
    assert!(message.contains("line 32"), "{message}");
}

/// The crawl binary in the project's folder with `args`, the node's address set over the
/// files' `localhost`.
fn run(project: &Path, url: &str, site: &Site, args: &[&str]) -> Output {
    let output = Command::new(crawl_binary())
        .current_dir(project)
        .args(args)
        .args(["--flux-filter", "dev.properties"])
        .args(["--set", &format!("opensearch.status.addresses={url}")])
        .args(["--set", &format!("opensearch.indexer.addresses={url}")])
        .args(["--set", "fetcher.server.delay=0.1"])
        .args(resolve_args(site))
        .env("RUST_LOG", "info")
        .output()
        .expect("run the crawl binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injection_flux_then_crawler_flux_crawl_the_site_to_completion() {
    let _indices = opensearch::archetype_indices().await;
    let client = opensearch::client().await;
    let url = opensearch::base_url();
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("crawler");
    copy_project(&project);
    let init = Command::new("bash")
        .arg("OS_IndexInit.sh")
        .arg(&url)
        .current_dir(&project)
        .output()
        .expect("OS_IndexInit.sh");
    assert!(init.status.success(), "OS_IndexInit.sh failed");
    std::fs::write(project.join("seeds.txt"), site.seeds().join("\n") + "\n").expect("seeds");

    let injected = run(&project, &url, &site, &["--flux", "injection.flux"]);
    let said = String::from_utf8_lossy(&injected.stderr);
    assert!(said.contains("nothing to crawl"), "{said}");
    // The crawl starts at once, as a user's would: the seeds need not show in the status index
    // yet (it refreshes every 5 s), and the crawl must find them anyway.
    let crawled = run(
        &project,
        &url,
        &site,
        &["--flux", "crawler.flux", "--until-idle"],
    );
    let stderr = String::from_utf8_lossy(&crawled.stderr).to_string();
    assert!(stderr.contains("× 10"), "ten spout instances: {stderr}");
    let expected = site.expected_with(Scope::SourceHost);
    let statuses: Vec<Value> = opensearch::all_hits(&client, "status").await;
    let status_of = |page: &str| {
        statuses
            .iter()
            .find(|hit| hit["_source"]["url"] == page)
            .and_then(|hit| hit["_source"]["status"].as_str().map(str::to_string))
    };
    let mut problems = Vec::new();
    for (page, status) in expected.statuses() {
        let want = match status {
            ExpectedStatus::Fetched => "FETCHED",
            ExpectedStatus::Redirection => "REDIRECTION",
            ExpectedStatus::FetchError => "FETCH_ERROR",
            ExpectedStatus::RobotsDenied => "ERROR",
        };
        if status_of(page).as_deref() != Some(want) {
            problems.push(format!("{page}: {:?}, expected {want}", status_of(page)));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}\n{stderr}");
    site.shutdown().await;
}
