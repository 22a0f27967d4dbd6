//! Crawls as a user starts them, run to the end of the site: a StormCrawler user's files as they
//! are (the 3.4.0 archetype's `crawler.flux` and conf files, seeds injected with its
//! `injection.flux`) and squall with no configuration at all. The site's own request log is the
//! judge: pages/s while steady, the whole site's time, the smallest gap between two requests to
//! one host and the URLs requested twice.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use squall_bench_schema::end_to_end::{GivenRun, Requests};
use squall_engine::client::Method;
use squall_testsite::Site;

use crate::common::binary::{resolve_args, set_args, site_args};
use crate::common::engine_stats::EngineStats;
use crate::common::process::{cpu_seconds, peak_rss_bytes};
use crate::common::{crawl_binary, engine_client, engine_url, fresh_temp_dir, spawn_logged};

/// How a crawl is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// The archetype's files as they are, flux included, on its status index (AggregationSpout).
    FilesAggregation,
    /// The same files with `--spout queue`: the queue frontier, with the files' budget.
    FilesQueue,
    /// The same files with `--spout collapsing` (StormCrawler's CollapsingSpout).
    FilesCollapsing,
    /// The same files with `--spout hybrid` (StormCrawler's HybridSpout).
    FilesHybrid,
    /// No configuration: the embedded frontier.
    DefaultEmbedded,
    /// No configuration but the engine's address: the queue frontier.
    DefaultQueue,
    /// No configuration but the engine's address: the aggregation spout on a status index.
    DefaultAggregation,
}

impl Setup {
    /// Its name in the JSON: `files-aggregation`, `default-embedded`, ...
    pub fn name(self) -> &'static str {
        match self {
            Setup::FilesAggregation => "files-aggregation",
            Setup::FilesQueue => "files-queue",
            Setup::FilesCollapsing => "files-collapsing",
            Setup::FilesHybrid => "files-hybrid",
            Setup::DefaultEmbedded => "default-embedded",
            Setup::DefaultQueue => "default-queue",
            Setup::DefaultAggregation => "default-aggregation",
        }
    }

    /// The setup named `name`, if any.
    pub fn named(name: &str) -> Option<Setup> {
        [
            Setup::FilesAggregation,
            Setup::FilesQueue,
            Setup::FilesCollapsing,
            Setup::FilesHybrid,
            Setup::DefaultEmbedded,
            Setup::DefaultQueue,
            Setup::DefaultAggregation,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    pub fn uses_engine(self) -> bool {
        self != Setup::DefaultEmbedded
    }

    fn files(self) -> bool {
        matches!(
            self,
            Setup::FilesAggregation
                | Setup::FilesQueue
                | Setup::FilesCollapsing
                | Setup::FilesHybrid
        )
    }
}

/// The archetype's project as the tests hold it.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stormcrawler/archetype-3.4")
}

/// The crawl binary's arguments that every run of `setup` takes, in `dir`, for run `id`.
fn frontier_args(setup: Setup, dir: &Path, id: &str) -> Vec<String> {
    let url = engine_url();
    let mut args = match setup {
        Setup::FilesAggregation => vec!["--flux-filter".into(), "dev.properties".into()],
        Setup::FilesCollapsing | Setup::FilesHybrid => [
            "--flux-filter",
            "dev.properties",
            "--spout",
            if setup == Setup::FilesHybrid {
                "hybrid"
            } else {
                "collapsing"
            },
        ]
        .map(str::to_string)
        .to_vec(),
        // The urls index takes squall's own shard count, as a user's would.
        Setup::FilesQueue => [
            "--flux-filter",
            "dev.properties",
            "--spout",
            "queue",
            "--es-index",
            &format!("bench-asgiven-urls-{id}"),
            "--es-queues-index",
            &format!("bench-asgiven-queues-{id}"),
            "--es-replicas",
            "0",
            "--instance-id",
            &format!("asgiven-{id}"),
        ]
        .map(str::to_string)
        .to_vec(),
        Setup::DefaultEmbedded => vec![
            "--frontier-path".into(),
            dir.join("frontier").display().to_string(),
        ],
        Setup::DefaultQueue => [
            "--frontier",
            "opensearch",
            "--spout",
            "queue",
            "--es-url",
            &url,
        ]
        .map(str::to_string)
        .to_vec(),
        Setup::DefaultAggregation => [
            "--frontier",
            "opensearch",
            "--spout",
            "aggregation",
            "--es-url",
            &url,
        ]
        .map(str::to_string)
        .to_vec(),
    };
    if setup == Setup::DefaultQueue || setup == Setup::DefaultAggregation {
        args.extend([
            "--es-index".to_string(),
            format!("bench-asgiven-status-{id}"),
            "--es-queues-index".to_string(),
            format!("bench-asgiven-queues-{id}"),
        ]);
    }
    if setup.files() {
        args.extend(set_args(&[
            &format!("opensearch.status.addresses={url}"),
            &format!("opensearch.indexer.addresses={url}"),
        ]));
    }
    args
}

