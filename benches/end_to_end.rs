//! End to end: the whole topology (spout, fetcher, parser, status writes) crawling a site of many
//! hosts at a real politeness delay, on the embedded frontier and on the queue frontier, against
//! the politeness limit and the fetcher-alone rate on the same site.
//!
//! `cargo bench --bench end_to_end` serves a generated site of `E2E_HOSTS` host names on loopback
//! (2,000; the test site of `tests/site`, `E2E_PAGES` pages per host, 60; every home page a seed,
//! the rest found by following links) and crawls it with the example crawl binary
//! (`examples/crawl.rs`, a child process reached through `--resolve`) at a 1 s per-host delay, so
//! politeness allows hosts / 1 s = 2,000 pages/s. The settings are what a user crawling that many
//! hosts sets: every host's queue read per frontier query (`frontier.max.buckets` = hosts) and room
//! for four URLs per host in flight (`topology.max.spout.pending` and
//! `fetcher.max.urls.in.queues` = 4 × hosts); the rest are the defaults.
//!
//! Each crawl gets the same budget: once it has fetched its first page, a warm-up of `E2E_WARMUP`
//! seconds (20), then a window of `E2E_WINDOW` seconds (30) in which the benchmark reads the
//! crawler's Prometheus metrics (`--metrics-addr`) and its CPU time from /proc at both ends; then
//! it is stopped (SIGINT). From those: pages/s (`squall_fetch_total`), status writes/s
//! (`squall_status_writes_total`), CPU per page, peak RSS (`VmHWM`), and how busy each stage was
//! (seconds spent fetching, parsing and writing per second of window, the spout's URLs in flight
//! against its limit, the fetcher's queues and queued URLs) and where the machine's CPU went (the
//! crawler, the site served by this process, the rest: the engine), from which it names the stage
//! that limits the rate. The fetcher alone (the fetcher bolt in this process with politeness off, 50
//! fetches at once, fed the site's URLs) runs for the same window on the same site. The runs are
//! interleaved in mirrored order (fetcher, embedded, queue, aggregation, then the reverse, with two
//! runs, `RUNS`, default 2), each figure their median, after one unmeasured crawl of each engine
//! frontier (a node just started spends its first minute compiling). The aggregation spout crawls
//! the same site on a status index (StormCrawler's way). For each engine frontier the benchmark also
//! reads the node's statistics (`_nodes/stats`) at both ends of the window: its CPU time and the
//! operations of each kind (search, refresh, indexing, get, merge) per crawled page.
//!
//! **Among other hosts' URLs.** Two more candidates, `queue-among` and `aggregation-among`, crawl
//! the same site on copies (`_clone`: linked segments, instant) of a frontier that already holds
//! `E2E_BACKGROUND` URLs of 200,000 other hosts (10 M; quick 20,000), none of them due during the
//! benchmark (a frontier that keeps up: fetched pages waiting for their next visit), so that what
//! is measured is the cost of the frontier's size, not of a backlog (the spouts benchmark's "all
//! due" case measures that). That frontier is the one the spouts benchmark leaves behind when run
//! with `SQUALL_BENCH_KEEP_BACKGROUND=1` (scripts/bench does, spouts running first), or one an
//! earlier run left in the engine, or it is loaded here (about half an hour at 10 M on two cores). Every index a crawl creates has 8
//! primary shards, as those copies do.
//!
//! **On a second engine** (issue 45). With `SQUALL_BENCH_ES_SECOND` naming a second node (another
//! version: scripts/bench starts OpenSearch 3.9.0 beside the first node's 2.19.6), two more
//! candidates, `queue-second` and `aggregation-second`, crawl the same site on it, interleaved
//! with the rest (each run's order puts them right after the first node's `queue` and
//! `aggregation`); both nodes run throughout, and the result gives each version's pages/s and
//! engine CPU per page and their ratios (see `end_to_end/second.rs`).
//!
//! Crawls as a user starts them, run to the end of their site, are the as-given benchmark's
//! (`benches/as_given.rs`).
//!
//! The queue frontier lives in the engine at `SQUALL_BENCH_ES` (fresh urls and queues indices per
//! run, deleted after). The crawl binary is not built by `cargo bench`: build it first (`cargo build
//! --release --example crawl`; scripts/bench does), or name one with `SQUALL_BENCH_CRAWL_BIN`.
//! Settings (env, `SQUALL_BENCH_` prefix): `RUNS`, `E2E_HOSTS`, `E2E_PAGES`, `E2E_WARMUP`,
//! `E2E_WINDOW` (quick: 100 hosts, 10 pages, 3 s and 5 s, one run), `E2E_BACKGROUND` (0 leaves the
//! `-among` crawls out); for development, `E2E_ONLY` (some of
//! `fetcher,embedded,queue,aggregation,queue-second,aggregation-second,queue-among,`
//! `aggregation-among`) and
//! `KEEP_LOGS=1` (keep each crawl's output). Prints JSON.

