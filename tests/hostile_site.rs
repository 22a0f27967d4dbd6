//! A crawl of a hostile site on loopback: a server that drips a byte a second, an endless body, a gzip
//! bomb, redirect loops, invalid UTF-8, lying content types, a page with 100,000 links and badly broken
//! HTML. Every URL ends with the right status within its timeout, memory stays bounded, and the crawl
//! goes on.

use crate::support;
use std::time::{Duration, Instant};

use squall::model::{Status, keys};
use squall::topology::StopReason;
use squall_testsite::HostileSite;
use support::crawler::{self, expected_status};

/// Peak resident memory of this process, from /proc (Linux).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_site_gets_the_right_statuses_with_bounded_memory() {
    let site = HostileSite::start().await.expect("hostile site");
    let timeout_secs = 3.0;
    let content_limit = 1024 * 1024;
    let outlink_cap = 300;
    let config = crawler::config(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0",
        "fetcher.threads.per.queue=4",
        "spout.min.delay.queries=50",
        // One host and no politeness delay: write statuses often, so its next URLs come soon.
        "status.updater.flush.interval=0.1",
        &format!("http.timeout={}", timeout_secs * 1000.0),
        &format!("http.content.limit={content_limit}"),
        &format!("parser.emitOutlinks.max.per.page={outlink_cap}"),
        "urlfilter.ignore.outside.host=true",
    ]);
    let (builder, frontier, _dir) = crawler::embedded(config);
    let crawler = crawler::resolve_hosts(builder, site.host_names(), site.addr())
        .build()
        .expect("crawler");
    let seeds = site.seeds();
    crawler.inject(seeds.iter().map(String::as_str)).await;
    let started = Instant::now();
    let summary = crawler::run_until_idle(crawler, Some(Duration::from_secs(120))).await;
    assert_eq!(summary.stop_reason, StopReason::Idle, "{summary}");
    assert!(started.elapsed() < Duration::from_secs(120));

    let lookup = |url: &str| frontier.lookup(url).expect("lookup");
    let mut wrong = Vec::new();
    for expectation in site.expectations() {
        // Reachable only through a page that is not parsed: /ok/3 is linked from HTML served as
        // image/png (we go by the declared type), and /l/N past the outlink cap is never discovered.
        let beyond_cap = expectation
            .path
            .strip_prefix("/l/")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| n >= outlink_cap);
        if expectation.path == "/ok/3" || beyond_cap {
            assert!(
                lookup(&expectation.url).is_none(),
                "{} was discovered",
                expectation.path
            );
            continue;
        }
        let stored = lookup(&expectation.url);
        let allowed: Vec<Status> = expectation
            .outcome
            .allowed_statuses()
            .iter()
            .map(|s| expected_status(*s))
            .collect();
        match &stored {
            Some(s) if allowed.contains(&s.status) => {}
            other => wrong.push(format!(
                "{}: stored {:?}, expected one of {allowed:?} ({})",
                expectation.path,
                other.as_ref().map(|s| s.status),
                expectation.note
            )),
        }
        if expectation.path != "/many-links" {
            for url in &expectation.must_find {
                if lookup(url).is_none() {
                    wrong.push(format!("{}: outlink {url} was not found", expectation.path));
                }
            }
        }
        for url in &expectation.must_not_find {
            if lookup(url).is_some() {
                wrong.push(format!(
                    "{}: {url} must not be an outlink",
                    expectation.path
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");

    let drip = lookup(&site.url("hostile.test", "/drip")).expect("drip stored");
    assert_eq!(drip.metadata.first(keys::ERROR_CAUSE), Some("timeout"));
    let endless = lookup(&site.url("hostile.test", "/endless")).expect("endless stored");
    assert_eq!(endless.metadata.first(keys::TRIMMED), Some("true"));
    // The 100,000-link page gives its first `outlink_cap` links only.
    assert!(lookup(&site.url("hostile.test", "/l/0")).is_some());
    assert!(lookup(&site.url("hostile.test", &format!("/l/{}", outlink_cap - 1))).is_some());
    assert!(lookup(&site.url("hostile.test", &format!("/l/{outlink_cap}"))).is_none());
    // The crawl went on past the hostile pages.
    for n in [0, 1, 2, 4, 5] {
        let ok = lookup(&site.url("hostile.test", &format!("/ok/{n}")));
        assert_eq!(ok.map(|s| s.status), Some(Status::Fetched), "/ok/{n}");
    }
    // A 1 GiB gzip bomb and an endless body never got near memory: the content limit held.
    let peak = peak_rss_bytes().expect("peak RSS");
    assert!(
        peak < 400 * 1024 * 1024,
        "peak RSS {} MiB",
        peak / (1024 * 1024)
    );
    site.shutdown().await;
}
