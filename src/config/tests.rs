use std::time::Duration;

use serde_norway::Value;

use super::*;
use crate::bounded_file::testing::{assert_over_the_bound, padded_file, write_padded};

/// A config with an agent name and the given extra YAML.
fn named(extra: &str) -> Result<CrawlConfig, ConfigError> {
    CrawlConfig::from_yaml_str(&format!("http.agent.name: test\n{extra}"))
}

/// The defaults, with an agent name.
fn defaults_named(name: &str, version: Option<String>) -> CrawlConfig {
    let mut agent = crate::protocol::AgentSettings {
        name: name.to_string(),
        ..Default::default()
    };
    if let Some(version) = version {
        agent.version = version;
    }
    let mut config = CrawlConfig {
        agent,
        http: Default::default(),
        robots: Default::default(),
        fetcher: Default::default(),
        protocols: Default::default(),
        filters: Default::default(),
        parser: Default::default(),
        indexer: Default::default(),
        schedule: Default::default(),
        status: Default::default(),
        spout: Default::default(),
        topology: Default::default(),
        frontier: Default::default(),
        extensions: Default::default(),
        ignored_keys: Vec::new(),
        config_dirs: Vec::new(),
        warc: Default::default(),
    };
    config.fetcher.stop_grace = config.topology.shutdown_timeout / 2;
    config.validate().expect("the defaults are valid");
    config
}

#[test]
fn the_agent_name_is_required() {
    let err = ConfigBuilder::new().build().expect_err("no agent name");
    assert!(err.to_string().contains("http.agent.name"), "{err}");
    assert!(CrawlConfig::from_yaml_str("http.agent.name: ''\n").is_err());
}

#[test]
fn defaults_are_valid_and_stormcrawler_like() {
    let config = named("").expect("defaults");
    assert_eq!(config, defaults_named("test", None));
    assert_eq!(config.fetcher.server_delay, Duration::from_secs(1));
    assert_eq!(config.fetcher.threads_per_queue, 1);
    assert_eq!(
        config.fetcher.partition,
        crate::model::PartitionMode::ByHost
    );
    assert_eq!(config.schedule.max_fetch_errors, 3);
    assert_eq!(
        config.schedule.default,
        Some(Duration::from_secs(1440 * 60))
    );
    assert_eq!(
        config.schedule.error, None,
        "fetchInterval.error is -1: never"
    );
    assert_eq!(config.filters.max_depth, None, "max.depth is -1: no limit");
    assert_eq!(config.frontier.kind, crate::frontier::EMBEDDED);
}

#[test]
fn sentinels_and_units_become_options_and_durations() {
    let config = named(
        "max.depth: 3\nhttp.content.limit: -1\nspout.min.delay.queries: 250\n\
         fetchInterval.default: -1\nfetcher.max.fetches.per.second: 0\n",
    )
    .expect("valid");
    assert_eq!(config.filters.max_depth, Some(3));
    assert_eq!(config.http.content_limit, None);
    assert_eq!(config.spout.min_delay_queries, Duration::from_millis(250));
    assert_eq!(config.schedule.default, None);
    assert_eq!(config.fetcher.max_fetches_per_second, None);
}

#[test]
fn unknown_key_is_named_with_a_suggestion() {
    let err = named("fetcher.server.dealy: 2\n").expect_err("typo");
    let message = err.to_string();
    assert!(message.contains("`fetcher.server.dealy`"), "{message}");
    assert!(
        message.contains("did you mean `fetcher.server.delay`"),
        "{message}"
    );
}

#[test]
fn mistyped_value_names_the_key() {
    let err = named("fetcher.threads.per.queue: many\n").expect_err("type");
    assert!(
        err.to_string().contains("fetcher.threads.per.queue"),
        "{err}"
    );
    let err = named("partition.url.mode: byPlanet\n").expect_err("enum");
    assert!(err.to_string().contains("partition.url.mode"), "{err}");
}

