//! URLFrontier servers side by side under the same client load: squall's server (`squall-frontier`,
//! in this process) on the embedded frontier and on the queue frontier, and crawler-commons'
//! reference service (RocksDB backend, its own JVM process, from the jars that
//! `URLFRONTIER_REFERENCE_SERVICE_JAR` and `URLFRONTIER_REFERENCE_CLIENT_JAR` name, built by hand: squall
//! holds no recipe for it; left out, saying why, when they are not set).
//!
//! Each run starts each server fresh and, after a warm-up crawl of 1,000 URLs through both phases,
//! measures on a crawl of `SQUALL_BENCH_UFS_URLS` URLs (20,000; quick 2,000) over
//! `SQUALL_BENCH_UFS_HOSTS` hosts (200; quick 20), with `SQUALL_BENCH_UFS_CLIENTS` clients (4) on
//! loopback gRPC:
//!
//! - **put**: PutURLs of the new URLs, 500 a call, each call until its acks came;
//! - **cycle**: GetURLs (50 queues of up to 50 URLs, held 600 s) then PutURLs of each URL as known,
//!   never due again, until every URL is back.
//!
//! Equal budgets: the same URLs, clients and calls; no politeness delay at either server (SetDelay
//! 0 on both; the reference still hands a queue out at most once in a clock second, its design).
//! The figures are URLs per second (first call to last answer) and each kind of call's p50 and p99,
//! over `SQUALL_BENCH_RUNS` runs (3) with the servers in mirrored order (A B C, C B A, ...), after
//! `SQUALL_BENCH_UFS_WARM_UPS` warm-up rounds of every server (3; none with `--quick`), not
//! recorded: the engine node is a long-lived service, and one started for this benchmark alone has
//! a cold JIT (on a fresh node the queue frontier's first round put 3,400-3,800 URLs/s, the
//! fourth 10,000-12,000), where the whole `scripts/bench` finds it warm from the sections before.
//! For the queue frontier the engine's CPU milliseconds per 1,000 URLs of each phase are read from
//! /proc when the node runs on this machine (it does nothing else meanwhile; its own `_nodes/stats`
//! caches process CPU for a second, as long as a phase). The
//! JSON gives each candidate's median, min and max and the ratios to the reference, and what the
//! reference's jars were built from (`URLFRONTIER_REFERENCE_SOURCE`, e.g.
//! `crawler-commons/url-frontier 69399d2`).

mod common;

#[path = "../urlfrontier/tests/support/reference.rs"]
mod reference;

use common::urlfrontier_load as load;
use common::{Spread, engine_client, engine_url, env_or, print_result, process, quick};
use squall::config::ConfigBuilder;
use squall_bench_schema::Run;
use squall_bench_schema::urlfrontier::{Latency, ServerRatios, ServerRuns, UrlFrontierServers};
use squall_engine::client::Method;
use squall_urlfrontier::proto::QueueDelayParams;
use squall_urlfrontier::proto::url_frontier_client::UrlFrontierClient;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    Embedded,
    Queue,
    Reference,
}

impl Server {
    fn name(self) -> &'static str {
        match self {
            Server::Embedded => "squall-embedded",
            Server::Queue => "squall-queue",
            Server::Reference => "reference-rocksdb",
        }
    }
}

struct Plan {
    urls: usize,
    hosts: usize,
    clients: usize,
    runs: usize,
}

/// A server running for one run, and what to stop or delete afterwards.
enum Running {
    Squall(
        squall_urlfrontier::server::RunningServer,
        Option<tempfile::TempDir>,
        Vec<String>,
    ),
    Reference(reference::ServerProcess, tempfile::TempDir),
}

async fn start(server: Server, run: usize) -> anyhow::Result<(Running, String)> {
    let base = ConfigBuilder::new()
        .set("http.agent.name=squall-bench")?
        .set("fetcher.server.delay=0")?
        .set("spout.min.delay.queries=50")?;
    let listen = || tokio::net::TcpListener::bind("127.0.0.1:0");
    match server {
        Server::Embedded => {
            let dir = tempfile::tempdir()?;
            let config = base
                .set_text("frontier.path", &dir.path().display().to_string())?
                .build()?;
            let running = squall_urlfrontier::server::start(config, listen().await?).await?;
            let address = format!("http://{}", running.addr());
            Ok((Running::Squall(running, Some(dir), Vec::new()), address))
        }
        Server::Queue => {
            let stamp = format!(
                "{}-{run}-{}",
                std::process::id(),
                chrono::Utc::now().timestamp_millis()
            );
            let prefix = format!("bench-ufs-{stamp}");
            let config = base
                .set_text("frontier.kind", "opensearch")?
                .set_text("es.status.addresses", &engine_url())?
                .set_text("es.status.spout", "queue")?
                .set_text("es.status.index.name", &format!("{prefix}-urls"))?
                .set_text("es.queues.index.name", &format!("{prefix}-queues"))?
                .build()?;
            let running = squall_urlfrontier::server::start(config, listen().await?).await?;
            let address = format!("http://{}", running.addr());
            Ok((
                Running::Squall(running, None, vec![format!("{prefix}-*")]),
                address,
            ))
        }
        Server::Reference => {
            let dir = tempfile::tempdir()?;
            let process = reference::start_reference(&dir.path().join("rocksdb"));
            let address = format!("http://127.0.0.1:{}", process.port);
            Ok((Running::Reference(process, dir), address))
        }
    }
}