mod common;

#[path = "end_to_end/crawl.rs"]
mod crawl;
#[path = "end_to_end/metrics.rs"]
mod metrics;
#[path = "end_to_end/second.rs"]
mod second;

use std::time::Duration;

use url::Url;

use chrono::{TimeDelta, Utc};
use common::fetch_driver::{fetcher_alone, site_urls};
use common::frontier_data::{
    Generator, Targets, background, create, delete, doc_count, due_count, finish_load, load, names,
};
use common::{Spread, engine_client, engine_url, env_or, print_result, quick, start_closed_site};
use crawl::{Budget, FrontierChoice, Place};
use squall_bench_schema::end_to_end::{Background, CrawlRun, EndToEnd, Frontier};
use squall_engine::client::indices::shard_count;

/// The per-host delay, seconds.
const DELAY: f64 = 1.0;

/// Medians of one frontier's runs.
fn summary(runs: &[CrawlRun]) -> Frontier {
    let median =
        |f: fn(&CrawlRun) -> f64| Some(Spread::of(&runs.iter().map(f).collect::<Vec<_>>()));
    Frontier {
        pages_per_second: median(|r| r.pages_per_second),
        status_writes_per_second: median(|r| r.status_writes_per_second),
        status_writes_per_page: median(|r| {
            r.status_writes_per_second / r.pages_per_second.max(1e-9)
        }),
        engine_cpu_ms_per_page: median(|r| {
            r.engine
                .as_ref()
                .and_then(|e| e.cpu_ms_per_page)
                .unwrap_or(0.0)
        }),
        cpu_ms_per_page: median(|r| r.cpu_ms_per_page),
        peak_rss_mib: median(|r| r.peak_rss_mib),
        limiting_stages: runs.iter().map(|r| r.limiting_stage.clone()).collect(),
        runs: runs.to_vec(),
    }
}

/// The frontier of other hosts' URLs (none due during the benchmark) that the `-among` crawls
/// run in, `E2E_BACKGROUND` URLs: the one the spouts benchmark kept when it is there (scripts/bench
/// runs it first with `KEEP_BACKGROUND=1`), else loaded here. `None` when `E2E_BACKGROUND` is 0.
async fn prepare_background() -> Option<(Targets, Background)> {
    let wanted: u64 = env_or("E2E_BACKGROUND", if quick() { 20_000 } else { 10_000_000 });
    if wanted == 0 {
        return None;
    }
    let client = engine_client();
    let targets = background();
    let names = names(&targets);
    let mut counts = Vec::new();
    for name in &names {
        counts.push(doc_count(&client, name).await);
    }
    let kept = counts
        .iter()
        .take(2)
        .all(|c| c.is_some_and(|c| c >= wanted))
        && counts[2].is_some()
        && shard_count(&client, &names[1]).await.ok() == Some(crawl::SHARDS);
    let started = std::time::Instant::now();
    if !kept {
        eprintln!("end_to_end: loading {wanted} URLs of other hosts, none due (the background)");
        delete(
            &client,
            &names.iter().map(String::as_str).collect::<Vec<_>>(),
        )
        .await;
        create(&client, &targets, crawl::SHARDS).await;
        // Every date at least a day ahead: the `Generator`'s due URLs span the 30 days before it.
        let generator = Generator::new((wanted / 50).max(10), Utc::now() + TimeDelta::days(31));
        load(
            &client,
            &generator,
            &targets,
            0..wanted,
            &mut Default::default(),
        )
        .await;
        finish_load(&client, &targets, "1s").await;
    }
    let urls = doc_count(&client, &names[1]).await.unwrap_or(0);
    let due = due_count(&client, &names[1]).await;
    let queues = doc_count(&client, &names[2]).await.unwrap_or(0);
    eprintln!("end_to_end: background of {urls} URLs ({due} due) over {queues} queues");
    let about = Background {
        urls: Some(urls),
        due_urls: Some(due),
        queues: Some(queues),
        source: Some(
            if kept {
                "found in the engine, kept by an earlier run"
            } else {
                "loaded by this benchmark"
            }
            .to_string(),
        ),
        load_seconds: (!kept).then(|| started.elapsed().as_secs_f64()),
    };
    Some((targets, about))
}

