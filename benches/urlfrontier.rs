//! The URLFrontier API's cost: URLs per second through squall's server (GetURLs, then PutURLs of
//! each URL as known) against the same frontier used in process by the spout runner, on the
//! embedded frontier and on the queue frontier.
//!
//! Each run starts from a fresh frontier loaded with `SQUALL_BENCH_UF_URLS` URLs (20,000; quick
//! 2,000) over `SQUALL_BENCH_UF_HOSTS` hosts (200; quick 20), all due (DISCOVERED). Both paths must
//! take every URL out and write it back as FETCHED, never due again, in batches of up to 500:
//!
//! - **In process**: the frontier's spout under `SpoutRunner` (the crawl topology's reader), a
//!   consumer writing the URLs it emits back through the frontier's `StatusStore` and acking them.
//! - **Through the API**: `squall-frontier`'s server in this process over the same kind of frontier,
//!   `SQUALL_BENCH_UF_CLIENTS` clients (4) on loopback gRPC, each looping GetURLs (50 queues of up
//!   to 50 URLs, `delay_requestable` 600 s) and PutURLs of what it got, waiting for the acks.
//!
//! Equal budgets: the same URLs, the same runner settings (`spout.*` defaults but
//! `spout.min.delay.queries` 50 ms), no politeness gap at the server (`fetcher.server.delay` 0), the
//! same batch size. The figure is URLs per second from the first read to the last write; the
//! candidates run in mirrored order (in process, API, API, in process, ...), `SQUALL_BENCH_RUNS`
//! pairs (3), and the JSON gives each one's median, min and max and `ratio_api_to_in_process` (of
//! the medians) per frontier. The queue frontier lives at `SQUALL_BENCH_ES` (fresh indices per run,
//! deleted afterwards).

mod common;

#[path = "urlfrontier/paths.rs"]
mod paths;

use std::time::Duration;

use common::{Spread, engine_url, env_or, print_result, quick};
use squall::config::{ConfigBuilder, CrawlConfig};
use squall::frontier::{QueueReport, StatusWrite};
use squall::model::{CrawlUrl, Status};
use squall_bench_schema::Run;
use squall_bench_schema::urlfrontier::{Frontier, PathRun, UrlFrontier};

/// A frontier the benchmark runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Embedded,
    Queue,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Embedded => "embedded",
            Kind::Queue => "queue",
        }
    }
}

/// A fresh frontier of `kind`: its configuration, and what to delete afterwards.
struct Fresh {
    config: CrawlConfig,
    _dir: Option<tempfile::TempDir>,
    indices: Vec<String>,
}

fn fresh(kind: Kind, run: usize) -> anyhow::Result<Fresh> {
    let base = ConfigBuilder::new()
        .set("http.agent.name=squall-bench")?
        .set("fetcher.server.delay=0")?
        .set("spout.min.delay.queries=50")?
        .set(&format!("status.updater.batch.size={}", paths::BATCH))?;
    match kind {
        Kind::Embedded => {
            let dir = tempfile::tempdir()?;
            let config = base
                .set_text("frontier.path", &dir.path().display().to_string())?
                .build()?;
            Ok(Fresh {
                config,
                _dir: Some(dir),
                indices: Vec::new(),
            })
        }
        Kind::Queue => {
            let stamp = format!(
                "{}-{run}-{}",
                std::process::id(),
                chrono::Utc::now().timestamp_millis()
            );
            let (urls, queues) = (
                format!("bench-uf-urls-{stamp}"),
                format!("bench-uf-queues-{stamp}"),
            );
            let config = base
                .set_text("frontier.kind", "opensearch")?
                .set_text("es.status.addresses", &engine_url())?
                .set_text("es.status.spout", "queue")?
                .set_text("es.status.index.name", &urls)?
                .set_text("es.queues.index.name", &queues)?
                .build()?;
            let workers = format!("{queues}-workers");
            Ok(Fresh {
                config,
                _dir: None,
                indices: vec![urls, queues, workers],
            })
        }
    }
}