#[test]
fn overrides_win_and_custom_intervals_are_collected() {
    let config = ConfigBuilder::new()
        .yaml_str(
            "config:\n  http.agent.name: t\n  fetcher.server.delay: 3\n  fetchInterval.isFeed=true: 10\n",
        )
        .expect("yaml")
        .set("fetcher.server.delay=0.5")
        .expect("set")
        .set("urlfilter.exclude=[\"\\\\.pdf$\"]")
        .expect("set list")
        .set("fetchInterval.FETCH_ERROR.isFeed=true=60")
        .expect("set custom")
        .build()
        .expect("build");
    assert_eq!(config.fetcher.server_delay, Duration::from_millis(500));
    assert_eq!(config.filters.exclude, ["\\.pdf$"]);
    assert_eq!(
        config.schedule.custom,
        [
            (
                "fetchInterval.isFeed=true".to_string(),
                Some(Duration::from_secs(600))
            ),
            (
                "fetchInterval.FETCH_ERROR.isFeed=true".to_string(),
                Some(Duration::from_secs(3600))
            )
        ]
    );
}

#[test]
fn nonsense_values_are_refused() {
    assert!(named("fetcher.server.delay: -1\n").is_err());
    assert!(named("fetcher.threads.per.queue: 0\n").is_err());
    let registered = ConfigBuilder::new().frontiers(&Frontiers::new());
    let cloud = registered.yaml_str("http.agent.name: test\nfrontier.kind: cloud\n");
    assert!(cloud.and_then(ConfigBuilder::build).is_err());
    assert!(ConfigBuilder::new().set("no-equals-sign").is_err());
}

#[test]
fn a_urlfrontier_server_is_a_frontier_kind_with_its_own_keys() {
    let config = named("frontier.kind: urlfrontier\nurlfrontier.address: frontier:7071\n")
        .expect("the kind, and keys kept for squall-urlfrontier");
    assert_eq!(config.frontier.kind, "urlfrontier");
}

/// An extension's keys, as a crate outside this one would declare them.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct IndexKeys {
    #[serde(rename = "status.index.name")]
    index: String,
    #[serde(rename = "status.max.buckets")]
    max_buckets: u32,
}

#[test]
fn extension_keys_are_kept_for_their_crate_and_checked_by_it() {
    let config = named("es.status.index.name: pages\nopensearch.status.max.buckets: 7\n")
        .expect("extension keys are not unknown to the core");
    let keys: IndexKeys = config.extension(&["es.", "opensearch."]).expect("read");
    assert_eq!(
        keys,
        IndexKeys {
            index: "pages".to_string(),
            max_buckets: 7
        }
    );
    let typo = named("es.status.index.nam: pages\n").expect("kept");
    let err = typo
        .extension::<IndexKeys>(&["es.", "opensearch."])
        .expect_err("typo");
    assert!(
        err.to_string()
            .contains("did you mean `es.status.index.name`"),
        "{err}"
    );
    let bad = named("es.status.max.buckets: many\n").expect("kept");
    let err = bad.extension::<IndexKeys>(&["es."]).expect_err("bad value");
    assert!(err.to_string().contains("es.status.max.buckets"), "{err}");
}

#[test]
fn the_shipped_example_config_lists_every_key_with_its_default() {
    let text = include_str!("../../examples/crawler-conf.yaml");
    let document: Value = serde_norway::from_str(text).expect("example config is YAML");
    let Value::Mapping(mapping) = document else {
        panic!("example config is not a mapping");
    };
    let mut listed: Vec<String> = mapping
        .keys()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    listed.sort();
    let mut known = known_keys();
    known.sort();
    assert_eq!(
        listed, known,
        "examples/crawler-conf.yaml and the settings types' keys differ"
    );
    // The agent name is the user's to give: the example leaves it empty.
    assert_eq!(mapping.get("http.agent.name"), Some(&Value::from("")));
    let parsed = ConfigBuilder::new()
        .yaml_str(text)
        .and_then(|b| b.set("http.agent.name=example"))
        .and_then(ConfigBuilder::build)
        .expect("example config parses");
    // The version is the crate's own; the file cannot know it in advance.
    let defaults = defaults_named("example", Some(parsed.agent.version.clone()));
    assert_eq!(
        parsed, defaults,
        "a value in examples/crawler-conf.yaml is not the default"
    );
}