/// Every candidate's measured runs.
#[derive(Default)]
struct Measured {
    fetcher: Vec<f64>,
    embedded: Vec<CrawlRun>,
    queue: Vec<CrawlRun>,
    aggregation: Vec<CrawlRun>,
    queue_among: Vec<CrawlRun>,
    aggregation_among: Vec<CrawlRun>,
    queue_second: Vec<CrawlRun>,
    aggregation_second: Vec<CrawlRun>,
}

/// Where the candidates crawl: the site, its URLs (for the fetcher alone), the first engine, the
/// second (when given) and the background frontier (when loaded).
struct Setting<'a> {
    site: &'a squall_testsite::Site,
    urls: &'a [Url],
    first: &'a str,
    second: Option<&'a str>,
    among: Option<&'a Targets>,
}

/// The place of an engine candidate: `queue`, `aggregation`, their `-among` and `-second` forms.
fn place<'a>(step: &str, setting: &Setting<'a>) -> Place<'a> {
    let frontier = if step.starts_with("queue") {
        FrontierChoice::Queue
    } else {
        FrontierChoice::Aggregation
    };
    let engine = match (step.ends_with("-second"), setting.second) {
        (true, Some(second)) => second,
        _ => setting.first,
    };
    Place { frontier, engine }
}

/// Runs the candidates `runs` times in mirrored order, after one unmeasured crawl of each engine
/// frontier (a node just started spends its first minute compiling: the JVM's JIT took a third of
/// the machine in a profile, and whichever frontier ran first on it paid for that).
async fn measure(
    setting: &Setting<'_>,
    candidates: &[&str],
    budget: &Budget,
    runs: usize,
    order: &mut usize,
) -> Measured {
    if !quick() {
        let warm = Budget {
            warmup: Duration::from_secs(5),
            window: Duration::from_secs(10),
            ..*budget
        };
        for step in candidates
            .iter()
            .filter(|c| !c.ends_with("-among"))
            .filter(|c| c.starts_with("queue") || c.starts_with("aggregation"))
        {
            *order += 1;
            eprintln!("  (warming the engine up: an unmeasured {step} crawl)");
            let _ = crawl::run(setting.site, place(step, setting), &warm, *order, None).await;
        }
    }
    let mut m = Measured::default();
    for run in 0..runs {
        let mut steps = candidates.to_vec();
        if run % 2 == 1 {
            steps.reverse();
        }
        for step in steps {
            *order += 1;
            if step == "fetcher" {
                let rate = fetcher_alone(setting.site, setting.urls, budget.window).await;
                eprintln!("  fetcher alone: {rate:.0} pages/s");
                m.fetcher.push(rate);
                continue;
            }
            let (at, among) = match step {
                "embedded" => (
                    Place {
                        frontier: FrontierChoice::Embedded,
                        engine: setting.first,
                    },
                    None,
                ),
                _ => (
                    place(step, setting),
                    setting.among.filter(|_| step.ends_with("-among")),
                ),
            };
            let crawled = crawl::run(setting.site, at, budget, *order, among).await;
            match step {
                "embedded" => m.embedded.push(crawled),
                "aggregation" => m.aggregation.push(crawled),
                "queue-among" => m.queue_among.push(crawled),
                "aggregation-among" => m.aggregation_among.push(crawled),
                "queue-second" => m.queue_second.push(crawled),
                "aggregation-second" => m.aggregation_second.push(crawled),
                _ => m.queue.push(crawled),
            }
        }
    }
    m
}

