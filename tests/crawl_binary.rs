//! The crawl binary (the `squall-crawler` crate, run as the example `crawl`) as a user runs it:
//! interrupted and resumed, and given bad input. `cargo test` builds the examples, so the binary
//! sits beside the test executables.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support;
use support::binary::{
    crawl_binary, lines, queue_frontier_args, resolve_args, set_args, site_args,
};

use squall_testsite::{Site, SiteSpec};

fn common_args(frontier: &std::path::Path, fetch_log: &std::path::Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--frontier-path",
        &frontier.display().to_string(),
        "--fetch-log",
        &fetch_log.display().to_string(),
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(set_args(&[
        "http.agent.name=squall-test",
        "fetcher.server.delay=0.05",
        "spout.min.delay.queries=100",
        &SiteSpec::exclude_outside_hosts(),
    ]));
    args.push("--until-idle".to_string());
    args
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_by_a_signal_and_started_again_it_completes_without_refetching() {
    let site = Site::start(SiteSpec::default()).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier");
    let fetch_log = dir.path().join("fetch.jsonl");
    let mut args = common_args(&frontier, &fetch_log);
    args.extend(site_args(&site));

    // First run: interrupt it once a good part of the site is fetched.
    let mut child = Command::new(crawl_binary())
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the crawl");
    let started = Instant::now();
    while lines(&fetch_log) < 300 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the crawl made no progress"
        );
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the crawl ended before the signal"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let first = child.wait_with_output().expect("first run output");
    let first_stdout = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "first run: {first:?}");
    assert!(
        first_stdout.contains("crawl stopped (Requested)"),
        "{first_stdout}"
    );
    let after_first = lines(&fetch_log);
    let reachable = site.expected().reachable_in_scope_urls().len();
    assert!(
        after_first < reachable,
        "the first run was not interrupted ({after_first} fetches)"
    );

    // Second run, same frontier: it continues to the end.
    let second = run_to_end(args.clone()).await;
    let second_stdout = String::from_utf8_lossy(&second.stdout);
    assert!(second.status.success(), "second run: {second:?}");
    assert!(
        second_stdout.contains("crawl stopped (Idle)"),
        "{second_stdout}"
    );

    // Across both runs: every reachable page requested exactly once, nothing out of scope.
    let problems = site.expected().check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");
    // Politeness held across the restart: the resumed crawl's first fetch of each host started
    // at least fetcher.server.delay (0.05 s) after the interrupted run's last fetch of it ended.
    let impolite = impolite_after_restart(&fetch_log, after_first, Duration::from_millis(50));
    assert!(impolite.is_empty(), "{impolite:#?}");
    let log = std::fs::read_to_string(&fetch_log).expect("fetch log");
    let mut urls: Vec<String> = log
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            for field in ["url", "key", "started", "finished", "bytes"] {
                assert!(entry.get(field).is_some(), "{field} missing in {line}");
            }
            entry["url"].as_str().expect("url").to_string()
        })
        .collect();
    assert_eq!(urls.len(), reachable);
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), reachable, "a page was fetched twice");
    site.shutdown().await;
}

/// Interrupted (SIGINT) while every host is being fetched 1 s apart and resumed at once on the
/// same embedded frontier: the resumed crawl's first fetch of each host keeps the delay from the
/// interrupted run's last one (the frontier remembers when each host was last fetched).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn politeness_holds_across_an_interrupted_and_resumed_crawl() {
    let site = support::crawler::start_site(4, 8).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let fetch_log = dir.path().join("fetch.jsonl");
    let mut args = common_args(&dir.path().join("frontier"), &fetch_log);
    args.extend(set_args(&["fetcher.server.delay=1"]));
    args.extend(site_args(&site));
    let mut child = Command::new(crawl_binary())
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the crawl");
    let started = Instant::now();
    // Two rounds over the hosts: each host has just been fetched when the signal comes.
    while lines(&fetch_log) < 8 {
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
        assert!(child.try_wait().expect("wait").is_none(), "ended early");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    assert!(child.wait().expect("first run").success());
    let restart_line = lines(&fetch_log);
    let second = run_to_end(args).await;
    assert!(second.status.success(), "second run: {second:?}");
    assert!(
        lines(&fetch_log) > restart_line,
        "the resumed run fetched nothing"
    );
    let impolite = impolite_after_restart(&fetch_log, restart_line, Duration::from_secs(1));
    assert!(impolite.is_empty(), "{impolite:#?}");
    site.shutdown().await;
}