/// Each core key has one default: the value its stage runs with when the key is absent (its
/// settings type's `Default`, written through serde as a file writes it) is the value
/// examples/crawler-conf.yaml documents for it, and the file documents every key.
#[test]
fn each_core_key_has_one_default_the_example_config_documents() {
    let text = include_str!("../../examples/crawler-conf.yaml");
    let mut defaults = builder::key_defaults();
    assert_eq!(
        defaults.len(),
        known_keys().len(),
        "every key has a documented default"
    );
    // The agent name is the user's to give (the file leaves it empty, as its default is).
    // The version is the crate's own: the file names the version it was written for.
    defaults.retain(|(key, _)| key != "http.agent.version");
    let wrong = crate::settings::undocumented_defaults(&defaults, text, "");
    assert!(
        wrong.is_empty(),
        "examples/crawler-conf.yaml and the defaults the stages run with differ:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn text_set_from_a_command_line_stays_text() {
    let config = ConfigBuilder::new()
        .set("http.agent.name=test")
        .and_then(|b| b.set_text("frontier.path", "2024"))
        .and_then(|b| b.set_text("es.queues.owner", "node #1"))
        .and_then(ConfigBuilder::build)
        .expect("text values");
    assert_eq!(config.frontier.path, std::path::PathBuf::from("2024"));
    let read_as_yaml = ConfigBuilder::new()
        .set("http.agent.name=test")
        .and_then(|b| b.set("frontier.path=2024"))
        .and_then(ConfigBuilder::build);
    assert!(read_as_yaml.is_err(), "2024 read as YAML is a number");
}

#[test]
fn sub_minute_intervals_count_as_whole_minutes() {
    let mut config = named("").expect("defaults");
    config.schedule.default = Some(Duration::from_secs(30));
    config.schedule.fetch_error = Some(Duration::from_secs(120));
    let scheduler = config.scheduler().expect("valid");
    let metadata = crate::model::Metadata::new();
    assert_eq!(
        scheduler.interval_mins(crate::model::Status::Fetched, &metadata),
        1
    );
    assert_eq!(
        scheduler.interval_mins(crate::model::Status::FetchError, &metadata),
        2
    );
}

#[test]
fn parse_filter_keys_take_one_expression_or_a_list() {
    let config = named(
        "parsefilter.css:\n  title: h1\n  next: ['a@href', 'link@href']\n\
         parsefilter.xpath: {canonical: \"//link[@rel='canonical']/@href\"}\n",
    )
    .expect("valid");
    let css = &config.parser.extract_css;
    assert_eq!(css.get("title"), Some(&vec!["h1".to_string()]));
    assert_eq!(
        css.get("next"),
        Some(&vec!["a@href".to_string(), "link@href".to_string()])
    );
    let xpath = &config.parser.extract_xpath;
    assert_eq!(
        xpath.get("canonical"),
        Some(&vec!["//link[@rel='canonical']/@href".to_string()])
    );
    let err = named("parsefilter.css: {title: {a: b}}\n").expect_err("not a string");
    assert!(err.to_string().contains("`parsefilter.css.title`"), "{err}");
    assert!(err.to_string().contains("expected a string"), "{err}");
    let err = named("parsefilter.csss: {title: h1}\n").expect_err("typo");
    assert!(
        err.to_string().contains("did you mean `parsefilter.css`"),
        "{err}"
    );
}

#[test]
fn stormcrawler_archetype_files_load_as_they_are() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/stormcrawler/archetype"
    );
    let config = ConfigBuilder::new()
        .yaml_file(std::path::Path::new(&format!("{dir}/crawler-conf.yaml")))
        .and_then(|b| b.yaml_file(std::path::Path::new(&format!("{dir}/opensearch-conf.yaml"))))
        .and_then(ConfigBuilder::build)
        .expect("StormCrawler's archetype files load");
    // What the files set and squall implements applies...
    assert_eq!(config.agent.name, "squall-archetype-test");
    assert_eq!(config.spout.max_pending, 100);
    assert_eq!(config.fetcher.threads_number, 50);
    assert_eq!(config.http.content_limit, Some(65536));
    assert_eq!(
        config.spout.reset_fetch_date_after,
        Some(std::time::Duration::from_secs(120))
    );
    assert!(
        config
            .agent
            .user_agent()
            .starts_with("squall-archetype-test/1.0 (the StormCrawler archetype")
    );
    // ...and what squall does not implement is named, Storm's settings among them.
    for key in [
        "topology.workers",
        "topology.kryo.register",
        "http.protocol.implementation",
        "textextractor.include.pattern",
        "opensearch.status.bulkActions",
        "opensearch.metrics.sniff",
    ] {
        assert!(
            config.ignored_keys.iter().any(|k| k == key),
            "{key} not reported: {:?}",
            config.ignored_keys
        );
    }
    for key in [
        "topology.max.spout.pending",
        "fetcher.threads.number",
        "opensearch.metrics.index.name",
        "topology.metrics.consumer.register",
    ] {
        assert!(!config.ignored_keys.iter().any(|k| k == key), "{key}");
    }
}