async fn stop(running: Running) {
    match running {
        Running::Squall(server, _dir, indices) => {
            server.shutdown().await;
            let client = reqwest::Client::new();
            for pattern in indices {
                let _ = client
                    .delete(format!("{}/{pattern}", engine_url()))
                    .send()
                    .await;
            }
        }
        Running::Reference(process, _dir) => drop(process),
    }
}

/// One run of one server: its two phases, and the engine's CPU milliseconds per 1,000 URLs in
/// each (for the server on the queue frontier, whose engine does nothing else meanwhile).
struct Measured {
    put: load::Phase,
    cycle: load::Phase,
    engine_cpu_per_1000: Option<(f64, f64)>,
}

/// One run of one server: its put and cycle phases on a fresh crawl, after a warm-up.
async fn measure(server: Server, run: usize, plan: &Plan) -> anyhow::Result<Measured> {
    let (running, address) = start(server, run).await?;
    let mut client = UrlFrontierClient::connect(address.clone()).await?;
    client
        .set_delay(QueueDelayParams {
            key: String::new(),
            delay_requestable: 0,
            crawl_id: String::new(),
            local: false,
        })
        .await?;
    load::put_new(&address, "warm", (1_000, 10, plan.clients)).await?;
    load::cycle(&address, "warm", 1_000, plan.clients).await?;
    // The node's own `_nodes/stats` caches its process CPU for a second, as long as a phase
    // here: the node's process is read from /proc instead, when it runs on this machine.
    let engine_pid = match server {
        Server::Queue => local_engine_pid().await,
        _ => None,
    };
    let engine_cpu = || engine_pid.map(process::cpu_seconds);
    let before = engine_cpu();
    let put = load::put_new(&address, "bench", (plan.urls, plan.hosts, plan.clients)).await?;
    let between = engine_cpu();
    let cycle = load::cycle(&address, "bench", plan.urls, plan.clients).await?;
    let after = engine_cpu();
    stop(running).await;
    let thousands = plan.urls as f64 / 1_000.0;
    let engine_cpu_per_1000 = match (before, between, after) {
        (Some(before), Some(between), Some(after)) => Some((
            (between - before) * 1_000.0 / thousands,
            (after - between) * 1_000.0 / thousands,
        )),
        _ => None,
    };
    Ok(Measured {
        put,
        cycle,
        engine_cpu_per_1000,
    })
}

/// The process id of the engine node at [`engine_url`] when it runs on this machine (a loopback
/// address, and /proc shows an OpenSearch or Elasticsearch process of that id); `None` otherwise.
async fn local_engine_pid() -> Option<u32> {
    let url = engine_url();
    if !(url.contains("://127.") || url.contains("://localhost")) {
        return None;
    }
    let answer = engine_client()
        .request(
            Method::Get,
            "/_nodes/_local/process",
            &[("filter_path", "nodes.*.process.id")],
            None,
        )
        .await
        .ok()?;
    let node = answer["nodes"].as_object()?.values().next()?;
    let pid = u32::try_from(node["process"]["id"].as_u64()?).ok()?;
    let command = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let command = String::from_utf8_lossy(&command);
    (command.contains("opensearch") || command.contains("elasticsearch")).then_some(pid)
}

#[derive(Default)]
struct Figures {
    put: Vec<f64>,
    cycle: Vec<f64>,
    engine_put: Vec<f64>,
    engine_cycle: Vec<f64>,
    calls: load::Calls,
    put_calls: Vec<f64>,
}