#[tokio::main]
async fn main() {
    let hosts: usize = env_or("E2E_HOSTS", if quick() { 100 } else { 2_000 });
    let pages: usize = env_or("E2E_PAGES", if quick() { 10 } else { 60 });
    let budget = Budget {
        warmup: Duration::from_secs_f64(env_or("E2E_WARMUP", if quick() { 3.0 } else { 20.0 })),
        window: Duration::from_secs_f64(env_or("E2E_WINDOW", if quick() { 5.0 } else { 30.0 })),
        hosts,
        delay: DELAY,
    };
    let site = start_closed_site(hosts, pages).await;
    let urls = site_urls(&site);
    eprintln!("site: {hosts} hosts, {} reachable URLs", urls.len());

    let background = prepare_background().await;
    let first = engine_url();
    let second_url = second::address();
    let setting = Setting {
        site: &site,
        urls: &urls,
        first: &first,
        second: second_url.as_deref(),
        among: background.as_ref().map(|(targets, _)| targets),
    };
    // Which candidates run (`E2E_ONLY`, comma-separated, for development; all by default).
    let all = "fetcher,embedded,queue,aggregation,queue-second,aggregation-second,queue-among,aggregation-among";
    let only: String = env_or("E2E_ONLY", all.to_string());
    if let Some(unknown) = only
        .split(',')
        .map(str::trim)
        .find(|c| !all.split(',').any(|a| a == *c))
    {
        panic!("E2E_ONLY names '{unknown}', which is none of {all}");
    }
    let candidates: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|c| setting.among.is_some() || !c.ends_with("-among"))
        .filter(|c| setting.second.is_some() || !c.ends_with("-second"))
        .collect();
    let runs: usize = if quick() { 1 } else { env_or("RUNS", 2).max(1) };
    let mut order = 0;
    let m = measure(&setting, &candidates, &budget, runs, &mut order).await;
    let second_engine = match &second_url {
        Some(url) => Some(second::compare(
            (common::describe(&first).await, common::describe(url).await),
            (&m.queue, &m.aggregation),
            (&m.queue_second, &m.aggregation_second),
        )),
        None => None,
    };

    let politeness = hosts as f64 / DELAY;
    let fetcher_rate = Spread::of(&m.fetcher).median;
    let limit = politeness.min(fetcher_rate);
    let rate = |runs: &[CrawlRun]| {
        Spread::of(&runs.iter().map(|r| r.pages_per_second).collect::<Vec<_>>()).median
    };
    print_result(&EndToEnd {
        run: squall_bench_schema::Run::at_commit("end_to_end"),
        hosts: Some(hosts as u64),
        pages_per_host: Some(pages as u64),
        site_urls: Some(urls.len() as u64),
        delay_seconds: Some(DELAY),
        warmup_seconds: Some(budget.warmup.as_secs_f64()),
        window_seconds: Some(budget.window.as_secs_f64()),
        runs: Some(runs as u64),
        settings: crawl::settings(hosts, DELAY),
        politeness_pages_per_second: Some(politeness),
        fetcher_alone_pages_per_second: Some(Spread::of(&m.fetcher)),
        fetcher_alone_runs: m.fetcher.clone(),
        baseline_pages_per_second: Some(limit),
        ratio_embedded_to_baseline: Some(rate(&m.embedded) / limit),
        ratio_queue_to_baseline: Some(rate(&m.queue) / limit),
        ratio_aggregation_to_baseline: Some(rate(&m.aggregation) / limit),
        ratio_queue_to_aggregation: Some(rate(&m.queue) / rate(&m.aggregation)),
        ratio_queue_among_to_queue: Some(rate(&m.queue_among) / rate(&m.queue)),
        ratio_queue_to_aggregation_among: Some(rate(&m.queue_among) / rate(&m.aggregation_among)),
        embedded: Some(summary(&m.embedded)),
        queue: Some(summary(&m.queue)),
        aggregation: Some(summary(&m.aggregation)),
        background: background.map(|(_, about)| about),
        queue_among: Some(summary(&m.queue_among)),
        aggregation_among: Some(summary(&m.aggregation_among)),
        as_given: None,
        second_engine,
    });
    site.shutdown().await;
}