/// The project folder of a files run: the archetype copied, its indices made by its own script,
/// its seeds (the site's home pages) injected by `injection.flux`.
fn prepare_files(setup: Setup, site: &Site, dir: &Path, id: &str) -> PathBuf {
    let project = dir.join("project");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(fixture())
        .arg(&project)
        .status();
    assert!(copied.is_ok_and(|s| s.success()), "copy the archetype");
    let init = Command::new("bash")
        .arg("OS_IndexInit.sh")
        .arg(engine_url())
        .current_dir(&project)
        .output();
    assert!(init.is_ok_and(|o| o.status.success()), "OS_IndexInit.sh");
    if let Err(e) = std::fs::write(project.join("seeds.txt"), site.seeds().join("\n") + "\n") {
        panic!("seeds.txt: {e}");
    }
    let mut args = vec!["--flux".to_string(), "injection.flux".to_string()];
    args.extend(frontier_args(setup, dir, id));
    args.extend(resolve_args(site));
    let injected = Command::new(crawl_binary())
        .args(&args)
        .current_dir(&project)
        .output();
    match injected {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("injection.flux: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("injection.flux: {e}"),
    }
    project
}

/// Crawls `site` with `setup` at `delay` until the crawler says it is idle (or `limit` passed).
pub async fn run(site: &Site, setup: Setup, delay: f64, limit: Duration, order: usize) -> GivenRun {
    let id = format!("{}-{order}", std::process::id());
    let dir = fresh_temp_dir(&format!("squall-asgiven-{id}"));
    let cwd = if setup.files() {
        prepare_files(setup, site, &dir, &id)
    } else {
        dir.clone()
    };
    let mut args = frontier_args(setup, &dir, &id);
    if setup.files() {
        args.extend(["--flux".into(), "crawler.flux".into()]);
        args.extend(resolve_args(site));
    } else {
        args.extend(set_args(&["http.agent.name=squall-bench"]));
        args.extend(site_args(site));
    }
    args.extend(set_args(&[&format!("fetcher.server.delay={delay}")]));
    args.extend(["--until-idle".into(), "--max-duration".into()]);
    args.push(limit.as_secs_f64().to_string());
    site.clear_requests();
    let engine_before = if setup.uses_engine() {
        EngineStats::read(&engine_url()).await
    } else {
        None
    };
    let mut child = spawn_in(&args, &dir, &cwd);
    let (cpu, peak, seconds) = follow(&mut child).await;
    refuse_a_failed_crawl(&mut child, setup, &dir);
    let engine_after = if setup.uses_engine() {
        EngineStats::read(&engine_url()).await
    } else {
        None
    };
    let requests = judge(site);
    let pages = requests.pages as f64;
    let engine = match (&engine_before, &engine_after) {
        (Some(before), Some(after)) => Some(after.per_page(before, pages)),
        _ => None,
    };
    let expected = site.expected().reachable_in_scope_urls().len() as u64;
    let run = GivenRun {
        setup: setup.name().to_string(),
        delay_seconds: delay,
        order: order as u64,
        run_seconds: seconds,
        site_urls: expected,
        whole_site_seconds: requests
            .span_seconds
            .filter(|_| requests.distinct == expected),
        crawler_cpu_ms_per_page: if pages > 0.0 {
            cpu * 1000.0 / pages
        } else {
            0.0
        },
        engine_cpu_ms_per_page: engine.as_ref().and_then(|e| e.cpu_ms_per_page),
        engine,
        peak_rss_mib: peak as f64 / (1024.0 * 1024.0),
        requests,
    };
    eprintln!(
        "  {} at {delay} s: {:.0} pages/s steady, whole site {}, {:.2} ms crawler CPU/page, engine {}, {:.0} MiB; smallest gap {} s, {} URLs twice",
        run.setup,
        run.requests.steady_pages_per_second,
        run.whole_site_seconds
            .map_or("not done".to_string(), |s| format!("{s:.0} s")),
        run.crawler_cpu_ms_per_page,
        run.engine_cpu_ms_per_page
            .map_or("–".to_string(), |m| format!("{m:.2} ms/page")),
        run.peak_rss_mib,
        run.requests
            .smallest_gap_seconds
            .map_or("–".to_string(), |g| format!("{g}")),
        run.requests.fetched_twice,
    );
    if setup.uses_engine() {
        delete_indices(&id).await;
    }
    if std::env::var("SQUALL_BENCH_KEEP_LOGS").is_ok_and(|v| v == "1") {
        eprintln!("  its output is in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    run
}

/// The crawl binary with `args`, working in `cwd`, its output in `dir`.
fn spawn_in(args: &[String], dir: &Path, cwd: &Path) -> Child {
    let summary = dir.join("summary.json");
    let mut command = Command::new(crawl_binary());
    command
        .arg("--summary-json")
        .arg(&summary)
        .args(args)
        .current_dir(cwd);
    match spawn_logged(command, dir, ("stdout.txt", "stderr.txt")) {
        Ok(child) => child,
        Err(e) => panic!("the crawl binary: {e}"),
    }
}

/// A crawl that ended in an error (it crawled nothing, or part of the site) fails the benchmark
/// with what it said, rather than giving a row of zeros.
fn refuse_a_failed_crawl(child: &mut Child, setup: Setup, dir: &Path) {
    let status = child.wait();
    if status.as_ref().is_ok_and(|s| s.success()) {
        return;
    }
    let said = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
    let tail: Vec<&str> = said.lines().rev().take(5).collect();
    panic!(
        "the {} crawl failed ({status:?}); the end of its output:\n{}",
        setup.name(),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
}

/// Waits for the crawler to end, reading its CPU time and peak memory as it goes: (CPU seconds,
/// peak resident bytes, seconds it ran).
async fn follow(child: &mut Child) -> (f64, u64, f64) {
    let pid = child.id();
    let started = Instant::now();
    let (mut cpu, mut peak) = (0.0, 0);
    while matches!(child.try_wait(), Ok(None)) {
        cpu = cpu_seconds(pid).max(cpu);
        peak = peak_rss_bytes(pid).max(peak);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (cpu, peak, started.elapsed().as_secs_f64())
}

/// What the site's request log says of the crawl: pages requested, distinct URLs, URLs requested
/// more than once, the smallest gap between two requests to one host, the whole span, and pages/s
/// between the 10th and the 90th percentile of the requests.
fn judge(site: &Site) -> Requests {
    let mut requests: Vec<_> = site
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .collect();
    requests.sort_by_key(|r| r.at);
    let mut by_host: std::collections::BTreeMap<&str, Vec<Instant>> = Default::default();
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for request in &requests {
        by_host.entry(&request.host).or_default().push(request.at);
        *counts.entry(&request.url).or_default() += 1;
    }
    let smallest_gap = by_host
        .values()
        .flat_map(|times| times.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()))
        .fold(None, |min: Option<f64>, gap| {
            Some(min.map_or(gap, |m| m.min(gap)))
        });
    let n = requests.len();
    let span = |a: usize, b: usize| (requests[b].at - requests[a].at).as_secs_f64();
    let (steady, whole) = if n >= 20 {
        let (a, b) = (n / 10, n * 9 / 10);
        ((b - a) as f64 / span(a, b).max(1e-9), Some(span(0, n - 1)))
    } else {
        (0.0, None)
    };
    Requests {
        pages: n as u64,
        distinct: counts.len() as u64,
        fetched_twice: counts.values().filter(|c| **c > 1).count() as u64,
        smallest_gap_seconds: smallest_gap,
        span_seconds: whole,
        steady_pages_per_second: steady,
    }
}

/// Deletes the indices of run `id` (its queues index's helper included), and the archetype's.
async fn delete_indices(id: &str) {
    let client = engine_client();
    let path = format!("/bench-asgiven-*-{id},bench-asgiven-*-{id}-*,status,content");
    let query = [("ignore_unavailable", "true")];
    let _ = client.request(Method::Delete, &path, &query, None).await;
}
