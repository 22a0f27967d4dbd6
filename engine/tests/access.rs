//! Credentials and TLS against a real TLS endpoint: a TLS gate with a CA made by the test, which
//! checks an API key (and, when asked, a client certificate) the way a secured node does, in front
//! of the real test node. The right key and CA open the frontier and write through it; a wrong key
//! or CA fails at once with an error that names the problem, writing nothing and never showing the
//! secret.

use crate::support;
use std::path::Path;

use chrono::Utc;
use squall::config::{ConfigBuilder, CrawlConfig};
use squall::frontier::{StatusWrite, UrlQuery};
use squall::model::{CrawlUrl, Status};
use squall_testsite::tls::{GateOptions, TestCa, TlsGate, api_key_credentials};

const KEY_ID: &str = "squall-test";
const KEY_SECRET: &str = "ui2lp2axTNmsyakw9tvNnw";

/// A gate with a server identity from `ca` in front of the test node, asking for the test's API
/// key and, with `client_ca`, a client certificate.
async fn gate(ca: &TestCa, client_ca: Option<&TestCa>) -> TlsGate {
    let _ = support::client().await; // a clear message when no node runs
    TlsGate::start(GateOptions {
        upstream: support::base_url(),
        server: ca.server_identity(&["localhost", "127.0.0.1"]),
        api_key: Some((KEY_ID.to_string(), KEY_SECRET.to_string())),
        client_ca_pem: client_ca.map(TestCa::pem),
    })
    .await
}

/// A configuration of the queue frontier behind `gate`, with `keys` (`key: value` YAML lines)
/// written to a file as a user would, so that `${ENV-...}` placeholders are read as from a file.
fn config(dir: &Path, gate: &TlsGate, keys: &[String]) -> CrawlConfig {
    let urls = support::unique_index("access-urls");
    let queues = support::unique_index("access-queues");
    let mut yaml = format!(
        "http.agent.name: test\nfrontier.kind: opensearch\nes.status.spout: queue\n\
         es.status.addresses: \"{}\"\nes.status.index.name: {urls}\n\
         es.queues.index.name: {queues}\nes.status.index.shards: 1\n\
         es.status.index.replicas: 0\n",
        gate.url()
    );
    for key in keys {
        yaml.push_str(key);
        yaml.push('\n');
    }
    let path = dir.join("crawler-conf.yaml");
    std::fs::write(&path, yaml).expect("write the configuration");
    ConfigBuilder::new()
        .yaml_file(&path)
        .and_then(ConfigBuilder::build)
        .expect("a valid configuration")
}

fn discovered(url: &str) -> StatusWrite {
    let url = url::Url::parse(url).expect("url");
    StatusWrite {
        key: url.host_str().unwrap_or_default().to_string(),
        url: CrawlUrl::seed(url),
        status: Status::Discovered,
        next_fetch: Some(Utc::now()),
        queue: Default::default(),
    }
}

/// Opens the frontier of `config`, writes two URLs through it and counts them back.
async fn open_write_and_count(config: &CrawlConfig) {
    let frontier = squall_engine::setup::open(config)
        .await
        .expect("the frontier opens with the right key and CA");
    let outcomes = frontier
        .store
        .store(vec![
            discovered("http://a.test/1"),
            discovered("http://b.test/1"),
        ])
        .await;
    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    frontier.store.flush().await.expect("flush");
    let catalog = frontier.catalog.as_ref().expect("a catalog");
    assert_eq!(catalog.count(&UrlQuery::default()).await, Ok(2));
}

/// Opening the frontier of `config` fails; the error, as the user reads it.
async fn open_fails(config: &CrawlConfig) -> String {
    match squall_engine::setup::open(config).await {
        Ok(frontier) => panic!("opened: {}", frontier.description),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn the_right_api_key_and_ca_open_the_frontier_and_write_through_tls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = TestCa::new("squall access test CA");
    let gate = gate(&ca, None).await;
    let ca_file = ca.write_pem(dir.path(), "ca.pem");
    let key_file = dir.path().join("api-key");
    std::fs::write(&key_file, format!("{KEY_ID}:{KEY_SECRET}\n")).expect("key file");
    let from_file = config(
        dir.path(),
        &gate,
        &[
            format!("es.api.key.file: {}", key_file.display()),
            format!("es.tls.ca.file: {}", ca_file.display()),
        ],
    );
    open_write_and_count(&from_file).await;
    assert!(!format!("{from_file:?}").contains(KEY_SECRET));
    assert!(gate.forwarded_writes() > 0, "nothing went through the gate");
    assert_eq!(gate.refused(), 0);

    // The encoded form, under the frontier's own key (tests/crawl_binary.rs takes it from the
    // environment).
    let encoded = api_key_credentials(KEY_ID, KEY_SECRET);
    let encoded_form = config(
        dir.path(),
        &gate,
        &[
            format!("es.status.api.key: \"{encoded}\""),
            format!("es.status.tls.ca.file: {}", ca_file.display()),
        ],
    );
    open_write_and_count(&encoded_form).await;
    assert!(!format!("{encoded_form:?}").contains(KEY_SECRET));
    assert_eq!(gate.refused(), 0);
}

#[tokio::test]
async fn a_wrong_api_key_fails_at_once_names_the_problem_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = TestCa::new("squall access test CA");
    let gate = gate(&ca, None).await;
    let ca_file = ca.write_pem(dir.path(), "ca.pem");
    let wrong = "squall-test:not-the-secret-at-all";
    let config = config(
        dir.path(),
        &gate,
        &[
            format!("es.api.key: \"{wrong}\""),
            format!("es.tls.ca.file: {}", ca_file.display()),
        ],
    );
    let error = open_fails(&config).await;
    assert!(error.contains("401"), "{error}");
    assert!(error.contains("refused the credentials"), "{error}");
    assert!(!error.contains("not-the-secret-at-all"), "{error}");
    assert_eq!(gate.refused(), 1, "a refused key is not tried again");
    assert_eq!(gate.forwarded(), 0);

    let missing = config_without_key(dir.path(), &gate, &ca_file);
    let error = open_fails(&missing).await;
    assert!(error.contains("401"), "{error}");
    assert_eq!(gate.forwarded(), 0);
}