fn summary(server: Server, figures: &Figures) -> ServerRuns {
    let q = |values: &[f64]| {
        Some(Latency {
            p50_ms: load::quantile(values, 0.5),
            p99_ms: load::quantile(values, 0.99),
        })
    };
    ServerRuns {
        server: server.name().to_string(),
        put_urls_per_s: Some(Spread::of(&figures.put)),
        cycle_urls_per_s: Some(Spread::of(&figures.cycle)),
        put_new_call: q(&figures.put_calls),
        cycle_get_call: q(&figures.calls.get),
        cycle_put_call: q(&figures.calls.put),
        engine_cpu_ms_per_1000_put: spread_of(&figures.engine_put),
        engine_cpu_ms_per_1000_cycle: spread_of(&figures.engine_cycle),
    }
}

/// The spread of `values`; `None` when there are none.
fn spread_of(values: &[f64]) -> Option<Spread> {
    (!values.is_empty()).then(|| Spread::of(values))
}

/// What the reference's jars were built from, as `URLFRONTIER_REFERENCE_SOURCE` says (for the
/// report); `None` when the reference was left out.
fn reference_source(skipped: &Option<String>) -> Option<String> {
    if skipped.is_some() {
        return None;
    }
    Some(std::env::var("URLFRONTIER_REFERENCE_SOURCE").unwrap_or_else(|_| "unnamed jars".into()))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let quick = quick();
    let plan = Plan {
        urls: env_or("UFS_URLS", if quick { 2_000 } else { 20_000 }),
        hosts: env_or("UFS_HOSTS", if quick { 20 } else { 200 }),
        clients: env_or("UFS_CLIENTS", 4),
        runs: if quick { 1 } else { env_or("RUNS", 3) },
    };
    let mut servers = vec![Server::Embedded, Server::Queue];
    let skipped = reference::locate().err();
    match &skipped {
        None => servers.push(Server::Reference),
        Some(why) => eprintln!("urlfrontier_servers: the reference service is left out: {why}"),
    }
    let warm_ups = if quick { 0 } else { env_or("UFS_WARM_UPS", 3) };
    for round in 0..warm_ups {
        for server in &servers {
            let measured = measure(*server, plan.runs + round, &plan).await?;
            eprintln!(
                "{} warm-up {round} (not recorded): put {:.0} URLs/s, cycle {:.0} URLs/s",
                server.name(),
                measured.put.urls_per_s(),
                measured.cycle.urls_per_s()
            );
        }
    }
    let mut figures: Vec<Figures> = servers.iter().map(|_| Figures::default()).collect();
    for run in 0..plan.runs {
        let mut order: Vec<usize> = (0..servers.len()).collect();
        if run % 2 == 1 {
            order.reverse();
        }
        for index in order {
            let Measured {
                put,
                cycle,
                engine_cpu_per_1000,
            } = measure(servers[index], run, &plan).await?;
            eprintln!(
                "{} run {run}: put {:.0} URLs/s, cycle {:.0} URLs/s",
                servers[index].name(),
                put.urls_per_s(),
                cycle.urls_per_s()
            );
            let f = &mut figures[index];
            f.put.push(put.urls_per_s());
            f.cycle.push(cycle.urls_per_s());
            f.put_calls.extend(put.calls.put);
            f.calls.get.extend(cycle.calls.get);
            f.calls.put.extend(cycle.calls.put);
            if let Some((engine_put, engine_cycle)) = engine_cpu_per_1000 {
                f.engine_put.push(engine_put);
                f.engine_cycle.push(engine_cycle);
            }
        }
    }
    let candidates: Vec<ServerRuns> = servers
        .iter()
        .zip(&figures)
        .map(|(s, f)| summary(*s, f))
        .collect();
    let reference = servers.iter().position(|s| *s == Server::Reference);
    let ratios = reference.map(|r| {
        let median = |values: &[f64]| Spread::of(values).median;
        let (put, cycle) = (median(&figures[r].put), median(&figures[r].cycle));
        ServerRatios {
            embedded_put_to_reference: median(&figures[0].put) / put,
            embedded_cycle_to_reference: median(&figures[0].cycle) / cycle,
            queue_put_to_reference: median(&figures[1].put) / put,
            queue_cycle_to_reference: median(&figures[1].cycle) / cycle,
        }
    });
    print_result(&UrlFrontierServers {
        run: Run::now("urlfrontier_servers"),
        urls: Some(plan.urls as u64),
        hosts: Some(plan.hosts as u64),
        clients: Some(plan.clients as u64),
        runs: Some(plan.runs as u64),
        warm_up_rounds: Some(warm_ups as u64),
        reference_source: reference_source(&skipped),
        reference_left_out: skipped,
        servers: candidates,
        ratios,
    });
    Ok(())
}