/// Loads `urls` due URLs over `hosts` hosts into the frontier.
async fn load(config: &CrawlConfig, urls: usize, hosts: usize) -> anyhow::Result<()> {
    let frontier = squall_engine::setup::open(config).await?;
    let writes: Vec<StatusWrite> = (0..urls)
        .map(|i| {
            let host = format!("h{}.test", i % hosts);
            let url =
                url::Url::parse(&format!("http://{host}/page/{i}")).map_err(anyhow::Error::from)?;
            Ok(StatusWrite {
                url: CrawlUrl::seed(url),
                key: host,
                status: Status::Discovered,
                next_fetch: Some(chrono::Utc::now() - chrono::TimeDelta::seconds(1)),
                queue: QueueReport::default(),
            })
        })
        .collect::<anyhow::Result<_>>()?;
    for chunk in writes.chunks(5_000) {
        for result in frontier.store.store(chunk.to_vec()).await {
            result.map_err(|e| anyhow::anyhow!("loading: {}", e.message()))?;
        }
    }
    frontier
        .store
        .flush()
        .await
        .map_err(|e| anyhow::anyhow!("flush: {}", e.message()))?;
    Ok(())
}

async fn delete(indices: &[String]) {
    let client = reqwest::Client::new();
    for index in indices {
        let _ = client
            .delete(format!("{}/{index}", engine_url()))
            .send()
            .await;
    }
}

/// One run of one path on a fresh frontier: URLs per second.
async fn measure(kind: Kind, api: bool, run: usize, plan: &Plan) -> anyhow::Result<f64> {
    let fresh = fresh(kind, run)?;
    load(&fresh.config, plan.urls, plan.hosts).await?;
    let took = if api {
        paths::through_api(fresh.config.clone(), plan.urls, plan.clients).await
    } else {
        paths::in_process(&fresh.config, plan.urls).await
    };
    delete(&fresh.indices).await;
    let took: Duration = took?;
    Ok(plan.urls as f64 / took.as_secs_f64())
}

struct Plan {
    urls: usize,
    hosts: usize,
    clients: usize,
    runs: usize,
}

async fn frontier_figures(kind: Kind, plan: &Plan) -> anyhow::Result<Frontier> {
    let (mut local, mut remote, mut order) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..plan.runs {
        // Mirrored: in process first on even runs, the API first on odd ones.
        let sequence = if run % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for api in sequence {
            let rate = measure(kind, api, run, plan).await?;
            let name = if api { "api" } else { "in_process" };
            eprintln!("{} run {run}: {name} {rate:.0} URLs/s", kind.name());
            order.push(PathRun {
                run: run as u64,
                path: name.to_string(),
                urls_per_s: rate,
            });
            if api {
                remote.push(rate)
            } else {
                local.push(rate)
            }
        }
    }
    let (local_spread, remote_spread) = (Spread::of(&local), Spread::of(&remote));
    Ok(Frontier {
        frontier: kind.name().to_string(),
        in_process: Some(local_spread),
        api: Some(remote_spread),
        ratio_api_to_in_process: Some(remote_spread.median / local_spread.median),
        runs: order,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let quick = quick();
    let plan = Plan {
        urls: env_or("UF_URLS", if quick { 2_000 } else { 20_000 }),
        hosts: env_or("UF_HOSTS", if quick { 20 } else { 200 }),
        clients: env_or("UF_CLIENTS", 4),
        runs: if quick { 1 } else { env_or("RUNS", 3) },
    };
    let mut frontiers = Vec::new();
    for kind in [Kind::Embedded, Kind::Queue] {
        frontiers.push(frontier_figures(kind, &plan).await?);
    }
    print_result(&UrlFrontier {
        run: Run::now("urlfrontier"),
        urls: Some(plan.urls as u64),
        hosts: Some(plan.hosts as u64),
        clients: Some(plan.clients as u64),
        batch: Some(paths::BATCH as u64),
        runs: Some(plan.runs as u64),
        engine: Some(engine_url()),
        frontiers,
    });
    Ok(())
}
