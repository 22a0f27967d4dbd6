//! A new frontier kind is its module plus one registration: `journal`, defined here (the embedded
//! frontier under another name, with its own `journal.*` keys and a Flux class), registered in one
//! call, crawls the loopback test site chosen by configuration alone (`frontier.kind: journal`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use squall::config::flux::{FluxClass, FluxPart, FluxTopology, Substitutions};
use squall::config::{ConfigBuilder, CrawlConfig, FrontierKind, Frontiers, OpenFailure};
use squall::frontier::{EmbeddedFrontier, Frontier, QueryLimits, UrlQuery};
use squall::topology::{CrawlerBuilder, StopReason};
use squall_testsite::SiteSpec;

use crate::support;
use support::crawler;

/// The `journal.*` keys.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct JournalKeys {
    /// `journal.dir`: where the frontier lives.
    dir: String,
    /// `journal.title`: a name for people, shown in the frontier's description.
    title: String,
}

/// The kind: the embedded frontier in `journal.dir`; it notes the title each opening read.
#[derive(Default)]
struct Journal {
    titles: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl FrontierKind for Journal {
    fn name(&self) -> &'static str {
        "journal"
    }

    fn key_prefixes(&self) -> Vec<&'static str> {
        vec!["journal."]
    }

    fn flux_classes(&self) -> Vec<FluxClass> {
        vec![FluxClass::new("journal.JournalSpout", FluxPart::Spout).set("journal.title", "flux")]
    }

    async fn open(&self, config: &CrawlConfig) -> Result<Frontier, OpenFailure> {
        let keys: JournalKeys = config.extension(&["journal."])?;
        let frontier = EmbeddedFrontier::open(keys.dir.as_ref())?;
        if let Ok(mut titles) = self.titles.lock() {
            titles.push(keys.title.clone());
        }
        Ok(Frontier {
            spout: Box::new(frontier.spout(QueryLimits::default())),
            store: Arc::new(frontier.clone()),
            catalog: Some(Arc::new(frontier)),
            description: format!("journal `{}` in {}", keys.title, keys.dir),
            leases: None,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_defined_here_and_registered_in_one_call_crawls_the_site() {
    let journal = Journal::default();
    let titles = Arc::clone(&journal.titles);
    let mut frontiers = Frontiers::new();
    frontiers.register(journal);

    let site = crawler::start_site(3, 4).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut builder = ConfigBuilder::new().frontiers(&frontiers);
    for setting in [
        "http.agent.name=squall-test",
        "fetcher.server.delay=0",
        "spout.min.delay.queries=50",
        "frontier.kind=journal",
        "journal.title=loopback",
        &SiteSpec::exclude_outside_hosts(),
    ] {
        builder = builder.set(setting).expect("key");
    }
    let dir_text = dir.path().display().to_string();
    let config = builder
        .set_text("journal.dir", &dir_text)
        .and_then(ConfigBuilder::build)
        .expect("the kind's keys are kept for it");

    let frontier = frontiers.open(&config).await.expect("the journal opens");
    assert_eq!(
        frontier.description,
        format!("journal `loopback` in {dir_text}")
    );
    assert_eq!(
        *titles.lock().expect("titles"),
        ["loopback"],
        "its key reached it"
    );
    let catalog = frontier.catalog.clone().expect("a catalog");
    let crawler = CrawlerBuilder::new(config)
        .spout(frontier.spout)
        .status_store(frontier.store);
    let crawler = crawler::resolve_site(crawler, &site)
        .build()
        .expect("crawler");
    let seeds = site.seeds();
    crawler.inject(seeds.iter().map(String::as_str)).await;
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(120))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    assert!(summary.pages > 0, "{summary}");
    assert!(!site.requests().is_empty(), "the site was fetched");
    let stored = catalog.count(&UrlQuery::default()).await.expect("count");
    assert!(stored >= summary.pages, "{stored} URLs for {summary}");
    site.shutdown().await;
}

#[test]
fn the_registry_keeps_its_kinds_keys_maps_their_classes_and_names_the_kinds() {
    let mut frontiers = Frontiers::new();
    frontiers.register(Journal::default());
    let registered = || {
        ConfigBuilder::new()
            .frontiers(&frontiers)
            .set("http.agent.name=test")
            .expect("key")
    };

    let typo = registered().set("jornal.title=x").expect("key").build();
    let message = typo.expect_err("a prefix nobody registered").to_string();
    assert!(
        message.contains("unknown config key `jornal.title`"),
        "{message}"
    );

    let cloud = registered()
        .set("frontier.kind=cloud")
        .expect("key")
        .build();
    let message = cloud.expect_err("a kind nobody registered").to_string();
    assert!(message.contains("`cloud`"), "{message}");
    assert!(message.contains("embedded, journal"), "{message}");

    let dir = tempfile::tempdir().expect("temp dir");
    let flux = dir.path().join("crawler.flux");
    std::fs::write(
        &flux,
        "name: journal\nspouts:\n  - id: spout\n    \
         className: org.apache.stormcrawler.journal.JournalSpout\n    parallelism: 2\n",
    )
    .expect("write");
    let topology =
        FluxTopology::load(&flux, &Substitutions::default(), &frontiers).expect("the class maps");
    assert!(topology.crawls);
    let config = topology
        .apply(registered())
        .and_then(ConfigBuilder::build)
        .expect("config");
    assert_eq!(config.frontier.kind, "journal");
    assert_eq!(config.spout.parallelism, 2);
    let keys: JournalKeys = config.extension(&["journal."]).expect("keys");
    assert_eq!(keys.title, "flux");

    let refused = FluxTopology::load(&flux, &Substitutions::default(), &Frontiers::new());
    let message = refused.expect_err("unknown without the kind").to_string();
    assert!(message.contains("journal.JournalSpout"), "{message}");
}