#[test]
fn a_key_nobody_knows_is_still_an_error_with_a_suggestion() {
    let err = ConfigBuilder::new()
        .yaml_str("config:\n  http.agent.name: x\n  fetcher.threads.numbr: 3\n")
        .and_then(ConfigBuilder::build)
        .expect_err("typo");
    assert!(
        err.to_string()
            .contains("did you mean `fetcher.threads.number`"),
        "{err}"
    );
}

#[test]
fn the_fetcher_reads_its_own_keys_and_a_bad_one_is_named() {
    let config = CrawlConfig::from_yaml_str(
        "http.agent.name: t\nfetcher.server.delay: 2\nfetcher.max.urls.in.queues: -1\n\
         fetcher.max.fetches.per.second: 0\ntopology.shutdown.timeout: 30\n",
    )
    .expect("valid keys");
    assert_eq!(config.fetcher.server_delay, Duration::from_secs(2));
    assert_eq!(config.fetcher.max_urls_in_queues, usize::MAX);
    assert_eq!(config.fetcher.max_fetches_per_second, None);
    assert_eq!(config.fetcher.stop_grace, Duration::from_secs(15));
    for bad in [
        "fetcher.server.delay: -1",
        "fetcher.max.crawl.delay: .nan",
        "fetcher.threads.number: many",
    ] {
        let err =
            CrawlConfig::from_yaml_str(&format!("http.agent.name: t\n{bad}\n")).expect_err(bad);
        let key = bad.split(':').next().unwrap_or_default();
        assert!(
            matches!(&err, ConfigError::InvalidValue { key: named, .. } if named == key),
            "{bad}: {err}"
        );
    }
    let typo = CrawlConfig::from_yaml_str("http.agent.name: t\nfetcher.server.dealy: 2\n")
        .expect_err("typo");
    assert!(
        typo.to_string()
            .contains("did you mean `fetcher.server.delay`"),
        "{typo}"
    );
}

