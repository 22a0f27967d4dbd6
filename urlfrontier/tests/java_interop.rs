//! squall's URLFrontier server driven by a client written elsewhere: `InteropCheck`, a Java program
//! on the generated stubs of the official `urlfrontier-API` 2.5 jar (see `support/java.rs`). It
//! puts URLs, gets them with a `delay_requestable`, lets one lapse and sees it handed out again,
//! puts URLs back with new statuses, and reads queues, stats, counts and listings.
//!
//! On the embedded frontier, and on the real node (started by `scripts/opensearch start`;
//! `OPENSEARCH_URL` points elsewhere) with the queue frontier and with a StormCrawler status index
//! read by the aggregation spout. The Java program uses a crawl ID
//! of its own, so the crawl-ID mapping (a directory, or suffixed indices) is exercised too.

use squall::config::{ConfigBuilder, CrawlConfig};

use crate::support::java;
use crate::support::serving::serve;

async fn check(config: CrawlConfig) {
    let server = serve(config).await;
    let address = server.addr().to_string();
    let crawl = format!("interop-{}", std::process::id());
    let outcome = tokio::task::spawn_blocking(move || java::assert_interop_check(&address, &crawl))
        .await
        .expect("the check ran");
    server.shutdown().await;
    match outcome {
        Ok(stdout) => eprintln!("{stdout}"),
        Err(error) => panic!("{error:#}"),
    }
}

fn config(settings: &[&str]) -> CrawlConfig {
    let mut builder = ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .expect("agent");
    for setting in settings {
        builder = builder.set(setting).expect("setting");
    }
    builder.build().expect("config")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_java_client_drives_the_server_on_the_embedded_frontier() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = format!("frontier.path={}", dir.path().display());
    check(config(&[
        &path,
        "fetcher.server.delay=0.2",
        "spout.min.delay.queries=100",
    ]))
    .await;
}

fn engine_url() -> String {
    std::env::var("OPENSEARCH_URL").unwrap_or_else(|_| "http://127.0.0.1:9200".into())
}

/// The engine frontier with `spout` (`queue`, or a status-index spout such as `aggregation`), its
/// indices named with `suffix`.
fn engine_config(spout: &str, suffix: &str) -> CrawlConfig {
    let url = engine_url();
    let builder = ConfigBuilder::new()
        .set("http.agent.name=squall-frontier")
        .and_then(|b| b.set_text("frontier.kind", "opensearch"))
        .and_then(|b| b.set_text("es.status.addresses", &url))
        .and_then(|b| b.set_text("es.status.spout", spout))
        .and_then(|b| {
            b.set_text(
                "es.status.index.name",
                &format!("uf-interop-{spout}-{suffix}"),
            )
        })
        .and_then(|b| {
            b.set_text(
                "es.queues.index.name",
                &format!("uf-interop-queues-{suffix}"),
            )
        })
        .and_then(|b| b.set("fetcher.server.delay=0.2"))
        .and_then(|b| b.set("spout.min.delay.queries=100"));
    builder.and_then(ConfigBuilder::build).expect("config")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_java_client_drives_the_server_on_the_queue_frontier() {
    on_the_engine("queue").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_java_client_drives_the_server_on_a_status_index() {
    on_the_engine("aggregation").await;
}

/// Runs the check on the engine, then deletes every index it made (the crawl's and the default's).
async fn on_the_engine(spout: &str) {
    let suffix = format!(
        "{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    );
    check(engine_config(spout, &suffix)).await;
    let cleanup = reqwest::Client::new()
        .delete(format!("{}/uf-interop-*{suffix}*", engine_url()))
        .send()
        .await;
    if let Err(error) = cleanup {
        eprintln!("the test indices could not be deleted: {error}");
    }
}
