//! Helpers shared by the benchmark commands: repeated, interleaved runs and their median.

#![allow(dead_code)]

#[allow(unused_imports)] // (each benchmark binary uses some of this module)
pub use squall_bench_schema::Spread;

/// Repetitions: `SQUALL_BENCH_RUNS`, default 5 (CI's quick smoke run sets 1).
pub fn runs() -> usize {
    std::env::var("SQUALL_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(5)
}

/// Prints a benchmark's result, the JSON `scripts/bench` stores and the report reads (typed in
/// `squall-bench-schema`).
pub fn print_result<T: serde::Serialize>(result: &T) {
    match serde_json::to_string_pretty(result) {
        Ok(text) => println!("{text}"),
        Err(error) => panic!("the result does not serialize: {error}"),
    }
}

/// A span of time in seconds, to the microsecond (`i64::MAX` µs for one too long for that).
pub fn seconds(d: chrono::TimeDelta) -> f64 {
    d.num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6
}

/// Whether to run a small version (`SQUALL_BENCH_QUICK=1`), for smoke tests.
pub fn quick() -> bool {
    std::env::var("SQUALL_BENCH_QUICK").is_ok_and(|v| v == "1")
}

pub mod engine_stats;
pub mod fetch_driver;
pub mod frontier_data;
pub mod kept_frontier;
pub mod process;
pub mod raw_bulk;
pub mod urlfrontier_load;

/// Arguments of the crawl binary: shared with the integration tests.
#[path = "../../tests/support/binary.rs"]
pub mod binary;
/// The crawl binary's fetch logs, read back: shared with the integration tests.
#[path = "../../tests/support/fetch_log.rs"]
pub mod fetch_log;

/// In-process crawls of a test site: shared with the integration tests.
#[path = "../../tests/support/crawler.rs"]
pub mod crawler;

/// The engine address of the benchmarks that need one: `SQUALL_BENCH_ES`, default the local node.
pub fn engine_url() -> String {
    std::env::var("SQUALL_BENCH_ES").unwrap_or_else(|_| "http://127.0.0.1:9200".to_string())
}

/// A client with a long timeout (loading and `_update_by_query` of millions of documents).
pub fn engine_client() -> squall_engine::client::EsClient {
    engine_client_at(&engine_url())
}

/// A client of the engine at `url`, with the long timeout of [`engine_client`].
pub fn engine_client_at(url: &str) -> squall_engine::client::EsClient {
    let mut settings = match squall_engine::client::ConnectionConfig::new(url) {
        Ok(settings) => settings,
        Err(e) => panic!("{e}"),
    };
    settings.timeout = std::time::Duration::from_secs(300);
    match squall_engine::client::EsClient::new(settings) {
        Ok(client) => client,
        Err(e) => panic!("{e}"),
    }
}

/// The engine at `url` as it names itself: "OpenSearch 3.9.0", "Elasticsearch 9.5.3"; `None`
/// when it does not answer.
pub async fn describe(url: &str) -> Option<String> {
    let answer = engine_client_at(url)
        .request(squall_engine::client::Method::Get, "/", &[], None)
        .await
        .ok()?;
    let version = answer["version"]["number"].as_str()?;
    let name = match answer["version"]["distribution"].as_str() {
        Some("opensearch") => "OpenSearch",
        _ => "Elasticsearch",
    };
    Some(format!("{name} {version}"))
}

/// The value of `SQUALL_BENCH_<name>` parsed, or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(format!("SQUALL_BENCH_{name}"))
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The crawl binary: `SQUALL_BENCH_CRAWL_BIN`, else `examples/crawl` of this build's profile.
pub fn crawl_binary() -> std::path::PathBuf {
    if let Ok(path) = std::env::var("SQUALL_BENCH_CRAWL_BIN") {
        return std::path::PathBuf::from(path);
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => panic!("the benchmark's own path: {e}"),
    };
    // target/<profile>/deps/<bench>-<hash>
    let Some(profile_dir) = exe.parent().and_then(std::path::Path::parent) else {
        panic!("no target directory above {}", exe.display());
    };
    let binary = profile_dir.join("examples").join("crawl");
    if !binary.exists() {
        panic!(
            "{} is missing: build it first (`cargo build --release --example crawl`, or without \
             --release for a debug bench run; scripts/bench does), or set SQUALL_BENCH_CRAWL_BIN",
            binary.display()
        );
    }
    binary
}

/// Starts the generated site with `hosts` hosts of `pages_per_host` pages, every host in scope (no
/// outside hosts) and no robots.txt rules.
pub async fn start_closed_site(hosts: usize, pages_per_host: usize) -> squall_testsite::Site {
    let spec = squall_testsite::SiteSpec {
        hosts,
        pages_per_host,
        outside_hosts: 0,
        robots_host: None,
        ..squall_testsite::SiteSpec::default()
    };
    match squall_testsite::Site::start(spec).await {
        Ok(site) => site,
        Err(e) => panic!("site: {e}"),
    }
}

/// The directory `name` under the system's temporary directory, emptied (of an earlier run).
pub fn fresh_temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("{}: {e}", dir.display());
    }
    dir
}

/// Starts crawl process `p`: `binary` with `args`, no input, its output in `stdout-{p}.txt` and
/// `stderr-{p}.txt` of `dir`.
pub fn spawn_crawler(
    binary: &std::path::Path,
    args: &[String],
    dir: &std::path::Path,
    p: usize,
) -> std::process::Child {
    let mut command = std::process::Command::new(binary);
    command.args(args);
    let outputs = (format!("stdout-{p}.txt"), format!("stderr-{p}.txt"));
    match spawn_logged(command, dir, (&outputs.0, &outputs.1)) {
        Ok(child) => child,
        Err(e) => panic!("starting {}: {e}", binary.display()),
    }
}

/// Starts `command` with no input, its output in the files `stdout` and `stderr` of `dir` (a file
/// that cannot be created stops the benchmark); the error of a command that does not start.
pub fn spawn_logged(
    mut command: std::process::Command,
    dir: &std::path::Path,
    (stdout, stderr): (&str, &str),
) -> std::io::Result<std::process::Child> {
    use std::process::Stdio;
    let output = |name: &str| match std::fs::File::create(dir.join(name)) {
        Ok(file) => Stdio::from(file),
        Err(e) => panic!("{}: {e}", dir.display()),
    };
    command
        .stdin(Stdio::null())
        .stdout(output(stdout))
        .stderr(output(stderr))
        .spawn()
}