/// A config file over [`crate::bounded_file::CONFIG_FILE`]'s bound (a comment a byte too long) is
/// refused by name; one at the bound is read.
#[test]
fn a_config_file_over_its_bound_is_refused_by_name() {
    let limit = crate::bounded_file::CONFIG_FILE.limit;
    let head = "http.agent.name: t\n#";
    let (_dir, path) = padded_file("huge.yaml", head, "\n", limit);
    let config = ConfigBuilder::new().yaml_file(&path).expect("at the bound");
    assert_eq!(config.build().expect("valid").agent.name, "t");
    write_padded(&path, head, "\n", limit + 1);
    let refused = ConfigBuilder::new().yaml_file(&path).expect_err("over");
    assert_over_the_bound(&refused, &path, "16777216 bytes for a YAML config file");
}

#[test]
fn the_pace_keys_are_read_with_stormcrawlers_meaning_and_checked_by_name() {
    let config = named(
        "fetcher.pace.policy: adaptive\nfetcher.pace.floor: 0.25\n\
         urlfrontier.backoff.status.codes: 429\nurlfrontier.backoff.base.secs: 30\n\
         urlfrontier.max.retry.after: -1\n",
    )
    .expect("pace keys");
    let pace = &config.fetcher.pace;
    assert_eq!(pace.policy, crate::fetch::PaceKind::Adaptive);
    assert_eq!(pace.floor, Some(Duration::from_millis(250)));
    assert_eq!(config.fetcher.pace_floor(), Duration::from_millis(250));
    assert_eq!(pace.status_codes, [429], "one code or a list");
    assert_eq!(pace.backoff_base, Duration::from_secs(30));
    assert_eq!(
        pace.max_retry_after_block, None,
        "-1: no cap, as in StormCrawler"
    );
    let defaults = named("").expect("defaults");
    assert_eq!(
        defaults.fetcher.pace.policy,
        crate::fetch::PaceKind::Adaptive
    );
    assert_eq!(defaults.fetcher.pace_floor(), defaults.fetcher.server_delay);
    for bad in [
        "fetcher.pace.policy: faster",
        "fetcher.pace.floor: 2",
        "fetcher.pace.recovery.step: 1",
        "fetcher.pace.latency.inflation: 0.5",
        "urlfrontier.backoff.factor: -1",
        "urlfrontier.backoff.jitter: -0.1",
        "urlfrontier.backoff.status.codes: many",
        "urlfrontier.backoff.status.codes: [\"429\", \"too many\"]",
        "fetcher.pace.recovery.probe: 0",
        "fetcher.pace.backoff.max: 0.5",
    ] {
        let err = named(&format!("{bad}\n")).expect_err(bad);
        let key = bad.split(':').next().unwrap_or_default();
        assert!(
            matches!(&err, ConfigError::InvalidValue { key: named, .. } if named == key),
            "{bad}: {err}"
        );
    }
}

/// StormCrawler's files load as StormCrawler reads them: codes written as strings, a factor
/// under 1 (read as 1), a jitter over 1; a typo under the core's `urlfrontier.backoff.` is named.
#[test]
fn stormcrawlers_ways_of_writing_the_back_off_keys_are_read() {
    let config = named(
        "urlfrontier.backoff.status.codes: [\"429\", \"503\"]\n\
         urlfrontier.backoff.factor: 0.5\nurlfrontier.backoff.jitter: 1.5\n",
    )
    .expect("StormCrawler's spellings");
    let pace = &config.fetcher.pace;
    assert_eq!(pace.status_codes, [429, 503]);
    assert_eq!((pace.factor(), pace.backoff_jitter), (1.0, 1.5));
    let listed = named("urlfrontier.backoff.status.codes: \"429, 503,403\"\n").expect("a list");
    assert_eq!(listed.fetcher.pace.status_codes, [429, 503, 403]);
    let typo = named("urlfrontier.backoff.jiter: 0.2\n").expect_err("a typo");
    assert!(
        typo.to_string()
            .contains("did you mean `urlfrontier.backoff.jitter`"),
        "{typo}"
    );
    named("urlfrontier.host: 127.0.0.1\n").expect("the URLFrontier client's key, kept for it");
}