fn config_without_key(dir: &Path, gate: &TlsGate, ca_file: &Path) -> CrawlConfig {
    config(
        dir,
        gate,
        &[format!("es.tls.ca.file: {}", ca_file.display())],
    )
}

#[tokio::test]
async fn a_node_certificate_from_another_ca_fails_at_once_with_a_tls_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = TestCa::new("squall access test CA");
    let other = TestCa::new("some other CA");
    let gate = gate(&ca, None).await;
    let other_file = other.write_pem(dir.path(), "other-ca.pem");
    let config = config(
        dir.path(),
        &gate,
        &[
            format!("es.api.key: \"{KEY_ID}:{KEY_SECRET}\""),
            format!("es.tls.ca.file: {}", other_file.display()),
        ],
    );
    let error = open_fails(&config).await;
    assert!(
        error.contains("TLS with Elasticsearch/OpenSearch"),
        "{error}"
    );
    assert!(error.contains("certificate"), "{error}");
    assert!(!error.contains(KEY_SECRET), "{error}");
    // The gate learns of the refusal after the client has given up: wait until its count settles.
    assert_eq!(
        settled(|| gate.handshakes_failed()).await,
        1,
        "a refused certificate is not tried again"
    );
    assert_eq!(gate.forwarded(), 0);

    // No CA given: the system's roots do not know the test CA either.
    let system_roots = config_with_key_only(dir.path(), &gate);
    let error = open_fails(&system_roots).await;
    assert!(error.contains("certificate"), "{error}");
    assert_eq!(gate.forwarded(), 0);
}

fn config_with_key_only(dir: &Path, gate: &TlsGate) -> CrawlConfig {
    config(
        dir,
        gate,
        &[format!("es.api.key: \"{KEY_ID}:{KEY_SECRET}\"")],
    )
}

#[tokio::test]
async fn a_client_certificate_is_presented_when_the_node_asks_for_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ca = TestCa::new("squall access test CA");
    let clients = TestCa::new("squall client CA");
    let gate = gate(&ca, Some(&clients)).await;
    let ca_file = ca.write_pem(dir.path(), "ca.pem");
    let (cert, key) = clients
        .client_identity("squall-crawler")
        .write(dir.path(), "client");
    let base = [
        format!("es.api.key: \"{KEY_ID}:{KEY_SECRET}\""),
        format!("es.tls.ca.file: {}", ca_file.display()),
    ];
    let mut with_certificate = base.to_vec();
    with_certificate.push(format!("es.tls.client.cert.file: {}", cert.display()));
    with_certificate.push(format!("es.tls.client.key.file: {}", key.display()));
    open_write_and_count(&config(dir.path(), &gate, &with_certificate)).await;
    assert_eq!(gate.handshakes_failed(), 0);

    let error = open_fails(&config(dir.path(), &gate, &base)).await;
    assert!(
        error.contains("TLS with Elasticsearch/OpenSearch"),
        "{error}"
    );
    assert!(settled(|| gate.handshakes_failed()).await >= 1);
}

/// The value of `count` once it has not changed for 300 ms (at most 10 s of waiting).
async fn settled(count: impl Fn() -> u64) -> u64 {
    let mut last = count();
    for _ in 0..33 {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let now = count();
        if now == last && now > 0 {
            return now;
        }
        last = now;
    }
    last
}

#[test]
fn credential_keys_that_cannot_be_used_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let read = |keys: &[&str]| {
        let mut builder = ConfigBuilder::new()
            .set("http.agent.name=test")
            .expect("key");
        for key in keys {
            builder = builder.set(key).expect("key");
        }
        let config = builder.build().expect("config");
        squall_engine::setup::IndexFrontierConfig::from_config(&config)
    };
    let missing = dir.path().join("missing.pem");
    let error = read(&[&format!("es.tls.ca.file={}", missing.display())]).expect_err("missing");
    assert!(error.to_string().contains("es.tls.ca.file"), "{error}");
    let error = read(&["es.api.key=a:b", "es.user=elastic"]).expect_err("both");
    assert!(error.to_string().contains("es.api.key"), "{error}");
    let error = read(&["es.api.key=a:b", "es.api.key.file=/run/key"]).expect_err("twice");
    assert!(error.to_string().contains("es.api.key"), "{error}");
    let error = read(&["es.status.tls.client.cert.file=/run/client.crt"]).expect_err("no key file");
    assert!(
        error.to_string().contains("es.status.tls.client.key.file"),
        "{error}"
    );
    let not_pem = dir.path().join("ca.txt");
    std::fs::write(&not_pem, "not a certificate").expect("write");
    let error = read(&[&format!("es.tls.ca.file={}", not_pem.display())]).expect_err("not PEM");
    assert!(error.to_string().contains("no PEM block"), "{error}");
}