/// The hosts whose first fetch after the restart (the log's lines from `restart_line` on) started
/// less than `delay` after their last fetch before it ended, with the two lines. The log's times
/// are cut to milliseconds, so a gap one millisecond short is allowed.
fn impolite_after_restart(
    log: &std::path::Path,
    restart_line: usize,
    delay: Duration,
) -> Vec<String> {
    let (fetches, problems) = support::fetch_log::read_log(0, log);
    assert!(problems.is_empty(), "{problems:#?}");
    let (before, after) = fetches.split_at(restart_line.min(fetches.len()));
    let allowed =
        chrono::TimeDelta::from_std(delay).expect("delay") - chrono::TimeDelta::milliseconds(1);
    let mut impolite = Vec::new();
    for first_after in support::fetch_log::by_host(after)
        .values()
        .filter_map(|list| list.first())
    {
        let last_before = before
            .iter()
            .filter(|f| f.key == first_after.key)
            .max_by_key(|f| f.finished);
        if let Some(last) = last_before
            && first_after.started - last.finished < allowed
        {
            impolite.push(format!("{}\n  then {}", last.line, first_after.line));
        }
    }
    impolite
}

/// Runs the crawl binary with `args` to its end, on a blocking thread.
async fn run_to_end(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || Command::new(crawl_binary()).args(&args).output())
        .await
        .expect("join")
        .expect("run the crawl binary")
}

fn run(args: &[&str]) -> Output {
    Command::new(crawl_binary())
        .args(args)
        .output()
        .expect("run the crawl binary")
}

#[test]
fn an_unknown_config_key_is_named() {
    let output = run(&["--set", "fetcher.server.dealy=2", "--until-idle"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown config key `fetcher.server.dealy`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean `fetcher.server.delay`"),
        "{stderr}"
    );
}

#[test]
fn a_mistyped_config_value_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("conf.yaml");
    std::fs::write(&config, "fetcher.threads.per.queue: lots\n").expect("write config");
    let output = run(&["--config", &config.display().to_string(), "--until-idle"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("fetcher.threads.per.queue"), "{stderr}");
}

#[test]
fn an_unusable_frontier_path_is_named() {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    let path = file.path().display().to_string();
    let output = run(&[
        "--set",
        "http.agent.name=t",
        "--frontier-path",
        &path,
        "--until-idle",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&path) && stderr.contains("unusable"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_frontier_is_named_and_left_as_it_is() {
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier");
    {
        let store = squall::frontier::EmbeddedFrontier::open(&frontier).expect("open");
        let writes: Vec<_> = (0..500)
            .map(|i| squall::frontier::StatusWrite {
                url: squall::model::CrawlUrl::seed(
                    url::Url::parse(&format!("http://h{}.test/{i}", i % 20)).expect("url"),
                ),
                key: format!("h{}.test", i % 20),
                status: squall::model::Status::Discovered,
                next_fetch: Some(chrono::Utc::now()),
                queue: Default::default(),
            })
            .collect();
        use squall::frontier::StatusStore;
        assert!(store.store(writes).await.iter().all(Result::is_ok));
    }
    let file = frontier.join("frontier.redb");
    let mut bytes = std::fs::read(&file).expect("read");
    let len = bytes.len();
    bytes[len / 2..len / 2 + 4096].fill(0);
    std::fs::write(&file, &bytes).expect("damage it");
    let output = run(&[
        "--set",
        "http.agent.name=t",
        "--frontier-path",
        &frontier.display().to_string(),
        "--until-idle",
        "http://h1.test/",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&*file.to_string_lossy()) && stderr.contains("is damaged"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&file).expect("still there"),
        bytes,
        "the file was changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_valid_seed_and_an_empty_frontier_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier").display().to_string();
    // Without --until-idle too: the crawl must end, not wait for URLs that never come (the
    // --max-duration only bounds the test if it does not).
    for until_idle in [true, false] {
        let mut args = vec![
            "--set",
            "http.agent.name=t",
            "--frontier-path",
            &frontier,
            "--max-duration",
            "60",
            "not a url",
            "ftp://files.test/a",
        ];
        if until_idle {
            args.push("--until-idle");
        }
        let args: Vec<String> = args.into_iter().map(str::to_string).collect();
        let output = run_to_end(args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("skipping seed \"not a url\""), "{stderr}");
        assert!(
            stderr.contains("nothing to crawl: none of the 2 seeds given is valid"),
            "{stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frontier_that_holds_urls_resumes_without_a_valid_seed() {
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier");
    let fetch_log = dir.path().join("fetch.jsonl");
    let mut first = common_args(&frontier, &fetch_log);
    first.extend(["--max-pages".to_string(), "1".to_string()]);
    first.extend(site_args(&site));
    let output = run_to_end(first).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The same frontier, and only a seed that is not valid: the URLs it holds are crawled.
    let mut again = common_args(&frontier, &fetch_log);
    again.push("not a url".to_string());
    again.extend(resolve_args(&site));
    let output = run_to_end(again).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("nothing to crawl"), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("crawl stopped (Idle)"), "{stdout}");
    let problems = site.expected().check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_seed_is_reported_and_the_rest_go_on() {
    let site = Site::start(SiteSpec::small()).await.expect("site");
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier");
    let fetch_log = dir.path().join("fetch.jsonl");
    let mut args = common_args(&frontier, &fetch_log);
    args.push("http://exa mple.test/".to_string());
    args.push("not a url".to_string());
    args.extend(site_args(&site));
    let output = run_to_end(args).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("skipping seed \"http://exa mple.test/\""),
        "{stderr}"
    );
    assert!(stderr.contains("skipping seed \"not a url\""), "{stderr}");
    let problems = site.expected().check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_into_opensearch_with_each_spout() {
    let engine = support::opensearch::client().await;
    for spout in ["aggregation", "collapsing", "hybrid"] {
        let site = support::crawler::start_site(4, 10).await;
        let index = support::opensearch::unique_index("binary");
        let dir = tempfile::tempdir().expect("temp dir");
        let fetch_log = dir.path().join("fetch.jsonl");
        let mut args = common_args(&dir.path().join("unused"), &fetch_log);
        args.extend(
            [
                "--frontier",
                "opensearch",
                "--es-url",
                &support::opensearch::base_url(),
                "--es-index",
                &index,
                "--es-shards",
                "2",
                "--es-replicas",
                "0",
                "--spout",
                spout,
                "--max-duration",
                "120",
            ]
            .map(str::to_string),
        );
        args.extend(site_args(&site));
        let output = run_to_end(args).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{spout}: {stderr}");
        assert!(stdout.contains("crawl stopped (Idle)"), "{spout}: {stdout}");
        let problems = site.expected().check_requests(&site.requests());
        assert!(problems.is_empty(), "{spout}: {problems:#?}");
        assert_eq!(
            lines(&fetch_log),
            site.expected().reachable_in_scope_urls().len()
        );
        support::opensearch::delete_index(&engine, &index).await;
        site.shutdown().await;
    }
}

/// Fetch-log entries: (url, key, started, finished).
fn fetch_entries(path: &std::path::Path) -> Vec<(String, String, String, String)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .map(|e| {
            let field = |name: &str| e[name].as_str().unwrap_or_default().to_string();
            (
                field("url"),
                field("key"),
                field("started"),
                field("finished"),
            )
        })
        .collect()
}

/// Runs `processes` crawl binaries on one queue frontier; kills one with SIGKILL after `kill_after`
/// fetches when asked. Returns the fetch logs and the site.
async fn queue_crawl(
    processes: usize,
    kill_after: Option<usize>,
) -> (Vec<PathBuf>, Site, tempfile::TempDir) {
    let site = support::crawler::start_site(9, 15).await;
    let urls = support::opensearch::unique_index("q-urls");
    let queues = support::opensearch::unique_index("q-queues");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut children = Vec::new();
    let mut logs = Vec::new();
    for p in 0..processes {
        let log = dir.path().join(format!("fetch-{p}.jsonl"));
        let mut args = common_args(&dir.path().join("unused"), &log);
        args.extend(queue_frontier_args(
            &support::opensearch::base_url(),
            &urls,
            &queues,
            (2, 0),
            &format!("crawler-{p}"),
        ));
        args.extend(
            [
                "--lease-ttl",
                "5",
                "--set",
                "frontier.max.buckets=3",
                "--max-duration",
                "180",
            ]
            .map(str::to_string),
        );
        args.extend(site_args(&site));
        children.push(
            Command::new(crawl_binary())
                .args(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a crawler"),
        );
        logs.push(log);
    }
    if let Some(after) = kill_after {
        let started = Instant::now();
        while logs.iter().map(|l| lines(l)).sum::<usize>() < after {
            assert!(started.elapsed() < Duration::from_secs(120), "no progress");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let victim = &mut children[1];
        victim.kill().expect("SIGKILL");
        let _ = victim.wait();
    }
    for (p, child) in children.into_iter().enumerate() {
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .expect("join")
            .expect("wait");
        if kill_after.is_some() && p == 1 {
            continue;
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "crawler {p}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("crawl stopped (Idle)"),
            "crawler {p}: {stdout}"
        );
    }
    let engine = support::opensearch::client().await;
    support::opensearch::delete_index(&engine, &urls).await;
    support::opensearch::delete_index(&engine, &queues).await;
    (logs, site, dir)
}

/// No two fetches of one host, from any process, overlap in time.
fn assert_no_host_overlap(logs: &[PathBuf]) {
    let mut by_host: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for log in logs {
        for (_, key, started, finished) in fetch_entries(log) {
            by_host.entry(key).or_default().push((started, finished));
        }
    }
    for (host, mut spans) in by_host {
        spans.sort();
        for pair in spans.windows(2) {
            // RFC 3339 UTC with milliseconds sorts as text.
            assert!(
                pair[1].0 >= pair[0].1,
                "{host} fetched twice at once: {pair:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_share_one_queue_frontier() {
    let _engine = support::opensearch::client().await;
    let (logs, site, _dir) = queue_crawl(3, None).await;
    let problems = site.expected().check_requests(&site.requests());
    assert!(problems.is_empty(), "{problems:#?}");
    let per_process: Vec<usize> = logs.iter().map(|l| lines(l)).collect();
    assert_eq!(
        per_process.iter().sum::<usize>(),
        site.expected().reachable_in_scope_urls().len()
    );
    assert!(
        per_process.iter().filter(|n| **n > 0).count() >= 2,
        "the work was shared: {per_process:?}"
    );
    assert_no_host_overlap(&logs);
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_process_loses_nothing() {
    let _engine = support::opensearch::client().await;
    let (logs, site, _dir) = queue_crawl(3, Some(40)).await;
    let never: Vec<String> = site
        .expected()
        .check_requests(&site.requests())
        .into_iter()
        // URLs the killed process had in flight are fetched again by the others: allowed.
        .filter(|p| !p.starts_with("requested "))
        .collect();
    assert!(never.is_empty(), "{never:#?}");
    assert_no_host_overlap(&logs);
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renders_a_javascript_site_with_the_browser_config() {
    use squall_testsite::app::{AppSite, AppSpec};
    let site = AppSite::start(AppSpec::small()).await.expect("app site");
    let dir = tempfile::tempdir().expect("temp dir");
    let fetch_log = dir.path().join("fetch.jsonl");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/browser-conf.yaml");
    let mut args = common_args(&dir.path().join("frontier"), &fetch_log);
    args.extend(["--config".to_string(), config.to_string()]);
    args.extend(set_args(&[
        "browser.paging.click='#more'",
        "browser.settle.idle=0.3",
    ]));
    for host in site.host_names() {
        args.extend([
            "--resolve".to_string(),
            format!("{host}:{}", site.addr().ip()),
        ]);
    }
    args.extend(site.seeds());
    let output = run_to_end(args).await;
    assert!(output.status.success(), "{output:?}");
    let log = std::fs::read_to_string(&fetch_log).expect("fetch log");
    let entries: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let fetched: std::collections::BTreeSet<&str> = entries
        .iter()
        .filter(|e| e["http_status"] == 200 && e["protocol"] == "browser")
        .filter_map(|e| e["url"].as_str())
        .collect();
    for url in site.expected().post_urls() {
        assert!(fetched.contains(url.as_str()), "{url} not rendered: {log}");
    }
    site.shutdown().await;
}

/// A crawl into an index behind a TLS gate (a CA made here, an API key checked on every request)
/// with the key in the environment, named by `${ENV-...}` in a configuration file: `key` is what
/// the environment holds. The output, and the gate's counts.
async fn crawl_through_a_tls_gate(key: &str) -> (Output, squall_testsite::tls::TlsGate) {
    use squall_testsite::tls::{GateOptions, TestCa, TlsGate};
    let engine = support::opensearch::client().await;
    let ca = TestCa::new("squall crawl test CA");
    let gate = TlsGate::start(GateOptions {
        upstream: support::opensearch::base_url(),
        server: ca.server_identity(&["127.0.0.1"]),
        api_key: Some(("crawler".to_string(), "right-secret-1f3a".to_string())),
        client_ca_pem: None,
    })
    .await;
    let site = support::crawler::start_site(3, 6).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let conf = dir.path().join("secure-conf.yaml");
    let ca_file = ca.write_pem(dir.path(), "ca.pem");
    std::fs::write(
        &conf,
        format!(
            "es.api.key: \"${{ENV-SQUALL_TEST_ES_API_KEY}}\"\nes.tls.ca.file: {}\n",
            ca_file.display()
        ),
    )
    .expect("write the configuration");
    let index = support::opensearch::unique_index("binary-tls");
    let fetch_log = dir.path().join("fetch.jsonl");
    let mut args = common_args(&dir.path().join("unused"), &fetch_log);
    args.extend(
        [
            "--config",
            &conf.display().to_string(),
            "--frontier",
            "opensearch",
            "--es-url",
            &gate.url(),
            "--es-index",
            &index,
            "--es-shards",
            "1",
            "--es-replicas",
            "0",
            "--max-duration",
            "120",
        ]
        .map(str::to_string),
    );
    args.extend(site_args(&site));
    let key = key.to_string();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(crawl_binary())
            .args(&args)
            .env("SQUALL_TEST_ES_API_KEY", key)
            .output()
    })
    .await
    .expect("join")
    .expect("run the crawl binary");
    support::opensearch::delete_index(&engine, &index).await;
    site.shutdown().await;
    (output, gate)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_through_tls_with_an_api_key_from_the_environment_never_printing_it() {
    let (output, gate) = crawl_through_a_tls_gate("crawler:right-secret-1f3a").await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("crawl stopped (Idle)"), "{stdout}");
    assert!(
        gate.forwarded_writes() > 0,
        "nothing was written through the gate"
    );
    assert_eq!(gate.refused(), 0);
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains("right-secret-1f3a"),
            "the key was printed: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_api_key_stops_the_crawl_at_once_and_writes_nothing() {
    let (output, gate) = crawl_through_a_tls_gate("crawler:wrong-secret-9c2e").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("HTTP 401"), "{stderr}");
    assert!(stderr.contains("refused the credentials"), "{stderr}");
    assert!(!stderr.contains("wrong-secret-9c2e"), "{stderr}");
    assert_eq!(gate.refused(), 1, "a refused key is not tried again");
    assert_eq!(gate.forwarded(), 0);
}

/// The content file on a full device (`/dev/full`: every write fails with ENOSPC): each page's URL
/// fails and stays due, the error names the file and the cause, and the crawl resumed with room
/// indexes every page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_content_file_loses_no_page() {
    let site = support::crawler::start_site(2, 4).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let frontier = dir.path().join("frontier");
    let fetch_log = dir.path().join("fetch.jsonl");
    let mut args = common_args(&frontier, &fetch_log);
    args.extend(set_args(&["indexer.kind=file", "indexer.file=/dev/full"]));
    args.extend(["--max-duration".to_string(), "8".to_string()]);
    args.extend(site_args(&site));
    let full = run_to_end(args).await;
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert!(
        stderr.contains("writing /dev/full: No space left on device"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&full.stdout);
    assert!(stdout.contains("they stay due"), "{stdout}");
    let seeds = site.seeds();
    {
        let stored = squall::frontier::EmbeddedFrontier::open(&frontier).expect("the frontier");
        for seed in &seeds {
            let status = stored.lookup(seed).expect("lookup").map(|s| s.status);
            assert_eq!(
                status,
                Some(squall::model::Status::Discovered),
                "{seed} is still due"
            );
        }
    }

    // Room again: the resumed crawl indexes every page, the seeds among them.
    let content = dir.path().join("content.jsonl");
    let mut args = common_args(&frontier, &fetch_log);
    args.extend(set_args(&[
        "indexer.kind=file",
        &format!("indexer.file={}", content.display()),
    ]));
    args.extend(site_args(&site));
    let resumed = run_to_end(args).await;
    assert!(resumed.status.success(), "{resumed:?}");
    let indexed = std::fs::read_to_string(&content).expect("the content file");
    for seed in &seeds {
        assert!(
            indexed.contains(&format!("\"url\":\"{seed}\"")),
            "{seed} not indexed"
        );
    }
    site.shutdown().await;
}
